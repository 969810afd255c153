"""didax.numpy products and einsum: values against NumPy on hypothesis-drawn shapes (batch
broadcasting, vectors, empty dimensions) in float32 and float64 modes, result dtypes against
JAX (tables produced by running JAX 0.10.2), the jaxprs they stage, errors and derivatives.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import didax as jax
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

SETTINGS = settings(max_examples=20, deadline=None)

# --------------------------------------------------------------------------------------
# Result dtypes as JAX gives them, for each pair of PAIRS ("-": not applicable); no result
# is weakly typed, except products of Python scalars (tested below).

DTYPES = {"f32": np.float32, "f16": np.float16, "i8": np.int8, "u8": np.uint8,
          "i32": np.int32, "b": bool, "c64": np.complex64}
PAIRS = [("f32", "f32"), ("i8", "i8"), ("i8", "u8"), ("i8", "f32"), ("b", "b"), ("b", "i32"),
         ("f16", "f32"), ("c64", "f32"), ("i32", "py_int"), ("f32", "py_float")]
SHAPES = {"dot": ((2, 3), (3,)), "vdot": ((3,), (3,)), "inner": ((2, 3), (3,)),
          "outer": ((2,), (3,)), "matmul": ((2, 3), (3, 2)), "tensordot": ((2, 3), (3, 2)),
          "kron": ((2,), (3,)), "cross": ((3,), (3,)), "vecdot": ((3,), (3,)),
          "matvec": ((2, 3), (3,)), "vecmat": ((3,), (3, 2)), "einsum": ((2, 3), (3,))}
JAX_DTYPES = {
    'dot': 'float32 int8 int16 float32 bool int32 float32 complex64 int32 float32',
    'vdot': 'float32 int8 int16 float32 bool int32 float32 complex64 TypeError TypeError',
    'inner': 'float32 int8 int16 float32 bool int32 float32 complex64 int32 float32',
    'outer': 'float32 int8 int16 float32 bool int32 float32 complex64 int32 float32',
    'matmul': 'float32 int8 int16 float32 bool int32 float32 complex64 - -',
    'tensordot': 'float32 int8 int16 float32 bool int32 float32 complex64 - -',
    'kron': 'float32 int8 int16 float32 TypeError int32 float32 complex64 int32 float32',
    'cross': 'float32 int8 int16 float32 TypeError int32 float32 complex64 - -',
    'vecdot': 'float32 int8 int16 float32 bool int32 float32 complex64 - -',
    'matvec': 'float32 int8 int16 float32 bool int32 float32 complex64 - -',
    'vecmat': 'float32 int8 int16 float32 bool int32 float32 complex64 - -',
    'einsum': 'float32 int8 int16 float32 bool int32 float32 complex64 - -',
}
# preferred_element_type=: (function, preferred, input dtype) -> JAX's result dtype.
JAX_PREFERRED = {
    ("matmul", "int32", "i8"): "int32", ("matmul", "int32", "b"): "int32",
    ("matmul", "float32", "i8"): "float32", ("matmul", "float32", "f16"): "float32",
    ("dot", "int32", "i8"): "int32", ("dot", "int32", "b"): "int32",
    ("dot", "float32", "i8"): "float32", ("dot", "float32", "f16"): "float32",
    ("einsum", "int32", "i8"): "int32", ("einsum", "int32", "b"): "int32",
    ("einsum", "float32", "i8"): "float32", ("einsum", "float32", "f16"): "float32",
    ("tensordot", "int32", "i8"): "int32", ("tensordot", "int32", "b"): "int32",
    ("tensordot", "float32", "i8"): "float32", ("tensordot", "float32", "f16"): "float32",
}


def _operand(kind, shape):
    if kind.startswith("py"):
        return 2 if kind == "py_int" else 2.0
    return np.ones(shape, DTYPES[kind])


def _call(name, a, b, **kwargs):
    if name == "einsum":
        return jnp.einsum("ij,j->i" if np.ndim(b) == 1 else "ij,jk->ik", a, b, **kwargs)
    if name == "tensordot":
        return jnp.tensordot(a, b, 1, **kwargs)
    return getattr(jnp, name)(a, b, **kwargs)


@pytest.mark.parametrize("name", list(JAX_DTYPES))
def test_dtypes_match_jax(name):
    got = []
    for (ka, kb), expected in zip(PAIRS, JAX_DTYPES[name].split()):
        if expected == "-":
            got.append("-")
            continue
        try:
            out = _call(name, _operand(ka, SHAPES[name][0]), _operand(kb, SHAPES[name][1]))
            assert not out.weak_type
            got.append(str(out.dtype))
        except TypeError as e:
            got.append(type(e).__name__)
    assert " ".join(got) == JAX_DTYPES[name]


@pytest.mark.parametrize("key", list(JAX_PREFERRED))
def test_preferred_element_type_matches_jax(key):
    name, preferred, kind = key
    out = _call(name, np.ones((2, 3), DTYPES[kind]), np.ones((3, 2), DTYPES[kind]),
                preferred_element_type=preferred)
    assert str(out.dtype) == JAX_PREFERRED[key] and not out.weak_type


@pytest.mark.parametrize("name, fn", [
    ("dot", lambda: jnp.dot(2.0, 3.0)), ("inner", lambda: jnp.inner(2.0, 3)),
    ("outer", lambda: jnp.outer(2.0, 3.0)), ("kron", lambda: jnp.kron(2, 3)),
    ("tensordot", lambda: jnp.tensordot(2.0, 3.0, 0)), ("vdot", lambda: jnp.vdot(2.0, 3.0)),
    ("einsum", lambda: jnp.einsum(",", 2.0, 3.0)),
])
def test_products_of_python_scalars_are_weak(name, fn):
    out = fn()
    assert out.weak_type and out.dtype == (np.int32 if name == "kron" else np.float32)
    assert float(np.asarray(out).ravel()[0]) == 6.0


def test_integer_products_stay_integer():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = jnp.matmul(a, a.T)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, a @ a.T)
    big = np.full((2, 2), 100, np.int8)
    assert jnp.matmul(big, big).dtype == np.int8
    np.testing.assert_array_equal(jnp.matmul(big, big, preferred_element_type=np.int32),
                                  [[20000, 20000]] * 2)


# --------------------------------------------------------------------------------------
# Values against NumPy


def _data(seed, shape, x64, complex_=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
        return x.astype(np.complex128 if x64 else np.complex64)
    return x.astype(np.float64 if x64 else np.float32)


def _close(got, expected, x64):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape
    tol = 1e-10 if x64 else 1e-4
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


@st.composite
def batch_dims(draw, batch):
    """A suffix of `batch` with some dimensions replaced by 1 (NumPy broadcasting)."""
    k = draw(st.integers(0, len(batch)))
    return tuple(1 if draw(st.booleans()) else d for d in batch[len(batch) - k:])


@st.composite
def matmul_shapes(draw):
    n, k, m = (draw(st.integers(0, 3)) for _ in range(3))
    batch = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    a = (k,) if draw(st.booleans()) else draw(batch_dims(batch)) + (n, k)
    b = (k,) if draw(st.booleans()) else draw(batch_dims(batch)) + (k, m)
    return a, b


@SETTINGS
@given(shapes=matmul_shapes(), seed=st.integers(0, 2 ** 31), x64=st.booleans())
def test_matmul_matches_numpy(shapes, seed, x64):
    a, b = _data(seed, shapes[0], x64), _data(seed + 1, shapes[1], x64)
    with enable_x64(x64):
        got = jnp.matmul(a, b)
        _close(got, np.matmul(a, b), x64)
        _close(a @ jnp.asarray(b), np.matmul(a, b), x64)


@st.composite
def dot_shapes(draw):
    a = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    b = list(draw(st.lists(st.integers(0, 3), max_size=3)))
    if a and b:
        b[-2 if len(b) > 1 else 0] = a[-1]
    return a, tuple(b)


@SETTINGS
@given(shapes=dot_shapes(), seed=st.integers(0, 2 ** 31), x64=st.booleans())
def test_dot_inner_match_numpy(shapes, seed, x64):
    a, b = _data(seed, shapes[0], x64), _data(seed + 1, shapes[1], x64)
    with enable_x64(x64):
        _close(jnp.dot(a, b), np.dot(a, b), x64)
        if not a.shape or not b.shape or a.shape[-1] == b.shape[-1]:
            _close(jnp.inner(a, b), np.inner(a, b), x64)


@SETTINGS
@given(shape=st.lists(st.integers(0, 3), max_size=3), seed=st.integers(0, 2 ** 31),
       x64=st.booleans())
def test_vdot_outer_kron_match_numpy(shape, seed, x64):
    a = _data(seed, tuple(shape), x64, complex_=True)
    b = _data(seed + 1, tuple(shape), x64, complex_=True)
    c = _data(seed + 2, tuple(shape[::-1])[:2], x64)
    with enable_x64(x64):
        _close(jnp.vdot(a, b), np.vdot(a, b), x64)
        _close(jnp.outer(a, c), np.outer(a, c), x64)
        _close(jnp.kron(a, c), np.kron(a, c), x64)


@st.composite
def tensordot_case(draw):
    a = tuple(draw(st.lists(st.integers(0, 3), max_size=4)))
    if draw(st.booleans()):  # axes=n: a's last n dimensions are b's first n
        n = draw(st.integers(0, len(a)))
        b = a[len(a) - n:] + tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
        return a, b, n
    a_axes = draw(st.permutations(range(len(a))))[:draw(st.integers(0, len(a)))]
    extra = draw(st.lists(st.integers(0, 3), max_size=2))
    b = list(extra) + [a[i] for i in a_axes]
    order = draw(st.permutations(range(len(b))))
    b_shape = tuple(b[i] for i in order)
    b_axes = [order.index(len(extra) + j) for j in range(len(a_axes))]
    return a, b_shape, (list(a_axes), [x - len(b) if draw(st.booleans()) else x
                                       for x in b_axes])


@SETTINGS
@given(case=tensordot_case(), seed=st.integers(0, 2 ** 31), x64=st.booleans())
def test_tensordot_matches_numpy(case, seed, x64):
    a_shape, b_shape, axes = case
    a, b = _data(seed, a_shape, x64), _data(seed + 1, b_shape, x64)
    with enable_x64(x64):
        _close(jnp.tensordot(a, b, axes), np.tensordot(a, b, axes), x64)


def _cross_of_3_vectors(a, b, axisa, axisb, axisc):
    """np.cross as every NumPy 2 computes it: a 2-vector is a 3-vector with z = 0 (NumPy 2.5
    refuses 2-vectors; earlier versions deprecate them), and two of them cross to z alone."""
    a, b = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
    both_planar = a.shape[-1] == b.shape[-1] == 2

    def spatial(v):
        return v if v.shape[-1] == 3 else np.concatenate([v, np.zeros_like(v[..., :1])], -1)

    c = np.cross(spatial(a), spatial(b))
    return c[..., 2] if both_planar else np.moveaxis(c, -1, axisc)


@SETTINGS
@given(batch=st.lists(st.integers(1, 3), max_size=2), na=st.sampled_from([2, 3]),
       nb=st.sampled_from([2, 3]), axisa=st.integers(-1, 0), axisb=st.integers(-1, 0),
       axisc=st.integers(-1, 0), seed=st.integers(0, 2 ** 31), x64=st.booleans())
def test_cross_matches_numpy(batch, na, nb, axisa, axisb, axisc, seed, x64):
    a_shape, b_shape = list(batch), list(batch[1:])
    a_shape.insert(axisa % (len(a_shape) + 1), na)
    b_shape.insert(axisb % (len(b_shape) + 1), nb)
    a, b = _data(seed, tuple(a_shape), x64), _data(seed + 1, tuple(b_shape), x64)
    expected = _cross_of_3_vectors(a, b, axisa, axisb, axisc)
    with enable_x64(x64):
        _close(jnp.cross(a, b, axisa=axisa, axisb=axisb, axisc=axisc), expected, x64)


@SETTINGS
@given(batch=st.lists(st.integers(0, 3), max_size=3), n=st.integers(0, 3), m=st.integers(0, 3),
       seed=st.integers(0, 2 ** 31), data=st.data(), x64=st.booleans())
def test_vecdot_matvec_vecmat_match_numpy(batch, n, m, seed, data, x64):
    b1, b2 = data.draw(batch_dims(tuple(batch))), data.draw(batch_dims(tuple(batch)))
    x = _data(seed, b1 + (n,), x64, complex_=True)
    y = _data(seed + 1, b2 + (n,), x64, complex_=True)
    mat = _data(seed + 2, b2 + (m, n), x64, complex_=True)
    mat_t = _data(seed + 3, b2 + (n, m), x64, complex_=True)
    axis = data.draw(st.integers(-1, 0)) if b1 and b2 and b1[0] == b2[0] else -1
    xs, ys = np.moveaxis(x, -1, axis), np.moveaxis(y, -1, axis)
    with enable_x64(x64):
        _close(jnp.vecdot(xs, ys, axis=axis), np.vecdot(xs, ys, axis=axis), x64)
        # (NumPy's matvec and vecmat, in terms NumPy 2.0 has: they came in 2.2)
        _close(jnp.matvec(mat, x), (mat @ x[..., None])[..., 0], x64)
        _close(jnp.vecmat(x, mat_t), (np.conj(x)[..., None, :] @ mat_t)[..., 0, :], x64)


# --------------------------------------------------------------------------------------
# What gets staged


def _equations(jaxpr):
    return [line.split("=", 1)[1].split("[")[0].split()[0]
            for line in str(jaxpr).splitlines() if " = " in line and ":" in line.split("=")[0]]


def test_matmul_of_matrices_is_one_dot_general():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    for fn in (jnp.matmul, jnp.dot, lambda x, y: x @ y,
               lambda x, y: jnp.einsum("ij,jk->ik", x, y),
               lambda x, y: jnp.tensordot(x, y, 1)):
        jaxpr = jax.make_jaxpr(fn)(a, b)
        assert _equations(jaxpr) == ["dot_general"], str(jaxpr)
        assert "dimension_numbers=(([1], [0]), ([], []))" in str(jaxpr)
        assert "preferred_element_type=float32" in str(jaxpr)


def test_matmul_batch_broadcast_jaxpr_matches_jax():
    # JAX: squeeze the size-1 batch dimension, one dot_general, one transpose.
    jaxpr = jax.make_jaxpr(jnp.matmul)(np.ones((5, 1, 2, 3), np.float32),
                                       np.ones((4, 3, 2), np.float32))
    assert _equations(jaxpr) == ["squeeze", "dot_general", "transpose"]
    assert "permutation=(0, 2, 1, 3)" in str(jaxpr) and "f32[5,4,2,2]" in str(jaxpr)


def test_mixed_dtypes_are_not_converted():
    jaxpr = jax.make_jaxpr(jnp.matmul)(np.ones((2, 3), np.int8), np.ones((3, 4), np.float32))
    assert _equations(jaxpr) == ["dot_general"]
    assert "f32[2,4]" in str(jaxpr)


def test_einsum_diagonal_and_transposes():
    jaxpr = jax.make_jaxpr(lambda x: jnp.einsum("ii->i", x))(np.ones((3, 3), np.float32))
    assert _equations(jaxpr)[-2:] == ["select_n", "reduce_sum"]
    jaxpr = jax.make_jaxpr(lambda x, y: jnp.einsum("bij,bkj->bki", x, y))(
        np.ones((5, 2, 3), np.float32), np.ones((5, 4, 3), np.float32))
    assert _equations(jaxpr) == ["dot_general"]  # operands swapped rather than a transpose


PRODUCT_FNS = {
    "dot": (jnp.dot, ((3, 4), (4, 2))),
    "matmul": (jnp.matmul, ((2, 1, 3, 4), (5, 4, 2))),
    "vdot": (jnp.vdot, ((3, 4), (4, 3))),
    "inner": (jnp.inner, ((3, 4), (2, 4))),
    "outer": (jnp.outer, ((3,), (2, 2))),
    "tensordot": (lambda a, b: jnp.tensordot(a, b, ((0, 2), (2, 0))), ((2, 3, 4), (4, 3, 2))),
    "kron": (jnp.kron, ((2, 3), (3,))),
    "cross": (lambda a, b: jnp.cross(a, b, axisa=0), ((3, 4), (4, 3))),
    "vecdot": (jnp.vecdot, ((3, 4), (4,))),
    "matvec": (jnp.matvec, ((2, 3, 4), (4,))),
    "vecmat": (jnp.vecmat, ((3,), (2, 3, 4))),
    "einsum": (lambda a, b: jnp.einsum("ij,jk,kl->il", a, b, a.T), ((3, 4), (4, 4))),
    "einsum_trace": (lambda a, b: jnp.einsum("ii,ij->j", a, b), ((3, 3), (3, 2))),
}


@pytest.mark.parametrize("name", list(PRODUCT_FNS))
def test_grads(name):
    fn, shapes = PRODUCT_FNS[name]
    with enable_x64():
        args = tuple(_data(i, s, True) for i, s in enumerate(shapes))
        check_grads(fn, args, order=2, modes=("fwd", "rev"))


def test_matmul_pullback_sums_over_broadcast_batch_dimensions():
    a, b = _data(0, (2, 1, 3, 4), True), _data(1, (5, 4, 2), True)
    ct = _data(2, (2, 5, 3, 2), True)
    with enable_x64():
        _, pullback = jax.vjp(jnp.matmul, a, b)
        a_ct, b_ct = pullback(ct)
    np.testing.assert_allclose(np.asarray(a_ct), np.einsum("xyij,ykj->xik", ct, b)[:, None],
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(b_ct), np.einsum("xyij,xik->ykj", ct, a[:, 0]),
                               rtol=1e-12)


@pytest.mark.parametrize("name", list(PRODUCT_FNS))
def test_make_jaxpr_matches_eager(name):
    fn, shapes = PRODUCT_FNS[name]
    args = tuple(_data(i, s, False) for i, s in enumerate(shapes))
    _, shape = jax.make_jaxpr(fn, return_shape=True)(*args)
    eager = fn(*args)
    assert (shape.shape, shape.dtype) == (eager.shape, eager.dtype)


# --------------------------------------------------------------------------------------
# einsum


EINSUM_CASES = [
    ("ij,jk->ik", (2, 3), (3, 4)), ("ij,jk", (2, 3), (3, 4)), ("ii->i", (3, 3)),
    ("ii", (3, 3)), ("iij->ji", (3, 3, 2)), ("iii->i", (2, 2, 2)), ("i,i", (3,), (3,)),
    ("i,j", (2,), (3,)), ("bij,bjk->bik", (5, 2, 3), (5, 3, 4)),
    ("...ij,...jk->...ik", (5, 2, 3), (3, 4)), ("...i,...i", (2, 1, 3), (4, 3)),
    ("i...->...", (2, 3, 1)), ("ij,jk,kl->il", (2, 3), (3, 4), (4, 5)),
    ("i,i->i", (1,), (3,)), ("ijk,kji->", (2, 3, 4), (4, 3, 2)), ("ij->", (2, 3)),
    ("ab,cd,ef->abcdef", (2, 2), (3, 1), (1, 2)), ("ij->ji", (2, 3)), ("ba", (2, 3)),
    ("Ba,aC", (2, 3), (3, 2)), ("ij,ij->ij", (2, 3), (2, 3)), ("ii,ij->j", (3, 3), (3, 2)),
    ("i,ii->i", (3,), (3, 3)), ("ijk,ikl,jl->lk", (2, 3, 4), (2, 4, 5), (3, 5)),
    ("ij,jk->ik", (0, 3), (3, 2)), ("ij,jk->ik", (2, 0), (0, 2)), (",", (), ()),
    ("i,,j->ij", (2,), (), (3,)), ("a,b,c,d->", (2,), (3,), (2,), (1,)),
]


@pytest.mark.parametrize("case", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
@pytest.mark.parametrize("optimize", ["auto", False, "optimal"])
def test_einsum_matches_numpy(case, optimize):
    spec, *shapes = case
    for x64 in (False, True):
        ops = [_data(i, s, x64) for i, s in enumerate(shapes)]
        with enable_x64(x64):
            _close(jnp.einsum(spec, *ops, optimize=optimize), np.einsum(spec, *ops), x64)


def test_einsum_sums_ellipsis_dims_missing_from_the_output():  # as JAX; NumPy refuses
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(jnp.einsum("...i->i", x), x.sum(0))


def test_einsum_sublist_form_and_explicit_path():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(3.0)
    np.testing.assert_allclose(jnp.einsum(a, [0, 1], b, [1], [0]), a @ b)
    np.testing.assert_allclose(jnp.einsum(a, [Ellipsis, 1], b, [1]), a @ b)
    c = np.ones((4, 5))
    x, y = np.ones((3, 4)), np.ones((2, 3))
    for path in (["einsum_path", (1, 2), (0, 1)], [(0, 1), (0, 1)]):
        np.testing.assert_allclose(jnp.einsum("ij,jk,kl->il", y, x, c, optimize=path),
                                   y @ x @ c)


def test_einsum_dtypes():
    i8, f32 = np.ones(3, np.int8), np.ones(3, np.float32)
    assert jnp.einsum("i,i", i8, f32).dtype == np.float32
    assert jnp.einsum("i,i", i8, i8).dtype == np.int8
    assert jnp.einsum("ij->", np.ones((2, 3), bool)).dtype == np.bool_
    assert jnp.einsum("i,i", i8, i8, preferred_element_type=np.int32).dtype == np.int32


def test_einsum_path():
    shapes = [(2, 3), (3, 4), (4, 5)]
    path, info = jnp.einsum_path("ij,jk,kl->il", *[np.ones(s) for s in shapes])
    expected = np.einsum_path("ij,jk,kl->il", *[np.ones(s) for s in shapes], optimize="greedy")
    assert path == expected[0] and isinstance(info, str) and "ij,jk,kl->il" in info
    path, _ = jnp.einsum_path("ij,jk,kl->il", *[np.ones(s) for s in shapes], optimize=False)
    assert path == ["einsum_path", (0, 1), (0, 1)]
    assert jnp.einsum_path("...i,...i", np.ones((2, 3)), np.ones(3))[0] == ["einsum_path", (0, 1)]


@pytest.mark.parametrize("call, error, match", [
    (lambda: jnp.einsum("ij,jk", np.ones((2, 3)), np.ones((4, 4))), ValueError,
     "Size of label 'j'"),
    (lambda: jnp.einsum("ii", np.ones((3, 4))), ValueError, "Size of label 'i'"),
    (lambda: jnp.einsum("ij->ii", np.ones((2, 3))), ValueError, "more than once"),
    (lambda: jnp.einsum("ij->k", np.ones((2, 3))), ValueError, "did not appear"),
    (lambda: jnp.einsum("i", np.ones((2, 3))), ValueError, "correct number of indices"),
    (lambda: jnp.einsum("i,i", np.ones(2)), ValueError, "operand subscripts"),
    (lambda: jnp.einsum("i$", np.ones((2, 3))), ValueError, "invalid subscript"),
    (lambda: jnp.einsum("ij", np.ones((2, 3)), out=np.ones(2)), NotImplementedError, "'out'"),
])
def test_einsum_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --------------------------------------------------------------------------------------
# Other errors


@pytest.mark.parametrize("call, error, match", [
    (lambda: jnp.matmul(np.ones(()), np.ones(3)), ValueError, "ndim at least 1"),
    (lambda: jnp.matmul(np.ones((2, 3, 4)), np.ones((3, 4, 5))), ValueError,
     "Incompatible shapes for matmul"),
    (lambda: jnp.matmul(np.ones((2, 3)), np.ones((4, 5))), TypeError, "contracting"),
    (lambda: jnp.dot(np.ones((2, 3)), np.ones((4, 5))), TypeError, "contracting"),
    (lambda: jnp.cross(np.ones(4), np.ones(3)), ValueError, "either 2 or 3"),
    (lambda: jnp.tensordot(np.ones((2, 3)), np.ones(3), 3), TypeError, "exceeds input ranks"),
    (lambda: jnp.tensordot(np.ones((2, 3)), np.ones(3), ((0, 1), (0,))), TypeError,
     "equal length"),
    (lambda: jnp.tensordot(np.ones((2, 3)), np.ones(3), "x"), TypeError, "axes argument"),
    (lambda: jnp.vecdot(np.ones((2, 3)), np.ones((2, 4))), ValueError, "axes must match"),
    (lambda: jnp.matvec(np.ones(3), np.ones(3)), ValueError, "at least 2 dimensions"),
    (lambda: jnp.matmul([1, 2], np.ones(2)), TypeError, "requires ndarray or scalar"),
    (lambda: jnp.outer(np.ones(2), np.ones(2), out=np.ones((2, 2))), NotImplementedError,
     "'out'"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
