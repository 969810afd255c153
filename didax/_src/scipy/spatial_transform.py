"""didax.scipy.spatial.transform: 3-D rotations (`Rotation`, `Slerp`), as JAX's port of SciPy's.

NamedTuples as in JAX, so they are pytrees that `jit`, `vmap` and `grad` pass through. Each
conversion works on the trailing axis of stacked scalar-last quaternions and broadcasts the
leading ones, as JAX's vectorized helpers do.
"""
from __future__ import annotations

import re
import typing
from typing import Any

import numpy as np

from didax._src.numpy import linalg as jnp_linalg
from didax._src.numpy import namespace as jnp

__all__ = ["Rotation", "Slerp"]

_SMALL_ANGLE = 1e-3  # below it, the series expansions replace sin(x)/x and its inverse
_GIMBAL_EPS = 1e-7  # how near 0 or pi the middle Euler angle counts as gimbal lock


# ---------------------------------------------------------------------------------------------
# Argument checks and small helpers.


def _core(x, ndim: int, what: str):
    """`x` as an array with at least the `ndim` core dimensions a conversion reads."""
    x = jnp.asarray(x)
    if x.ndim < ndim:
        raise ValueError(f"{what} with shape {tuple(x.shape)} has fewer than the {ndim} "
                         f"trailing dimension(s) it needs; stack values along leading axes")
    return x


def _at(x, *index):
    """`x[..., *index]`, each index clamped to its axis as JAX clamps out-of-range gathers
    (which only arrays too short to be quaternions or rotation matrices reach)."""
    axes = x.shape[x.ndim - len(index):]
    return x[(Ellipsis,) + tuple(min(i, n - 1) for i, n in zip(index, axes))]


def _components(quat):
    """The components x, y, z and w of the quaternions on the last axis of `quat`."""
    quat = _core(quat, 1, "quaternion")
    return quat, [_at(quat, n) for n in range(4)]


