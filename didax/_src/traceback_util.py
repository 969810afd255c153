"""Where errors point: files registered here are library internals, not the user's code
(libraries built on JAX register their own directories at import)."""
from __future__ import annotations

excluded_paths: list[str] = []


def register_exclusion(path: str) -> None:
    excluded_paths.append(path)


def api_boundary(fun):
    """Marks a library entry point (JAX trims tracebacks there; didax leaves them whole)."""
    return fun
