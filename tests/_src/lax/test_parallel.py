"""Collectives over named vmap axes (psum, pmean, pmax, pmin, axis_index, axis_size,
all_gather, ppermute, pshuffle, pbroadcast, psum_scatter, all_to_all): values and dtypes
against JAX 0.10.2 (literals) or NumPy, nested names, derivatives in both orders of vmap
and grad, jit in both orders, control flow, staging, and errors."""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src import ir
from didax._src.config import enable_x64
from didax._src.lax.parallel import psum_p
from didax.test_util import check_grads

XS = np.array([1., 3., 2., 5.], np.float32)
X24 = np.arange(24., dtype=np.float32).reshape(2, 3, 4)


def named(f, name="i", **kwargs):
    return jax.vmap(f, axis_name=name, **kwargs)


def close(got, want, tol=1e-6):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


def same(got, want):
    """Equal values, shape and dtype (Python lists and 64-bit NumPy stand for JAX's
    default 32-bit dtypes)."""
    got, want = np.asarray(got), np.asarray(want)
    want = want.astype({"int64": np.int32, "float64": np.float32}.get(want.dtype.name,
                                                                      want.dtype))
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------------------
# Reductions and indices


def test_psum_normalises_across_the_mapped_axis():
    out = named(lambda x: x / lax.psum(x, "i"))(jnp.arange(4.))
    close(out, [0., 1 / 6, 2 / 6, 3 / 6])
    assert out.dtype == np.float32


def test_psum_dtypes():
    same(named(lambda x: lax.psum(x, "i"))(jnp.arange(4)), np.full(4, 6, np.int32))
    bools = jnp.array([True, False, True])
    same(named(lambda x: lax.psum(x, "i"))(bools), np.full(3, 2, np.int32))  # bools as int32
    same(named(lambda x: lax.pmax(x, "i"))(bools), np.full(3, True))
    same(named(lambda x: lax.pmin(x, "i"))(jnp.arange(4)), np.zeros(4, np.int32))


def test_psum_of_values_the_same_in_every_example_is_size_times_them():
    same(named(lambda x: lax.psum(2., "i"))(XS), np.full(4, 8., np.float32))
    same(named(lambda x: lax.psum(jnp.ones(2), "i"))(XS), np.full((4, 2), 4., np.float32))
    assert named(lambda x: x * 0 + lax.psum(1, "i"))(jnp.arange(4)).tolist() == [4] * 4
    # unbatched at this level, batched by an enclosing vmap
    out = jax.vmap(named(lambda x, y: lax.psum(y, "i") + x, in_axes=(0, None)),
                   in_axes=(None, 0))(XS, jnp.array([1., 10.]))
    close(out, [XS + 4., XS + 40.])


def test_pmean_pmax_pmin():
    same(named(lambda x: lax.pmean(x, "i"))(jnp.arange(4)), np.full(4, 1.5, np.float32))
    same(named(lambda x: lax.pmax(x, "i"))(XS), np.full(4, 5., np.float32))
    same(named(lambda x: lax.pmin(x, "i"))(XS), np.full(4, 1., np.float32))
    same(named(lambda x: lax.pmean(x, "i"))(XS), np.full(4, 2.75, np.float32))


def test_axis_index_and_axis_size():
    same(named(lambda x: lax.axis_index("i"))(XS), np.arange(4, dtype=np.int32))
    sizes = []
    named(lambda x: sizes.append(lax.axis_size("i")) or x)(XS)
    assert sizes == [4] and type(sizes[0]) is int


def test_collectives_map_over_pytrees():
    out = named(lambda x: lax.psum({"a": x, "b": (2 * x, 1.)}, "i"))(XS)
    same(out["a"], np.full(4, 11., np.float32))
    same(out["b"][0], np.full(4, 22., np.float32))
    same(out["b"][1], np.full(4, 4., np.float32))
    out = named(lambda x: lax.pmax([x, -x], "i"))(XS)
    close(out[0], np.full(4, 5.)), close(out[1], np.full(4, -1.))


