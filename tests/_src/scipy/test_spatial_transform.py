"""didax.scipy.spatial.transform (Rotation, Slerp) against jax 0.10.2: every constructor and
conversion on single and stacked rotations in float32 and float64, all Euler sequences, the
errors, jit and vmap against eager, and gradients."""
import jax
import jax.numpy as jax_jnp
import numpy as np
import pytest
from jax.scipy.spatial.transform import Rotation as JaxRotation
from jax.scipy.spatial.transform import Slerp as JaxSlerp
from jax_testing import assert_same, both_x64

import didax
import didax.numpy as jnp
import didax.scipy.spatial
from didax._src.config import enable_x64
from didax.scipy.spatial.transform import Rotation, Slerp
from didax.test_util import check_grads

SEQS = ["xyz", "xzy", "yxz", "yzx", "zxy", "zyx", "xyx", "xzx", "yxy", "yzy", "zxz", "zyz"]
RNG = np.random.default_rng(0)
QUATS = RNG.standard_normal((6, 4))
VECS = RNG.standard_normal((6, 3))
ANGLES = RNG.uniform(-3, 3, (6, 3))


def _both(fn, *args, x64=False, tol=None):
    """`fn(Rotation, Slerp, *args)` under didax and under JAX: the same shapes, dtypes, weak
    types and values (within 1e-5, or 1e-12 with 64-bit types); `fn` may return a tuple.

    JAX's side runs under `jax.jit`: compiling one program is much faster than JAX's eager
    dispatch compiling each of its vectorized steps for each new shape."""
    with both_x64(x64):
        got = fn(Rotation, Slerp, *args)
        want = jax.jit(lambda: fn(JaxRotation, JaxSlerp, *args))()
        assert_same(got, want, tol or (1e-12 if x64 else 1e-5))
        got, want = got if isinstance(got, tuple) else (got,), \
            want if isinstance(want, tuple) else (want,)
        assert [g.weak_type for g in got] == [w.weak_type for w in want]


def _raises_like_jax(fn):
    """`fn(Rotation, Slerp)` raises under didax the exception type it raises under JAX."""
    with pytest.raises(Exception) as want:
        fn(JaxRotation, JaxSlerp)
    with pytest.raises(want.type) as got:
        fn(Rotation, Slerp)
    return str(got.value)


def _conversions(R, S, q, v, m):
    """Every constructor, and every conversion back, of quaternions `q`, vectors `v` and
    matrices `m`."""
    r = R.from_quat(q)
    out = (r.quat, R.from_quat(-q).quat, r.as_matrix(), r.as_rotvec(), r.as_rotvec(True),
           r.as_mrp(), r.magnitude(), r.inv().quat, R.from_matrix(m).quat,
           R.from_rotvec(v).quat, R.from_rotvec(60 * v, degrees=True).quat, R.from_mrp(v).quat)
    for canonical in (False, True):
        for first in (False, True):
            out += (R.from_quat(-q).as_quat(canonical, first),
                    r.as_quat(canonical=canonical, scalar_first=first))
    return out


@pytest.mark.parametrize("x64", [False, True])
def test_constructors_and_conversions(x64):
    dtype = np.float64 if x64 else np.float32
    q, v = QUATS.astype(dtype), VECS.astype(dtype)
    with both_x64(x64):
        m = np.asarray(JaxRotation.from_quat(q).as_matrix())
    _both(_conversions, q, v, m, x64=x64)  # stacked
    _both(_conversions, q[0], v[0], m[0], x64=x64)  # single


def test_small_angles_and_other_dtypes():
    """The series branches of the rotation-vector conversions, and integer, list, Python
    scalar and float16 inputs promoted as in JAX."""
    tiny = np.array([[1e-4, -2e-4, 3e-5], [0.0, 0.0, 0.0]], np.float32)

    def f(R, S):
        return (R.from_rotvec(tiny).quat, R.from_rotvec(tiny).as_rotvec(),
                R.from_rotvec([1, 2, 3]).quat,
                R.from_rotvec(np.array([10, 20, 30]), degrees=True).quat,
                R.from_quat([0, 0, 0, 1]).quat, R.from_matrix(np.eye(3, dtype=np.int32)).quat,
                R.from_mrp(np.array([0, 0, 1])).quat, R.from_euler("z", 90, degrees=True).quat,
                R.from_euler("X", 0.5).quat, R.from_euler("xy", np.array([1, 2])).quat,
                R.identity().quat, R.identity().apply(np.array([1, 2, 3])),
                R.identity(dtype=np.float16).as_mrp(), R.identity(dtype=np.float16).as_quat())
    _both(f)
    _both(lambda R, S: R.identity(dtype=np.float16).as_euler("zyz"), tol=1e-3)
    _both(lambda R, S: (R.identity(dtype=np.float64).quat,
                        R.from_quat(QUATS.astype(np.float32)).apply(VECS)), x64=True, tol=1e-6)


