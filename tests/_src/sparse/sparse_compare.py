"""Comparison helpers shared by the sparse tests: run one program on JAX's and didax's
sparse modules and compare kinds, layouts, dtypes and dense values.

JAX compiles every eager operation on a sparse array separately (seconds for a module of
cases), so `jax_results` compiles all the cases that trace into one jit and runs the others
(errors, or cases needing concrete values) eagerly."""
import numpy as np


def nse_of(x, n_batch=0, n_dense=0):
    """The nse fromdense infers for `x` (given to it, so that JAX can compile cases
    together)."""
    nz = np.asarray(x) != 0
    nz = nz.reshape(nz.shape[:nz.ndim - n_dense] + (-1,)).any(-1) if n_dense else nz
    return int(nz.reshape(int(np.prod(nz.shape[:n_batch])), -1).sum(-1).max())


def summary(r, sp, dense=None):
    """What is compared of a result: a sparse array's format, shape, nse, layout, dtypes and
    dense value; a dense array's shape, dtype and value; an error's type."""
    if isinstance(r, sp.JAXSparse):
        dense = r.todense() if dense is None else dense
        return (type(r).__name__, tuple(r.shape), r.nse, r.n_batch, r.n_dense,
                np.dtype(r.dtype).name, np.dtype(r.indices.dtype).name), np.asarray(dense)
    r = np.asarray(r)
    return (r.shape, r.dtype.name), r


def run(f, lib):
    try:
        return summary(f(*lib), lib[2]), None
    except Exception as e:  # (compared by type)
        return None, type(e).__name__


def _with_dense(r, sp):
    return (r, r.todense()) if isinstance(r, sp.JAXSparse) else (r, None)


def jax_results(cases, jax_lib, inputs=()):
    """name -> JAX's (summary, error type name) of `cases[name](*jax_lib, *inputs)`: the
    inputs (sparse arrays made once) are arguments of the one jit, not constants in it."""
    return _jax_groups({None: (cases, inputs)}, jax_lib)[None]


def _jax_groups(groups, jax_lib):
    """jax_results of several groups of cases (group -> (cases, inputs)) in one jit."""
    J, sp = jax_lib[0], jax_lib[2]
    traced, out = {}, {}
    for group, (cases, inputs) in groups.items():
        out[group] = {}
        for name, f in cases.items():
            try:
                J.eval_shape(lambda *a, f=f: _with_dense(f(*jax_lib, *a), sp), *inputs)
                traced[group, name] = f
            except Exception:  # (an error, or it needs concrete values: eagerly)
                out[group][name] = run(lambda *lib, f=f, a=inputs: f(*lib, *a), jax_lib)

    def compute(all_inputs):
        return {(g, k): _with_dense(f(*jax_lib, *all_inputs[g]), sp)
                for (g, k), f in traced.items()}

    values = J.jit(compute)({g: tuple(inputs) for g, (_, inputs) in groups.items()})
    for (group, name), (r, dense) in values.items():
        out[group][name] = summary(r, sp, dense), None
    return out


_registered: dict = {}  # group -> (cases, a function of the sparse module making the inputs)
_results: dict = {}


def register(group, cases, inputs=lambda sp: ()):
    """Adds a test module's cases to those JAX runs together (`registered_results`)."""
    _registered[group] = (cases, inputs)


def registered_results(group, jax_lib):
    """jax_results of a registered group: every group registered so far (pytest imports all
    test modules first) is compiled in the same jit, once per session."""
    if group not in _results:
        todo = {g: (cases, inputs(jax_lib[2])) for g, (cases, inputs) in _registered.items()
                if g not in _results}
        _results.update(_jax_groups(todo, jax_lib))
    return _results[group]


def assert_matches(want, f, didax_lib, rtol=1e-5, inputs=()):
    """f(didax, didax.numpy, didax.experimental.sparse, *inputs) agrees with JAX's result
    `want` (from `run` or `jax_results`)."""
    want, want_err = want
    got, got_err = run(lambda *lib: f(*lib, *inputs), didax_lib)
    assert got_err == want_err, (got_err, want_err)
    if want is None:
        return
    assert got[0] == want[0], (got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=rtol, atol=1e-6)


def assert_same(f, jax_lib, didax_lib, rtol=1e-5):
    """f(jax, jnp, sparse) and f(didax, didax.numpy, didax.experimental.sparse) agree."""
    assert_matches(run(f, jax_lib), f, didax_lib, rtol)