def test_in_axes_and_out_axes():
    x = np.arange(6., dtype=np.float32).reshape(3, 2)
    same(named(lambda v: lax.psum(v, "i"), in_axes=1, out_axes=1)(x),
         np.repeat(x.sum(1, keepdims=True), 2, 1))
    same(named(lambda v: v - lax.pmean(v, "i"), in_axes=1)(x), (x - x.mean(1, keepdims=True)).T)


def test_positional_axes_reduce_the_operand():
    same(named(lambda v: lax.psum(v, ("i", 0)))(np.arange(6., dtype=np.float32).reshape(2, 3)),
         np.full(2, 15., np.float32))
    same(named(lambda v: lax.pmean(v, (0, "i")))(np.arange(6., dtype=np.float32).reshape(2, 3)),
         np.full(2, 2.5, np.float32))


# --------------------------------------------------------------------------------------
# Nested names


def nested(f):
    return jax.vmap(jax.vmap(f, axis_name="j"), axis_name="i")


def test_nested_names():
    same(nested(lambda x: lax.psum(x, ("i", "j")))(X24),
         np.broadcast_to(X24.sum((0, 1)), X24.shape))
    same(nested(lambda x: lax.psum(x, "i"))(X24), np.broadcast_to(X24.sum(0), X24.shape))
    same(nested(lambda x: lax.pmax(x, "j"))(X24), np.broadcast_to(X24.max(1, keepdims=True),
                                                                  X24.shape))
    same(nested(lambda x: lax.axis_index(("i", "j")))(X24), [[0, 1, 2], [3, 4, 5]])
    same(nested(lambda x: lax.axis_index(("j", "i")))(X24), [[0, 2, 4], [1, 3, 5]])
    sizes = []
    nested(lambda x: sizes.append(lax.axis_size(("i", "j"))) or x)(X24)
    assert sizes == [6]


def test_an_inner_vmap_with_the_same_name_shadows_the_outer():
    x = np.arange(6., dtype=np.float32).reshape(2, 3)
    same(jax.vmap(named(lambda v: lax.psum(v, "i")), axis_name="i")(x), [[3.] * 3, [12.] * 3])


def test_an_unnamed_inner_vmap_passes_collectives_through():
    x = np.arange(12., dtype=np.float32).reshape(4, 3)  # outer "i" over rows
    for f, want in [
        (lambda v: lax.psum(v, "i"), np.broadcast_to(x.sum(0), x.shape)),
        (lambda v: lax.pmin(v, "i"), np.broadcast_to(x.min(0), x.shape)),
        (lambda v: lax.ppermute(v, "i", [(k, (k + 1) % 4) for k in range(4)]), np.roll(x, 1, 0)),
    ]:
        same(named(jax.vmap(f))(x), want)
    g = named(jax.vmap(lambda v: lax.all_gather(v, "i")))(x)
    same(g, np.broadcast_to(x.T[None], (4, 3, 4)))


def rows_loop(f, x, inner_axis):
    """vmap over "i" (axis 0) of a Python loop over `inner_axis` of each example."""
    def per_i(v):
        return jnp.stack([f(jnp.take(v, k, axis=inner_axis - 1))
                          for k in range(v.shape[inner_axis - 1])])
    return named(per_i)(x)


@pytest.mark.parametrize("inner_axis", [1, 2, 3])
def test_unnamed_inner_vmap_moves_positional_parameters(inner_axis):
    x = np.arange(4 * 4 * 4 * 2, dtype=np.float32).reshape(4, 4, 4, 2)
    x = np.moveaxis(x, 3, inner_axis)  # the inner vmap maps a size-2 axis
    for f in [lambda v: lax.psum_scatter(v, "i"),
              lambda v: lax.psum_scatter(v, "i", scatter_dimension=-1, tiled=True),
              lambda v: lax.all_gather(v, "i", axis=1),
              lambda v: lax.all_gather(v, "i", axis=-1, tiled=True),
              lambda v: lax.all_to_all(v, "i", 0, 1),
              lambda v: lax.all_to_all(v, "i", 0, 0)]:
        want = rows_loop(f, x, inner_axis)
        same(named(jax.vmap(f, in_axes=inner_axis - 1))(x), want)


