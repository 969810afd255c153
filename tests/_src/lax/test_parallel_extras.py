"""pcast, psend, precv and ragged_all_to_all. ragged_all_to_all is checked against JAX's
documented example and against a direct reference (XLA:CPU does not implement it) under vmap,
pmap and jit, with its derivative; pcast against JAX's results and errors; psend and precv
raise NotImplementedError naming ppermute."""
import numpy as np
import pytest
from jax import lax as jlax

import didax
from didax import lax
from didax._src.config import config
from didax.test_util import check_grads


def named(f):
    return didax.vmap(f, axis_name="i")


def ragged(*args):
    return lax.ragged_all_to_all(*args, axis_name="i")


# JAX's documented example: two instances, each sending two slices.
DOC_ARGS = (np.array([[1, 2, 2], [3, 4, 0]], np.float32), np.zeros((2, 4), np.float32),
            np.array([[0, 1], [0, 1]], np.int32), np.array([[1, 2], [1, 1]], np.int32),
            np.array([[0, 0], [1, 2]], np.int32), np.array([[1, 1], [2, 1]], np.int32))
DOC_RESULT = np.array([[1, 3, 0, 0], [2, 2, 4, 0]], np.float32)


def reference(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes):
    """The documented semantics, one slice at a time."""
    n, k = input_offsets.shape
    per = k // n
    result = output.copy()
    for src in range(n):
        for i in range(k):
            dst, size = i // per, send_sizes[src, i]
            start = output_offsets[src, i]
            chunk = operand[src, input_offsets[src, i]:input_offsets[src, i] + size]
            result[dst, start:start + size] = chunk
    return result


def test_documented_example():
    np.testing.assert_array_equal(np.asarray(named(ragged)(*DOC_ARGS)), DOC_RESULT)
    np.testing.assert_array_equal(np.asarray(didax.jit(named(ragged))(*DOC_ARGS)), DOC_RESULT)


def test_against_the_reference_with_trailing_dimensions():
    rng = np.random.default_rng(0)
    n, per = 3, 2  # three instances, two slices to each
    operand = rng.standard_normal((n, 9, 2)).astype(np.float32)
    output = rng.standard_normal((n, 10, 2)).astype(np.float32)
    send = rng.integers(0, 3, (n, n * per)).astype(np.int32)
    in_off = np.cumsum(send, axis=1) - send
    # Receiver d lays the slices from every sender one after another.
    recv = send.reshape(n, n, per).transpose(1, 0, 2).reshape(n, n * per)
    recv_off = np.cumsum(recv, axis=1) - recv
    out_off = recv_off.reshape(n, n, per).transpose(1, 0, 2).reshape(n, n * per)
    args = (operand, output, in_off, send, out_off, recv)
    want = reference(*args)
    np.testing.assert_array_equal(np.asarray(named(ragged)(*args)), want)
    old = config.read("didax_num_cpu_devices")
    config.update("didax_num_cpu_devices", n)
    try:
        got = didax.pmap(ragged, axis_name="i")(*args)
    finally:
        config.update("didax_num_cpu_devices", old)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_derivatives_by_finite_differences():
    operand, output, *rest = DOC_ARGS
    f = named(lambda a, b, *r: ragged(a, b, *r))
    check_grads(lambda a, b: f(a, b, *rest), (operand, output + 0.5), order=2,
                modes=("fwd", "rev"))


def test_ragged_all_to_all_errors():
    operand, output, io, ss, oo, rs = DOC_ARGS
    with pytest.raises(ValueError, match="divisible"):
        named(ragged)(operand, output, io[:, :1], ss[:, :1], oo[:, :1], rs[:, :1])
    with pytest.raises(TypeError, match="same length"):
        named(ragged)(operand, output, io, ss[:, :1], oo, rs)
    with pytest.raises(TypeError, match="dtype"):
        named(ragged)(operand, output.astype(np.int32), io, ss, oo, rs)
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        named(lambda *a: lax.ragged_all_to_all(*a, axis_name="i", axis_index_groups=[[0, 1]]))(
            *DOC_ARGS)
    with pytest.raises(NameError, match="unbound axis name"):
        lax.ragged_all_to_all(*(a[0] for a in DOC_ARGS), axis_name="i")


def test_pcast_to_varying_is_the_identity():
    x = np.arange(4.0, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(named(lambda v: lax.pcast(v, "i", to="varying"))(x)),
                                  x)
    assert lax.pcast(x, (), to="varying") is x


def test_pcast_errors():
    x = np.arange(4.0, dtype=np.float32)
    with pytest.raises(ValueError, match="Allowed `to` values"):
        jlax.pcast(x, "i", to="foo")
    with pytest.raises(ValueError, match="Allowed `to` values"):
        named(lambda v: lax.pcast(v, "i", to="foo"))(x)
    for axis_name in ({"i"}, frozenset({"i"})):
        with pytest.raises(TypeError, match="must be a tuple or a str"):
            jlax.pcast(x, axis_name, to="varying")
        with pytest.raises(TypeError, match="must be a tuple or a str"):
            lax.pcast(x, axis_name, to="varying")
    with pytest.raises(NotImplementedError, match="reduced"):
        named(lambda v: lax.pcast(v, "i", to="reduced"))(x)
    with pytest.raises(NameError, match="unbound axis name"):
        lax.pcast(x, "j", to="varying")


def test_psend_and_precv_point_to_ppermute():
    with pytest.raises(NotImplementedError, match="ppermute"):
        lax.psend(np.ones(2), "i", [(0, 1)])
    with pytest.raises(NotImplementedError, match="ppermute"):
        lax.precv(None, didax.ShapeDtypeStruct((2,), np.float32), "i", [(0, 1)])
