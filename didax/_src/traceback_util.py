"""Where errors point: files registered here are library internals, not the user's code
(libraries built on JAX register their own directories at import)."""
from __future__ import annotations

import os

# didax's own files are never the user's code
excluded_paths: list[str] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
_exclude_paths = excluded_paths  # (JAX's name: flax adds and removes entries in place)


def register_exclusion(path: str) -> None:
    excluded_paths.append(path)


def api_boundary(fun):
    """Marks a library entry point (JAX trims tracebacks there; didax leaves them whole)."""
    return fun


def include_frame(frame) -> bool:
    """Whether a stack frame is the user's (not in didax or a registered library)."""
    filename = frame.f_code.co_filename
    return not any(filename.startswith(p) for p in excluded_paths)