# --------------------------------------------------------------------------------------
# all_gather, psum_scatter, ppermute, all_to_all


def test_all_gather():
    same(named(lambda v: lax.all_gather(v, "i"))(XS), np.broadcast_to(XS, (4, 4)))
    x = X24
    same(named(lambda v: lax.all_gather(v, "i", axis=1, tiled=True))(x),
         np.broadcast_to(np.concatenate(list(x), 1), (2, 3, 8)))
    same(named(lambda v: lax.all_gather(v, "i", axis=-1))(x),
         np.broadcast_to(np.moveaxis(x, 0, -1), (2, 3, 4, 2)))
    same(named(lambda v: lax.all_gather(jnp.ones(3), "i", axis=-1))(x), np.ones((2, 3, 2)))


@pytest.mark.parametrize("names,tiled", [(("i", "j"), False), (("j", "i"), False),
                                         (("i", "j"), True), (("j", "i"), True)])
def test_all_gather_over_several_names(names, tiled):
    # (JAX raises for several names; the result is the gather over their product, first major)
    out = nested(lambda v: lax.all_gather(v, names, axis=0, tiled=tiled))(X24)
    order = X24 if names == ("i", "j") else np.swapaxes(X24, 0, 1)
    flat = order.reshape(6, 4)
    want = flat.reshape(24) if tiled else flat
    same(out, np.broadcast_to(want, (2, 3) + want.shape))


def test_psum_scatter():
    x = np.arange(16., dtype=np.float32).reshape(4, 4)
    same(named(lambda v: lax.psum_scatter(v, "i"))(x), [24., 28., 32., 36.])
    same(named(lambda v: lax.psum_scatter(v, "i", tiled=True))(x), [[24.], [28.], [32.], [36.]])
    y = np.arange(32., dtype=np.float32).reshape(4, 2, 4)
    same(named(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1))(y),
         [[48., 64.], [52., 68.], [56., 72.], [60., 76.]])
    same(named(lambda v: lax.psum_scatter(jnp.ones((4, 2)), "i"))(y), np.full((4, 2), 4.))


def test_ppermute_pshuffle_pbroadcast():
    cycle = [(0, 1), (1, 2), (2, 3), (3, 0)]
    same(named(lambda v: lax.ppermute(v, "i", cycle))(jnp.arange(4.)), [3., 0., 1., 2.])
    same(named(lambda v: lax.pshuffle(v, "i", [1, 2, 3, 0]))(jnp.arange(4.)), [1., 2., 3., 0.])
    same(named(lambda v: lax.ppermute(jnp.ones(2), "i", cycle))(XS), np.ones((4, 2)))
    # examples that are no destination receive zeros (JAX's documented semantics)
    same(named(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2)]))(jnp.arange(4.)),
         [0., 0., 1., 0.])
    same(named(lambda v: lax.ppermute(jnp.ones(()), "i", [(3, 0)]))(XS), [1., 0., 0., 0.])
    same(named(lambda v: lax.pbroadcast(v, "i", 2))(XS), np.full(4, 2., np.float32))
    same(named(lambda v: lax.pbroadcast(v > 1, "i", 0))(XS), np.zeros(4, bool))


