"""`fwd_and_bwd`: `vjp` split into a forward function, whose residuals are an ordinary
value, and a backward function that takes them, so one forward pass serves several
backward passes."""
from __future__ import annotations

from didax._src.transforms.api import vjp


def fwd_and_bwd(fun, argnums, has_aux: bool = False, jitted: bool = True):
    """`(fwd, bwd)`: `fwd(*args)` is `(y, residuals)` (with `has_aux`, `(y, residuals,
    aux)`); `bwd(residuals, cotangent)` the cotangents of the arguments `argnums` names (a
    tuple if it is a sequence). didax's residuals are the vjp function itself, and
    `jitted` is accepted but the two functions run as they are (jit them yourself)."""
    if not callable(fun):
        raise TypeError(f"fwd_and_bwd: expected a function, got {fun!r}")
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not all(isinstance(i, int) for i in nums):
        raise TypeError(f"fwd_and_bwd: argnums must be an int or a sequence of ints, got "
                        f"{argnums!r}")

    def fwd(*args):
        for i in nums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"fwd_and_bwd: argnums {argnums} names argument {i}, but "
                                 f"the function was called with {len(args)} arguments")
        picked = [i % len(args) for i in nums]

        def of_picked(*diff):
            full = list(args)
            for i, v in zip(picked, diff):
                full[i] = v
            return fun(*full)

        out = vjp(of_picked, *(args[i] for i in picked), has_aux=has_aux)
        if has_aux:
            y, pullback, aux = out
            return y, pullback, aux
        return out

    def bwd(residuals, cotangent):
        cts = residuals(cotangent)
        return cts[0] if single else tuple(cts)

    return fwd, bwd
