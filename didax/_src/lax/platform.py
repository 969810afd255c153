"""`lax.platform_dependent`: per-platform code, for didax's one platform, the CPU."""
from __future__ import annotations

from didax._src.core import Tracer
from didax._src.lax.control_flow.cond import switch
from didax._src.tree_util import tree_leaves

_PLATFORM = "cpu"


def platform_dependent(*args, default=None, **per_platform):
    """`per_platform["cpu"](*args)`, else `default(*args)`. Called on values, it calls that
    branch, as JAX does. Traced, every branch is traced (their results must agree in type)
    and staged as a `cond` whose index is the CPU's branch, where JAX's index is a
    `platform_index` equation that XLA resolves when it compiles."""
    if "gpu" in per_platform:
        raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    for platform, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the branch for {platform!r} must be "
                            f"callable, got {branch!r}")
    if default is not None and not callable(default):
        raise TypeError(f"lax.platform_dependent: default must be callable, got {default!r}")
    branches = list(per_platform.values()) + ([default] if default is not None else [])
    if _PLATFORM in per_platform:
        index = list(per_platform).index(_PLATFORM)
    elif default is not None:
        index = len(branches) - 1
    else:
        raise NotImplementedError(
            f"lax.platform_dependent: no branch for platform 'cpu' (given branches for "
            f"{sorted(per_platform)} and no default); didax runs on the CPU, so pass cpu=... "
            "or default=...")
    if len(branches) == 1 or not any(isinstance(leaf, Tracer) for leaf in tree_leaves(args)):
        return branches[index](*args)  # (as JAX, which outside a trace calls the branch)
    return switch(index, branches, *args)
