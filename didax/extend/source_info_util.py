"""Mirrors `jax.extend.source_info_util`: which files are library internals, so that the
line an error or a jaxpr names is the user's (libraries register their directories)."""
from didax._src.errors import user_source_info as _user_source_info
from didax._src.traceback_util import register_exclusion  # noqa: F401


def current():
    """`(file, line, function)` of the innermost user frame calling now, or None."""
    return _user_source_info(3)
