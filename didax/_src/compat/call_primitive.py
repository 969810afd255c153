"""`CallPrimitive` and `call_p`: primitives whose first operand is a function (a
`WrappedFun` or callable). didax's interpreters trace calls by running the function, so
binding one applies the function to the operands under the current interpreter; the closed
jaxpr form, `closed_call_p`, is a primitive of its own (primitives/jit_call.py)."""
from __future__ import annotations

from didax._src.core import Primitive


class CallPrimitive(Primitive):
    call_primitive = True

    def __init__(self, name: str):
        super().__init__(name, multiple_results=True)
        self.mark_absent("impl", "binding applies the function operand (see bind)")

    def bind(self, fun, *args, **params):
        call = getattr(fun, "call_wrapped", fun)
        return list(call(*args))


call_p = CallPrimitive("call")