@pytest.mark.parametrize("upper", [False, True])
def test_euler_sequences(upper):
    """Each sequence to and from Euler angles, in radians or degrees (alternating, with both
    at once through an array of flags), on stacked rotations."""
    q, a = QUATS.astype(np.float32), ANGLES.astype(np.float32)

    def f(R, S):
        out, r = (), R.from_quat(q)
        for n, seq in enumerate(s.upper() if upper else s for s in SEQS):
            scale = 180 / np.pi if n % 2 else 1
            out += (R.from_euler(seq, a * scale, degrees=bool(n % 2)).quat,
                    r.as_euler(seq, degrees=not n % 2))
        return out
    _both(f, tol=1e-4)
    flags = np.array([[False], [True]])
    _both(lambda R, S: (R.from_quat(q).as_euler("zyx", flags),
                        R.from_euler("ZXZ", a * [[[1]], [[60]]], flags[:, :, None]).quat), tol=1e-4)


@pytest.mark.parametrize("x64", [False, True])
def test_euler_single_rotations(x64):
    dtype = np.float64 if x64 else np.float32
    q, a = QUATS[0].astype(dtype), ANGLES[0].astype(dtype)

    def f(R, S):
        return tuple(x for seq in ("xyz", "ZXY", "yxy", "ZYZ")
                     for x in (R.from_euler(seq, a).quat, R.from_quat(q).as_euler(seq, True))
                     ) + (R.from_euler("y", a[0]).quat,
                          R.from_euler("XZ", a[1:], degrees=True).quat)
    _both(f, x64=x64, tol=1e-4 if not x64 else None)


def test_euler_gimbal_lock():
    """Middle angles of exactly 0 or pi (for the symmetric sequences) and +-pi/2 (for the
    others) take the degenerate branches, as in JAX."""
    s = np.float32(np.sqrt(0.5))
    quats = np.array([[0, 0, 0, 1], [0, -s, 0, s], [0, s, 0, s], [1, 0, 0, 0], [s, 0, s, 0],
                      [0, 0, s, s]], np.float32)
    _both(lambda R, S: tuple(R.from_quat(quats).as_euler(seq, degrees=seq.isupper())
                             for seq in ("xyz", "XYZ", "zxz", "ZXZ", "yzy")), tol=1e-4)


def test_apply_compose_magnitude_and_mean():
    q, v = QUATS.astype(np.float32), VECS.astype(np.float32)

    def f(R, S):
        out = ()
        for inverse in (False, True):
            out += (R.from_quat(q).apply(v, inverse=inverse),  # a vector per rotation
                    R.from_quat(q).apply(v[0], inverse),  # one vector, many rotations
                    R.from_quat(q[0]).apply(v, inverse),  # many vectors, one rotation
                    R.from_quat(q[0]).apply(v[0], inverse))
        out += (R.from_quat(q[:, None]).apply(v[None, :]),  # batch axes broadcast
                R.from_quat(q).apply(v, inverse=np.arange(6) % 2 == 0),
                (R.from_quat(q) * R.from_quat(q[::-1])).quat,
                (R.from_quat(q[0]) * R.from_quat(q)).quat,
                (R.from_quat(q) * R.from_quat(q).inv()).magnitude(), R.from_quat(q).magnitude())
        for weights in (None, np.arange(1.0, 7.0), [1, 0, 0, 2, 0, 1]):
            # the mean's sign is an eigenvector's: compare the rotations, not the quaternions
            out += (R.from_quat(q).mean(weights).as_quat(canonical=True),
                    R.from_quat(q).mean(weights).as_matrix())
        return out
    _both(f)
    _both(lambda R, S: R.from_quat(QUATS).mean().as_matrix(), x64=True, tol=1e-10)