def test_all_to_all():
    x = np.arange(16., dtype=np.float32).reshape(4, 4)
    same(named(lambda v: lax.all_to_all(v, "i", 0, 0))(x), x.T)
    y = np.arange(32., dtype=np.float32).reshape(4, 4, 2)
    same(named(lambda v: lax.all_to_all(v, "i", 0, 1))(y), np.transpose(y, (1, 2, 0)))
    z = np.arange(32., dtype=np.float32).reshape(4, 2, 4)
    same(named(lambda v: lax.all_to_all(v, "i", 1, 0))(z), np.transpose(z, (2, 0, 1)))
    out = named(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True))(
        np.arange(64., dtype=np.float32).reshape(4, 8, 2))
    assert out.shape == (4, 2, 8)
    same(named(lambda v: lax.pswapaxes(v, "i", 0))(x), x.T)


# --------------------------------------------------------------------------------------
# Derivatives (JAX's values: psum's transpose is psum)


def f_mixed(x):
    return jnp.sin(x) * lax.psum(x ** 2, "i") - lax.pmean(x, "i") + lax.axis_index("i")


F_MIXED = [30.067367553710938, 3.7536799907684326, 34.71260070800781, -37.148048400878906]
GRAD_F_MIXED = [21.93771743774414, -34.01192092895508, -13.497870445251465, 19.392467498779297]


def test_grad_in_both_orders_matches_jax():
    close(named(jax.grad(f_mixed))(XS), GRAD_F_MIXED, 1e-5)
    close(jax.grad(lambda xs: named(f_mixed)(xs).sum())(XS), GRAD_F_MIXED, 1e-5)
    same(named(jax.grad(lambda x: lax.psum(x, "i")))(XS), np.full(4, 4., np.float32))
    same(named(jax.grad(lambda x: lax.pmean(x, "i")))(XS), np.ones(4, np.float32))


def test_jvp_and_vjp_through_collectives():
    t = jnp.array([.5, -1., 2., .25])
    _, tangent = named(lambda x, u: jax.jvp(f_mixed, (x,), (u,)))(XS, t)
    close(tangent, [14.726484298706055, 38.948368072509766, -27.89581871032715,
                    -2.9458770751953125], 1e-5)
    (ct,) = named(lambda x, c: jax.vjp(lambda v: lax.psum(v, "i"), x)[1](c))(XS, jnp.arange(4.))
    same(ct, np.full(4, 6., np.float32))


def test_grads_of_gathers_permutations_and_scatters_match_jax():
    cycle = [(0, 1), (1, 2), (2, 3), (3, 0)]
    g = named(jax.grad(lambda x: lax.ppermute(jnp.cos(x), "i", cycle) * x))(XS)
    close(g, [-2.240750789642334, 0.2580622732639313, -5.536479473114014, 0.542777419090271])
    w4 = jnp.array([1., -2., 3., .5])
    close(named(jax.grad(lambda x: (lax.all_gather(x, "i") * w4).sum() * x))(XS),
          [14.5, -18.5, 36.5, 9.0])
    x = jnp.arange(16.).reshape(4, 4) / 4
    w = jnp.arange(1., 17.).reshape(4, 4)
    a2a = named(jax.grad(lambda v: (lax.all_to_all(v, "i", 0, 0) * w[lax.axis_index("i")]).sum()))
    same(a2a(x), np.asarray(w).T)
    scatter = named(jax.grad(lambda v: lax.psum_scatter(v, "i") * jnp.arange(1., 5.)[
        lax.axis_index("i")]))
    same(scatter(x), np.broadcast_to([1., 2., 3., 4.], (4, 4)))
    tiled = named(jax.grad(lambda v: (lax.psum_scatter(v, "i", tiled=True) ** 2).sum()))
    same(tiled(x), np.broadcast_to([12., 14., 16., 18.], (4, 4)))


