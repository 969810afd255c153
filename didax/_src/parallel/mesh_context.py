"""The mesh a program runs under (`set_mesh`, `use_abstract_mesh`), per thread: libraries
ask `get_abstract_mesh()` whether a mesh is set (flax's partitioning metadata)."""
from __future__ import annotations

import threading

import numpy as np

from didax._src.parallel.sharding import AbstractMesh, Mesh

_EMPTY_ABSTRACT = AbstractMesh((), ())


def _empty_mesh() -> Mesh:
    mesh = object.__new__(Mesh)  # (no devices: the constructor wants an axis per dimension)
    mesh.devices, mesh.axis_names, mesh.axis_types = np.empty((0,), dtype=object), (), ()
    return mesh


_EMPTY_MESH = _empty_mesh()


class _Current(threading.local):
    def __init__(self):
        self.mesh: Mesh | None = None
        self.abstract: AbstractMesh | None = None


_current = _Current()


def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh set now (an empty one when none is)."""
    if _current.abstract is not None:
        return _current.abstract
    return _current.mesh.abstract_mesh if _current.mesh is not None else _EMPTY_ABSTRACT


def get_mesh() -> Mesh:
    """The concrete mesh set now (an empty one when none is)."""
    return _current.mesh if _current.mesh is not None else _EMPTY_MESH


class _MeshSetting:
    """Sets a mesh at once; as a context manager, restores the previous one on exit."""

    def __init__(self, mesh, abstract):
        self.prev = (_current.mesh, _current.abstract)
        if mesh is not None:
            _current.mesh, _current.abstract = mesh, None
        else:
            _current.abstract = abstract

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _current.mesh, _current.abstract = self.prev
        return None


def set_mesh(mesh: Mesh) -> _MeshSetting:
    """Makes `mesh` the current one (in this thread); `with set_mesh(mesh):` for a block."""
    if not isinstance(mesh, Mesh):
        raise TypeError(f"set_mesh expects a Mesh, got {type(mesh).__name__}")
    return _MeshSetting(mesh, None)


def use_abstract_mesh(mesh: AbstractMesh) -> _MeshSetting:
    """Makes `mesh` the current abstract mesh for a `with` block."""
    if not isinstance(mesh, AbstractMesh):
        raise TypeError(f"use_abstract_mesh expects an AbstractMesh, got "
                        f"{type(mesh).__name__}")
    return _MeshSetting(None, mesh)
