"""The few names of jax.scipy that didax does not compute yet: each raises a clear
NotImplementedError saying what is missing, instead of an AttributeError at import."""
from __future__ import annotations


def _unimplemented(module: str, name: str, reason: str):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"didax.{module}.{name} is not implemented: {reason}")

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Not implemented in didax: {reason}"
    return fn


_NO_SCHUR = "didax has no Schur decomposition yet"
schur = _unimplemented("scipy.linalg", "schur", _NO_SCHUR)
rsf2csf = _unimplemented("scipy.linalg", "rsf2csf", _NO_SCHUR)
funm = _unimplemented("scipy.linalg", "funm", _NO_SCHUR + " (funm is computed from it)")

_ACCURACY = "no algorithm accurate to float64 over the whole domain is written yet"
hyp1f1 = _unimplemented("scipy.special", "hyp1f1", _ACCURACY)
hyp2f1 = _unimplemented("scipy.special", "hyp2f1", _ACCURACY)
wofz = _unimplemented("scipy.special", "wofz", _ACCURACY)
