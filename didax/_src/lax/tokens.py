"""`lax.create_token` and `lax.after_all`: XLA's tokens, which sequence side effects, as JAX
0.10.2 has them. A token holds no data: its value is a `Token`, its type `AbstractToken`
(printed `Tok`), both in core.py. didax runs its ordered effects (`io_callback(...,
ordered=True)`, `debug.print(..., ordered=True)`) in program order without tokens, so a
token only records an order; programs written with them run unchanged.

- `create_token_p`: no operands, no params (`lax.create_token(x)` ignores `x`, as JAX's).
- `after_all_p`: any number of tokens (no params) -> a token; anything else is a TypeError.

Tokens pass through jit as arguments and results. Their rules are JAX's: neither primitive
has a derivative rule (create_token has no operands, so differentiation never reaches it;
after_all raises, as in JAX) nor a batching rule (a token has no batch dimension: vmap never
batches one, as JAX's cannot).
"""
from __future__ import annotations

from didax._src import core
from didax._src.core import abstract_token

create_token_p = core.primitive("create_token")
create_token_p.def_impl(lambda: abstract_token.buffer)
create_token_p.def_abstract_eval(lambda: abstract_token)

after_all_p = core.primitive("after_all")
after_all_p.def_traits(tokens=True, effectful=True)  # (it orders: never folded nor merged)


def _after_all_aval(*avals):
    if any(a is not abstract_token for a in avals):
        raise TypeError("Arguments to after_all must be tokens")
    return abstract_token


after_all_p.def_impl(lambda *tokens: abstract_token.buffer)
after_all_p.def_abstract_eval(_after_all_aval)

for _p in (create_token_p, after_all_p):
    _p.mark_absent("jvp", "tokens carry no values to differentiate (JAX has no derivative "
                          "rule for it either)")
    _p.mark_absent("transpose", "tokens carry no values to differentiate")
    _p.mark_absent("batch", "a token has no batch dimension (vmap never batches one, as "
                            "JAX's cannot)")


def create_token(_=None):
    """A new token (the operand, if any, is ignored, as in JAX)."""
    return create_token_p.bind()


def after_all(*operands):
    """A token that comes after all the given tokens."""
    return after_all_p.bind(*operands)


__all__ = ["after_all", "create_token"]