def test_pmax_pmin_derivatives_share_ties_like_reduce_max():
    # (JAX has no rule; both orders agree here, and with reduce_max's tie rule)
    ties = jnp.array([1., 3., 2., 3.])
    same(named(jax.grad(lambda x: lax.pmax(x, "i")))(ties), [0., 2., 0., 2.])
    same(jax.grad(lambda xs: named(lambda x: lax.pmax(x, "i"))(xs).sum())(ties), [0., 2., 0., 2.])
    _, t = jax.jvp(named(lambda x: lax.pmax(x, "i")), (ties,), (jnp.arange(4.),))
    same(t, np.full(4, 2., np.float32))
    same(named(jax.grad(lambda x: lax.pmin(x, "i") * x))(XS), [12., 1., 1., 1.])


@pytest.mark.parametrize("f", [
    lambda x: jnp.tanh(x) * lax.psum(jnp.sin(x), "i"),
    lambda x: lax.pmean(x ** 3, "i") * x,
    lambda x: lax.pmax(x * x, "i") + lax.pmin(jnp.cos(x), "i"),
    lambda x: (lax.all_gather(x, "i") ** 2).sum() * lax.ppermute(x, "i", [(0, 2), (2, 0)]),
    lambda x: lax.psum_scatter(jnp.sin(x) * jnp.arange(1., 5.), "i") * x,
])
def test_finite_differences(f):
    with enable_x64(True):
        xs = jnp.array([.3, -1.2, .7, 2.1], jnp.float64)
        check_grads(named(f), (xs,), order=2)
        check_grads(lambda v: named(jax.grad(lambda x: f(x).sum()))(v), (xs,), order=1,
                    modes=("rev",))


def test_higher_order_and_jacobians():
    same(named(jax.hessian(lambda x: lax.psum(x ** 3, "i")))(XS), 24. * XS)
    jf = named(jax.jacfwd(lambda x: lax.psum(x ** 3, "i") * x))(XS)
    close(jf, [278., 512., 395., 746.])
    close(named(jax.jacrev(lambda x: lax.psum(x ** 3, "i") * x))(XS), [194., 458., 293., 986.])


# --------------------------------------------------------------------------------------
# jit, control flow, staging


def test_jit_of_vmap_and_vmap_of_jit():
    close(jax.jit(named(f_mixed))(XS), F_MIXED, 1e-5)
    close(named(jax.jit(f_mixed))(XS), F_MIXED, 1e-5)
    close(named(jax.jit(jax.grad(f_mixed)))(XS), GRAD_F_MIXED, 1e-5)
    close(named(jax.grad(jax.jit(f_mixed)))(XS), GRAD_F_MIXED, 1e-5)
    close(jax.jit(named(jax.grad(f_mixed)))(XS), GRAD_F_MIXED, 1e-5)
    close(jax.grad(lambda xs: jax.jit(named(f_mixed))(xs).sum())(XS), GRAD_F_MIXED, 1e-5)


def test_a_jit_call_with_unbatched_operands_still_meets_the_axis():
    same(named(lambda x: jax.jit(lambda: lax.psum(2., "i") + lax.axis_index("i"))())(XS),
         [8., 9., 10., 11.])
    same(named(lambda x: x + jax.jit(lambda y: lax.psum(y, "i"))(jnp.ones(2)).sum())(XS),
         XS + 8.)


def test_jit_inside_nested_names():
    x = np.arange(6., dtype=np.float32).reshape(2, 3)
    both = lambda v: lax.psum(v, ("i", "j"))  # noqa: E731
    same(jax.vmap(jax.jit(named(both, "j")), axis_name="i")(x), np.full((2, 3), 15.))
    same(nested(jax.jit(both))(x), np.full((2, 3), 15.))
    unbatched_j = jax.vmap(jax.jit(both), in_axes=None, axis_size=3, axis_name="j")
    same(named(unbatched_j)(jnp.arange(2.)), np.full((2, 3), 3.))


def test_a_jitted_function_batched_under_different_names():
    h = jax.jit(lambda v: lax.psum(v, "i"))
    same(named(h)(jnp.arange(3.)), np.full(3, 3.))
    x = np.arange(6., dtype=np.float32).reshape(2, 3)
    # the same jaxpr batched along an axis of the same size, now named "j": psum is over "i"
    same(jax.vmap(named(h, "j"), axis_name="i")(x), np.broadcast_to(x.sum(0), (2, 3)))


