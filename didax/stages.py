"""Mirrors `jax.stages`: the classes of jit's stages, `jit(f)` (Wrapped) ->
`.trace(*args)` (Traced) -> `.lower()` (Lowered) -> `.compile()` (Compiled)."""
from didax._src.parallel.arg_info import ArgInfo  # noqa: F401
from didax._src.transforms.jit import Compiled, Lowered, Traced  # noqa: F401
from didax._src.transforms.jit import JitWrapped as Wrapped  # noqa: F401
