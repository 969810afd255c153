"""`dce_sink_p`: JAX's equation with no results that marks its operands as used, so dead-code
elimination keeps what computes them (`prevent_mlir_dce` asks the same of the compiler below
jit). Effectful for didax's jit, which therefore never removes it; its impl does nothing.
Under JVP it sinks the primals only; vmap drops it, as JAX's does."""
from __future__ import annotations

from didax._src import core

dce_sink_p = core.primitive("dce_sink", multiple_results=True)
dce_sink_p.def_traits(effectful=True)
dce_sink_p.def_impl(lambda *args, prevent_mlir_dce: [])
dce_sink_p.def_abstract_eval(lambda *avals, prevent_mlir_dce: [])
dce_sink_p.def_jvp(lambda primals, tangents, **params: (dce_sink_p.bind(*primals, **params), []))
dce_sink_p.def_batch(lambda size, vals, dims, **params: ([], []))  # (dropped, as JAX drops it)
dce_sink_p.def_transpose(lambda cts, *args, **params: [None] * len(args))

__all__: list = []