def test_control_flow_bodies_meet_the_axis():
    same(named(lambda x: lax.cond(x > 2, lambda v: lax.psum(v, "i"),
                                  lambda v: -lax.pmax(v, "i"), x))(XS), [-5., 11., -5., 11.])
    same(named(lambda x: lax.cond(True, lambda: lax.axis_index("i"), lambda: 0))(XS),
         np.arange(4, dtype=np.int32))
    same(named(lambda x: lax.while_loop(lambda c: c < 10, lambda c: c + 1 + lax.axis_index("i"),
                                        x))(XS), [10., 11., 11., 13.])
    same(named(lambda x: lax.fori_loop(0, 3, lambda k, c: c + lax.axis_index("i"), 0))(XS),
         [0, 3, 6, 9])

    def scanned(x):
        return lax.scan(lambda c, y: (c * lax.pmean(c, "i") + y, c), x, jnp.arange(3.))[0]

    close(named(scanned)(XS / 4), [3.3227906227111816, 3.521563768386841, 3.422177314758301,
                                   3.720337152481079], 1e-5)
    close(named(jax.grad(scanned))(XS / 4), np.full(4, 3.1803722381591797), 1e-5)
    close(jax.grad(lambda v: named(scanned)(v).sum())(XS / 4), np.full(4, 3.1803722381591797),
          1e-5)


def test_checkpoint_bodies_meet_the_axis():
    close(named(jax.checkpoint(f_mixed))(XS), F_MIXED, 1e-5)
    close(named(jax.grad(jax.checkpoint(f_mixed)))(XS), GRAD_F_MIXED, 1e-5)


def test_make_jaxpr_inside_vmap_stages_collectives_as_jax_prints_them():
    texts = []

    def f(x):
        jaxpr = jax.make_jaxpr(lambda y: lax.psum(y, "i") * lax.axis_index("i")
                               + lax.pmax(y, "i") + lax.pmin(y, ("i",)))(x)
        ir.check_jaxpr(jaxpr.jaxpr)  # types check without the axis bound
        texts.append(str(jaxpr))
        return x

    named(f)(XS)
    assert texts[0] == """{ lambda ; a:f32[]. let
    b:f32[] = psum[axes=('i',) axis_index_groups=None] a
    c:i32[] = axis_index[axis_name=i]\x20
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    e:f32[] = mul b d
    f:f32[] = pmax[axes=('i',) axis_index_groups=None] a
    g:f32[] = add e f
    h:f32[] = pmin[axes=('i',) axis_index_groups=None] a
    i:f32[] = add g h
  in (i,) }"""

    def g(x):
        texts.append(str(jax.make_jaxpr(lambda y: (
            lax.all_gather(y, "i"), lax.ppermute(y, "i", [(0, 1), (1, 0)]),
            lax.psum_scatter(jnp.ones(4), "i"), lax.pmean(y, "i")))(x)))
        texts.append(str(jax.make_jaxpr(lambda y: lax.all_to_all(y, "i", 0, 0))(jnp.ones(4))))
        return x

    named(g)(XS)
    assert texts[1] == """{ lambda ; a:f32[]. let
    b:f32[4] = all_gather[
      all_gather_dimension=0
      axis_index_groups=None
      axis_name=('i',)
      axis_size=4
      tiled=False
    ] a
    c:f32[] = ppermute[axis_name=('i',) perm=((0, 1), (1, 0))] a
    d:f32[4] = broadcast_in_dim 1.0:f32[]
    e:f32[] = reduce_scatter[
      axis_index_groups=None
      axis_name=('i',)
      axis_size=4
      scatter_dimension=0
      tiled=False
    ] d
    f:f32[] = psum[axes=('i',) axis_index_groups=None] a
    g:f32[] = div f 4.0:f32[]
  in (b, c, e, g) }"""
    assert texts[2] == """{ lambda ; a:f32[4]. let
    b:f32[4] = all_to_all[
      axis_index_groups=None
      axis_name=i
      concat_axis=0
      split_axis=0
      tiled=False
    ] a
  in (b,) }"""


