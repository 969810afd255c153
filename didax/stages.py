"""Mirrors `jax.stages`: the classes of jit's stages, `jit(f)` (Wrapped) ->
`.trace(*args)` (Traced) -> `.lower()` (Lowered) -> `.compile()` (Compiled)."""
from didax._src.jit.api import Compiled, Lowered, Traced  # noqa: F401
from didax._src.jit.api import JitWrapped as Wrapped  # noqa: F401