def _batch_shape(what: str, *shapes) -> tuple:
    """The broadcast of the leading (batch) shapes, or a ValueError naming them."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"{what}: the leading (batch) shapes {list(shapes)} do not broadcast "
                         "together; give one rotation, or as many as there are values") from None


def _flag(flag, core_ndim: int):
    """A per-rotation flag (`degrees`, `inverse`) as an array broadcasting over `core_ndim`
    trailing core axes, as a scalar core argument of a vectorized function does."""
    flag = jnp.asarray(flag)
    return flag.reshape(flag.shape + (1,) * core_ndim)


def _norm(v):
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _axis_index(axis: str) -> int:
    try:
        return "xyz".index(axis)
    except ValueError:
        raise ValueError(f"Expected axis to be from ['x', 'y', 'z'], got {axis}") from None


def _check_seq(seq: str) -> bool:
    """Whether the validated Euler sequence `seq` is extrinsic (lower case)."""
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError("Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'], got {seq} (lower case for extrinsic rotations, "
                         "upper case for intrinsic ones; do not mix them)")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return extrinsic


# ---------------------------------------------------------------------------------------------
# Conversions on stacked arrays: quaternions on the last axis.


def _normalize(quat):
    quat = _core(quat, 1, "quaternion")
    return quat / _norm(quat)[..., None]


def _compose(p, q):
    """The Hamilton product p * q (apply q, then p)."""
    (p, (px, py, pz, pw)), (q, (qx, qy, qz, qw)) = _components(p), _components(q)
    if p.shape[-1] != 4 or q.shape[-1] != 4:
        raise ValueError(f"composing rotations with quaternions of shapes {tuple(p.shape)} and "
                         f"{tuple(q.shape)}: each needs 4 components (x, y, z, w) on its last "
                         "axis")
    _batch_shape("composing rotations", p.shape[:-1], q.shape[:-1])
    c = jnp.cross(p[..., :3], q[..., :3])
    return jnp.stack([pw * qx + qw * px + c[..., 0],
                      pw * qy + qw * py + c[..., 1],
                      pw * qz + qw * pz + c[..., 2],
                      pw * qw - px * qx - py * qy - pz * qz], axis=-1)


def _inv(quat):
    quat = _core(quat, 1, "quaternion")
    return quat * jnp.array([-1, -1, -1, 1], dtype=quat.dtype)


def _as_matrix(quat):
    quat, (x, y, z, w) = _components(quat)
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    entries = [+ x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw),
               2 * (xy + zw), - x2 + y2 - z2 + w2, 2 * (yz - xw),
               2 * (xz - yw), 2 * (yz + xw), - x2 - y2 + z2 + w2]
    return jnp.stack(entries, axis=-1).reshape(quat.shape[:-1] + (3, 3))


def _from_matrix(matrix):
    matrix = _core(matrix, 2, "rotation matrix")
    if matrix.shape[-1] != matrix.shape[-2] or matrix.shape[-1] == 0:
        raise ValueError(f"rotation matrix with shape {tuple(matrix.shape)}: expected 3x3 "
                         "matrices on the last two axes")
    m = [[_at(matrix, r, c) for c in range(3)] for r in range(3)]
    trace = m[0][0] + m[1][1] + m[2][2]
    choice = jnp.argmax(jnp.stack([m[0][0], m[1][1], m[2][2], trace], axis=-1), axis=-1)
    # Shepperd's method: build the quaternion from its largest component, for stability.
    quat = jnp.stack([m[2][1] - m[1][2], m[0][2] - m[2][0], m[1][0] - m[0][1], 1 + trace],
                     axis=-1)
    for i in (2, 1, 0):
        j, k = (i + 1) % 3, (i + 2) % 3
        comps = [None] * 4
        comps[i] = 1 - trace + 2 * m[i][i]
        comps[j] = m[j][i] + m[i][j]
        comps[k] = m[k][i] + m[i][k]
        comps[3] = m[k][j] - m[j][k]
        quat = jnp.where((choice == i)[..., None], jnp.stack(comps, axis=-1), quat)
    return _normalize(quat)


def _from_rotvec(rotvec, degrees):
    rotvec = _core(rotvec, 1, "rotation vector")
    rotvec = jnp.where(_flag(degrees, 1), jnp.deg2rad(rotvec), rotvec)
    angle = _norm(rotvec)
    angle2 = angle * angle
    small_scale = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    large_scale = jnp.sin(angle / 2) / angle
    scale = jnp.where(angle <= _SMALL_ANGLE, small_scale, large_scale)
    return jnp.concatenate([scale[..., None] * rotvec, jnp.cos(angle / 2)[..., None]], axis=-1)


def _as_rotvec(quat, degrees):
    quat, (_, _, _, w) = _components(quat)
    quat = jnp.where((w < 0)[..., None], -quat, quat)  # w >= 0: angle in [0, pi]
    angle = 2. * jnp.arctan2(_norm(quat[..., :3]), _at(quat, 3))
    angle2 = angle * angle
    small_scale = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    large_scale = angle / jnp.sin(angle / 2)
    scale = jnp.where(angle <= _SMALL_ANGLE, small_scale, large_scale)
    scale = jnp.where(_flag(degrees, 0), jnp.rad2deg(scale), scale)
    return scale[..., None] * quat[..., :3]


def _from_mrp(mrp):
    mrp = _core(mrp, 1, "modified Rodrigues parameters")
    squared_plus_1 = jnp.sum(mrp * mrp, axis=-1)[..., None] + 1
    return jnp.concatenate([2 * mrp[..., :3], 2 - squared_plus_1], axis=-1) / squared_plus_1


def _as_mrp(quat):
    quat, (_, _, _, w) = _components(quat)
    sign = jnp.where(w < 0, -1., 1.)  # the parameters of the shorter rotation
    denominator = 1. + sign * w
    return sign[..., None] * quat[..., :3] / denominator[..., None]


def _magnitude(quat):
    quat, (_, _, _, w) = _components(quat)
    return 2. * jnp.arctan2(_norm(quat[..., :3]), jnp.abs(w))


def _canonical(quat):
    """`quat` or `-quat`, whichever has w > 0 (or, w being 0, the first nonzero x, y, z > 0)."""
    quat, (x, y, z, w) = _components(quat)
    flip = ((w < 0)
            | ((w == 0) & (x < 0))
            | ((w == 0) & (x == 0) & (y < 0))
            | ((w == 0) & (x == 0) & (y == 0) & (z < 0)))
    return jnp.where(flip[..., None], -quat, quat)


def _elementary_quat(axis: int, angle):
    """The rotation by `angle` about the basis axis `axis`."""
    zero = jnp.zeros(angle.shape, dtype=angle.dtype)  # not weakly typed, as in JAX
    comps = [zero, zero, zero, jnp.cos(angle / 2.)]
    comps[axis] = jnp.sin(angle / 2.)
    return jnp.stack(comps, axis=-1)


def _from_euler(angles, axes, intrinsic: bool, degrees):
    if angles.shape[-1] != len(axes):
        raise ValueError(f"Euler angles with shape {tuple(angles.shape)} for the sequence of "
                         f"{len(axes)} axes: the last axis must hold {len(axes)} angle(s), "
                         "one per axis of the sequence")
    angles = jnp.where(_flag(degrees, 1), jnp.deg2rad(angles), angles)
    result = _elementary_quat(axes[0], angles[..., 0])
    for n in range(1, len(axes)):
        quat = _elementary_quat(axes[n], angles[..., n])
        result = _compose(result, quat) if intrinsic else _compose(quat, result)
    return result


def _as_euler(quat, axes, extrinsic: bool, degrees):
    """The Euler angles of `quat` (Bernardes and Viollet's direct method, as SciPy and JAX)."""
    quat, q = _components(quat)
    first, third = (0, 2) if extrinsic else (2, 0)
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2  # +1 for an even permutation, -1 for odd
    if symmetric:
        a, b, c, d = q[3], q[i], q[j], q[k] * sign
    else:
        a, b, c, d = q[3] - q[j], q[i] + q[k] * sign, q[j] + q[3], q[k] * sign - q[i]
    middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    case = jnp.where(jnp.abs(middle - np.pi) <= _GIMBAL_EPS, 2, 0)
    case = jnp.where(jnp.abs(middle) <= _GIMBAL_EPS, 1, case)  # 0: regular, 1 and 2: locked
    half_sum = jnp.arctan2(b, a)
    half_diff = jnp.arctan2(d, c)
    angles = [jnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1)),
              middle, jnp.zeros_like(middle)]
    angles[first] = jnp.where(case == 0, half_sum - half_diff, angles[first])
    angles[third] = jnp.where(case == 0, half_sum + half_diff, angles[third])
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - np.pi / 2
    angles = jnp.stack(angles, axis=-1).astype(quat.dtype)
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return jnp.where(_flag(degrees, 1), jnp.rad2deg(angles), angles)