def test_concatenate_indexing_and_len():
    q = QUATS.astype(np.float32)

    def f(R, S):
        r = R.from_quat(q)
        out = (R.concatenate([R.from_quat(q[:2]), R.from_quat(q[2:])]).quat,
               R.concatenate([R.identity(), R.identity()]).quat)  # (8,), as in JAX
        return out + tuple(r[i].quat for i in (0, -1, slice(1, 4), np.array([3, 0, 3]),
                                               np.arange(6) % 2 == 0))
    _both(f)
    r, jr = Rotation.from_quat(q), JaxRotation.from_quat(q)
    assert len(r) == len(jr) == 6 and not r.single and r[2].single and Rotation.identity().single
    assert len(Rotation.from_quat(q.reshape(2, 3, 4))) == 2


def test_slerp():
    q = QUATS[:5].astype(np.float32)
    key_times = [0, 1, 3, 4, 6.5]

    def f(R, S):
        s = S.init(key_times, R.from_quat(q))
        out = (s.times, s.timedelta, s.rotations.quat, s.rotvecs,
               S.init(np.arange(2), R.from_quat(q[:2]))(np.linspace(0, 1, 6)).quat)
        for times in ([0, 0.5, 1, 2.2, 3, 6.5], [-1.0, 3.5, 4, 5, 6, 8.0], np.float32(2.5), 4):
            out += (s(times).quat,)
        return out
    _both(f)
    _both(lambda R, S: S.init(key_times, R.from_quat(QUATS[:5]))([0.3, 4.4]).quat, x64=True)


def test_errors_match_jax():
    """Given the raw constructors where the values do not matter (JAX's eager dispatch of
    each vectorized step is slow)."""
    q = QUATS.astype(np.float32)
    for seq in ("", "xyzx", "xxz", "xYz", "abc"):
        _raises_like_jax(lambda R, S, seq=seq: R.from_euler(seq, np.ones(max(len(seq), 1))))
    for seq in ("xy", "xYz", "xzz", "XYZX"):
        _raises_like_jax(lambda R, S, seq=seq: R.identity().as_euler(seq))
    _raises_like_jax(lambda R, S: R.from_euler("xyz", [1.0, 2.0, 3.0]))  # a list: TypeError
    msg = _raises_like_jax(lambda R, S: R.from_euler("z", np.ones(3)))
    assert "(3,)" in msg and "1 angle" in msg
    _raises_like_jax(lambda R, S: R.from_rotvec(1.0))
    _raises_like_jax(lambda R, S: R.from_matrix(np.ones(3)))
    _raises_like_jax(lambda R, S: R.from_matrix(np.ones((3, 4))))
    msg = _raises_like_jax(lambda R, S: R(q).apply(np.ones(2)))
    assert "(2,)" in msg
    msg = _raises_like_jax(lambda R, S: R(q).apply(np.ones((4, 3))))
    assert "(6,)" in msg and "(4,)" in msg
    _raises_like_jax(lambda R, S: R(q).apply(1.0))
    _raises_like_jax(lambda R, S: R(q) * R(q[:4]))
    _raises_like_jax(lambda R, S: R(q[:, :3]) * R(q[:, :3]))
    _raises_like_jax(lambda R, S: R(q[0, :3]).inv())
    _raises_like_jax(lambda R, S: R.identity()[0])
    _raises_like_jax(lambda R, S: len(R.identity()))
    _raises_like_jax(lambda R, S: R.identity().mean())
    _raises_like_jax(lambda R, S: R(q).mean(np.ones(3)))
    _raises_like_jax(lambda R, S: R(q).mean(np.ones((6, 1))))
    _raises_like_jax(lambda R, S: R.identity(3))
    _raises_like_jax(lambda R, S: R.random(didax.random.key(0), 3) if R is Rotation
                     else R.random(jax.random.key(0), 3))
    _raises_like_jax(lambda R, S: R.concatenate([R(q), R.identity()]))
    _raises_like_jax(lambda R, S: S.init([0, 1], R.identity()))
    _raises_like_jax(lambda R, S: S.init([0], R(q[:1])))
    _raises_like_jax(lambda R, S: S.init([0, 1, 2], R(q[:2])))
    _raises_like_jax(lambda R, S: S.init([[0, 1]], R(q[:2])))
    _raises_like_jax(lambda R, S: S.init([0, 1], q[:2]))
    t = np.arange(2, dtype=np.float32)
    _raises_like_jax(lambda R, S: S(t, t[1:], R(q[:1]), q[:1, :3])(np.ones((2, 2))))