def test_vmap_resolves_collectives_while_staging():
    jaxpr = jax.make_jaxpr(named(lambda x: x / lax.psum(x, "i")))(XS)
    assert "psum" not in str(jaxpr)
    ir.check_jaxpr(jaxpr.jaxpr)


# --------------------------------------------------------------------------------------
# Errors


def test_unbound_axis_names():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(jnp.arange(3.), "i")
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.axis_size("i")
    with pytest.raises(NameError, match=r"Found an unbound axis name: j\..*available to "
                                        r"collective operations: \['i'\]"):
        named(lambda x: lax.psum(x, "j"))(XS)
    with pytest.raises(NameError, match="Found an unbound axis name: j"):
        jax.vmap(lambda x: lax.pmax(x, "j"))(XS)
    with pytest.raises(NameError, match="Found an unbound axis name: i"):
        lax.axis_index("i")
    with pytest.raises(NameError, match="Found an unbound axis name: i"):
        jax.jit(lambda x: lax.psum(x, "i"))(XS)
    for f in [lambda x: lax.all_gather(x, "k"), lambda x: lax.ppermute(x, "k", [(0, 1)]),
              lambda x: lax.psum_scatter(x, "k"), lambda x: lax.pmean(x, "k"),
              lambda x: lax.all_to_all(x, "k", 0, 0)]:
        with pytest.raises(NameError, match="unbound axis name: k"):
            named(f)(np.ones((4, 4), np.float32))


def test_a_staged_collective_evaluated_outside_its_vmap():
    staged = []
    named(lambda x: staged.append(jax.make_jaxpr(lambda y: lax.psum(y, "i"))(x)) or x)(XS)
    with pytest.raises(NameError, match="unbound axis name: i"):
        staged[0](np.float32(1.))


def test_invalid_arguments():
    with pytest.raises(ValueError, match="sources and destinations must be unique"):
        named(lambda x: lax.ppermute(x, "i", [(0, 1), (0, 2)]))(XS)
    with pytest.raises(ValueError, match="out of range"):
        named(lambda x: lax.ppermute(x, "i", [(0, 7)]))(XS)
    with pytest.raises(ValueError, match="does not represent a permutation"):
        named(lambda x: lax.pshuffle(x, "i", [1, 1, 3, 0]))(XS)
    with pytest.raises(ValueError, match="scatter dimension size 3 must match shard count 4"):
        named(lambda x: lax.psum_scatter(x, "i"))(np.ones((4, 3), np.float32))
    with pytest.raises(ValueError, match="must be divisible by shard_count 4"):
        named(lambda x: lax.psum_scatter(x, "i", tiled=True))(np.ones((4, 6), np.float32))
    with pytest.raises(ValueError, match="but they are 4 and 3 respectively"):
        named(lambda x: lax.all_to_all(x, "i", 0, 0))(np.ones((4, 3), np.float32))
    with pytest.raises(ValueError, match="out of bounds"):
        named(lambda x: lax.all_gather(x, "i", axis=2))(XS)
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        named(lambda x: lax.psum(x, "i", axis_index_groups=[[0, 1], [2, 3]]))(XS)
    with pytest.raises(NotImplementedError, match="several axis names"):
        nested(lambda x: lax.ppermute(x, ("i", "j"), [(0, 1)]))(X24)
    with pytest.raises(TypeError, match="psum does not accept dtype"):
        named(lambda x: jax.make_jaxpr(lambda s: psum_p.bind(
            s, axes=("i",), axis_index_groups=None))(x > 0))(XS)