def _apply(matrix, vectors, inverse):
    vectors = _core(vectors, 1, "vectors")
    if vectors.shape[-1] != 3:
        raise ValueError(f"vectors with shape {tuple(vectors.shape)}: a rotation applies to "
                         "3-vectors, on the last axis")
    inverse = _flag(inverse, 2)
    _batch_shape("applying rotations", matrix.shape[:-2], vectors.shape[:-1],
                 inverse.shape[:-2])
    matrix = jnp.where(inverse, jnp.swapaxes(matrix, -1, -2), matrix)
    return jnp.matmul(matrix, vectors[..., None])[..., 0]


# ---------------------------------------------------------------------------------------------
# The classes.


class Rotation(typing.NamedTuple):
    """Rotations in 3 dimensions, held as unit quaternions `quat` (scalar last): a single one
    when `quat` has shape (4,), a stack of them along its leading axes otherwise.

    JAX's port of :class:`scipy.spatial.transform.Rotation`; build instances with the `from_*`
    class methods. Composition `r1 * r2` applies `r2` first.
    """
    quat: Any

    @classmethod
    def concatenate(cls, rotations: typing.Sequence):
        """The rotations of `rotations`, one after another (their quaternions concatenated
        along the first axis)."""
        return cls(jnp.concatenate([rotation.quat for rotation in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles, degrees: bool = False):
        """The rotations by `angles` about the axes of `seq`, in turn: 1 to 3 of 'xyz' for
        extrinsic rotations (about the fixed frame), of 'XYZ' for intrinsic ones (about the
        rotating frame). The last axis of `angles` holds one angle per axis of `seq`."""
        num_axes = len(seq)
        if num_axes < 1 or num_axes > 3:
            raise ValueError("Expected axis specification to be a non-empty string of upto 3 "
                             f"characters, got {seq}")
        intrinsic = not _check_seq(seq)
        angles = jnp.atleast_1d(angles)
        axes = [_axis_index(a) for a in seq.lower()]
        return cls(_from_euler(angles, axes, intrinsic, degrees))

    @classmethod
    def from_matrix(cls, matrix):
        """The rotations given by 3x3 rotation matrices (the last two axes of `matrix`)."""
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp):
        """The rotations given by Modified Rodrigues Parameters (the last axis of `mrp`)."""
        return cls(_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat):
        """The rotations given by quaternions (x, y, z, w), normalized to unit length."""
        return cls(_normalize(quat))

    @classmethod
    def from_rotvec(cls, rotvec, degrees: bool = False):
        """The rotations given by rotation vectors: the axis, scaled by the angle."""
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float):
        """The identity rotation (a single one: `num` must be None, as in JAX)."""
        if num is not None:
            raise AssertionError(f"Rotation.identity(num={num!r}): only a single identity "
                                 "rotation is supported (num=None), as in JAX; for a stack, "
                                 "use Rotation.from_quat on repeated [0, 0, 0, 1] quaternions")
        return cls(jnp.array([0., 0., 0., 1.], dtype=dtype))

    @classmethod
    def random(cls, random_key, num: int | None = None):
        """Uniformly distributed rotations: not implemented, as in JAX."""
        raise NotImplementedError(
            "Rotation.random is not implemented (nor is it in JAX); draw quaternions with "
            "didax.random.normal(key, (num, 4)) and pass them to Rotation.from_quat for "
            "uniformly distributed rotations")

    def __getitem__(self, indexer):
        """The rotation(s) at `indexer` of a stack."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        """The number of rotations along the first axis of a stack."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other) -> Rotation:
        """The composition: `other` first, then `self`."""
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors, inverse: bool = False):
        """`vectors` (3-vectors on the last axis) rotated by these rotations, or by their
        inverses with `inverse`."""
        return _apply(self.as_matrix(), vectors, inverse)

    def as_euler(self, seq: str, degrees: bool = False):
        """Euler angles about the 3 axes of `seq` ('xyz'-style extrinsic, 'XYZ'-style
        intrinsic), in radians or with `degrees` in degrees, on the last axis."""
        if len(seq) != 3:
            raise ValueError(f"Expected 3 axes, got {seq}.")
        extrinsic = _check_seq(seq)
        axes = [_axis_index(a) for a in seq.lower()]
        return _as_euler(self.quat, axes, extrinsic, degrees)

    def as_matrix(self):
        """3x3 rotation matrices, on the last two axes."""
        return _as_matrix(self.quat)

    def as_mrp(self):
        """Modified Rodrigues Parameters (of the rotation by at most pi), on the last axis."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False):
        """Rotation vectors (axis times angle in [0, pi]), on the last axis."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False):
        """Quaternions, scalar last (or first with `scalar_first`); with `canonical`, the one
        of q and -q with w > 0."""
        quat = _canonical(self.quat) if canonical else self.quat
        if scalar_first:
            return jnp.roll(quat, shift=1, axis=-1)
        return quat

    def inv(self):
        """The inverse rotations."""
        return Rotation(_inv(self.quat))

    def magnitude(self):
        """The angles of the rotations, in [0, pi]."""
        return _magnitude(self.quat)

    def mean(self, weights=None):
        """The (weighted) mean rotation of a stack: the quaternion maximizing the weighted sum
        of squared dot products with the stack's (Markley et al.)."""
        if weights is None:
            w = jnp.ones(self.quat.shape[0], dtype=self.quat.dtype)
        else:
            w = jnp.asarray(weights, dtype=self.quat.dtype)
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError("Expected `weights` to have number of values equal to number of "
                             f"rotations, got {w.shape[0]} values and {len(self)} rotations.")
        k = jnp.dot(w[np.newaxis, :] * self.quat.T, self.quat)
        _, v = jnp_linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this holds a single rotation (`quat` of shape (4,)) rather than a stack."""
        return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation of rotations: constant angular velocity between key
    rotations at increasing key times.

    JAX's port of :class:`scipy.spatial.transform.Slerp`: build it with `Slerp.init(times,
    rotations)`, then call it with the times to interpolate at.
    """
    times: Any
    timedelta: Any
    rotations: Rotation
    rotvecs: Any

    @classmethod
    def init(cls, times, rotations: Rotation):
        """The interpolator through `rotations` (a stack of at least 2) at `times` (1-D,
        increasing, one per rotation)."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance, got "
                            f"{type(rotations).__name__}; wrap quaternions with "
                            "Rotation.from_quat")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError("Expected times to be specified in a 1 dimensional array, got "
                             f"{times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{times.shape[0]} timestamps.")
        # Increasing times are not checked: that would need concrete values (as in JAX).
        quat = rotations.as_quat()
        starts = Rotation(quat[:-1])
        steps = starts.inv() * Rotation(quat[1:])
        return cls(times=times, timedelta=jnp.diff(times), rotations=starts,
                   rotvecs=steps.as_rotvec())

    def __call__(self, times):
        """The interpolated rotations at `times` (a scalar for a single rotation, or 1-D)."""
        compute_times = jnp.asarray(times, dtype=self.times.dtype)
        if compute_times.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional, got shape "
                             f"{tuple(compute_times.shape)}.")
        single_time = compute_times.ndim == 0
        compute_times = jnp.atleast_1d(compute_times)
        ind = jnp.maximum(jnp.searchsorted(self.times, compute_times) - 1, 0)
        alpha = (compute_times - self.times[ind]) / self.timedelta[ind]
        result = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        if single_time:
            return result[0]
        return result