def test_short_quaternions_and_matrices_read_clamped_like_jax():
    """Arrays too short to be quaternions or rotation matrices give what JAX's clamped
    gathers give."""
    q3, m2 = QUATS[:, :3].astype(np.float32), QUATS[:, :2, None].astype(np.float32) * [1, 2]
    _both(lambda R, S: (R.from_quat(q3).quat, R(q3).as_matrix(), R(q3).as_rotvec(),
                        R(q3).as_mrp(), R(q3).magnitude(), R(q3).as_euler("zxz"),
                        R(q3).as_quat(canonical=True), R.from_matrix(m2).quat,
                        R.from_rotvec(QUATS.astype(np.float32)).quat,
                        R.from_mrp(QUATS.astype(np.float32)).quat))


def test_classes_are_namedtuples_like_jax():
    public = [n for n in dir(JaxRotation) if not n.startswith("__")]
    assert [n for n in dir(Rotation) if not n.startswith("__")] == public
    assert [n for n in dir(Slerp) if not n.startswith("__")] == \
        [n for n in dir(JaxSlerp) if not n.startswith("__")]
    assert Rotation._fields == JaxRotation._fields and Slerp._fields == JaxSlerp._fields
    r = Rotation.from_quat(QUATS.astype(np.float32))
    leaves, tree = didax.tree_util.tree_flatten(Slerp.init(np.arange(6.0), r))
    assert len(leaves) == 4 and isinstance(didax.tree_util.tree_unflatten(tree, leaves), Slerp)
    assert didax.tree_util.tree_leaves(r)[0] is r.quat
    assert didax.scipy.spatial.transform.Rotation is Rotation


def test_jit_and_vmap_match_eager():
    q, v = jnp.asarray(QUATS, dtype=jnp.float32), jnp.asarray(VECS, dtype=jnp.float32)
    r = Rotation.from_quat(q)

    def conversions(r, v):
        return (r.as_matrix(), r.as_rotvec(degrees=True), r.as_mrp(), r.as_euler("ZXY"),
                r.magnitude(), r.apply(v, inverse=True), (r * r.inv()[::-1]).quat,
                Rotation.from_matrix(r.as_matrix()).quat, r.mean().as_quat(canonical=True))
    eager = conversions(r, v)
    for got, want in zip(didax.jit(conversions)(r, v), eager):
        assert_same(got, want, 1e-6)
    batched = didax.vmap(lambda q, v: (Rotation.from_quat(q).apply(v),
                                        Rotation.from_quat(q).as_euler("zyz"),
                                        Rotation.from_rotvec(v).quat))(q, v)
    assert_same(batched, (r.apply(v), r.as_euler("zyz"), Rotation.from_rotvec(v).quat), 1e-6)
    assert_same(didax.vmap(lambda r: r.as_matrix())(r), r.as_matrix())
    slerp, times = Slerp.init(jnp.arange(6.0), r), jnp.array([0.1, 2.5, 4.9])
    assert_same(didax.jit(lambda s, t: s(t).quat)(slerp, times), slerp(times).quat, 1e-6)
    assert_same(didax.vmap(lambda t: slerp(t).quat)(times), slerp(times).quat, 1e-6)
    assert_same(didax.jit(lambda a: Rotation.from_euler("xyz", a, degrees=True).quat)(v),
                Rotation.from_euler("xyz", v, degrees=True).quat, 1e-6)


def test_grads():
    with enable_x64(True):
        q, v = QUATS[:2], VECS[:2]
        check_grads(lambda v: Rotation.from_rotvec(v).as_matrix(), (v,), order=2,
                    modes=["fwd", "rev"])
        check_grads(lambda q, v: Rotation.from_quat(q).apply(v), (q, v), order=2,
                    modes=["fwd", "rev"])
        check_grads(lambda q, v: Rotation.from_quat(q).apply(v, inverse=True), (q[0], v),
                    order=1, modes=["fwd", "rev"])
        check_grads(lambda a: Rotation.from_euler("ZYZ", a).as_euler("xyz"), (ANGLES[:2],),
                    order=1, modes=["fwd", "rev"])
    with both_x64(True):
        def f(R, jnp_):
            return lambda v: jnp_.sum(R.from_rotvec(v).as_mrp() ** 2)
        assert_same(didax.grad(f(Rotation, jnp))(v),
                    jax.jit(jax.grad(f(JaxRotation, jax_jnp)))(v), 1e-10)
