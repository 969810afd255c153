"""Every memo table of the process, in one place.

A memo table holds values derived from their keys (interned types, result types, compiled
code, loaded modules) and is shared by every thread that runs didax: the user's, pmap's
shard workers and the native tier's builder. A table is a plain dict (or a
WeakKeyDictionary), made and registered here by `memo`: reads are the dict's own (atomic
under the GIL, and the hottest eager paths read tables, so nothing may stand in front of
them). A value is added with `add`, under the lock, and the first value added for a key is
the one every thread gets from then on: two threads that make a value at once both use the
one stored, so an interned object stays unique and a compiled function is one object.
Making a value happens outside the lock (it may compile, or add to the same table).

`functools.lru_cache` tables (thread-safe in CPython) remain where a function is its own
memo; registries written at import or registration time (primitives, pytree node types)
are not memo tables and are not here.
"""
from __future__ import annotations

import threading
import weakref
from typing import NamedTuple


class Table(NamedTuple):
    """A registered table: `limit`, emptied when it would grow past this many entries;
    `interns`, its values are the one object of their key (compared by identity elsewhere),
    so it is never emptied."""
    name: str
    table: dict | weakref.WeakKeyDictionary
    limit: int | None
    interns: bool


_tables: dict[str, Table] = {}
_by_id: dict[int, Table] = {}
_lock = threading.Lock()  # (adds are rare: the misses of tables read far more often)


def memo(name: str, *, limit: int | None = None, weak: bool = False,
         interns: bool = False) -> dict:
    """A new memo table, registered as `name` (a module makes its tables at import; a
    module imported again replaces its tables)."""
    table = weakref.WeakKeyDictionary() if weak else {}
    entry = Table(name, table, limit, interns)
    with _lock:
        old = _tables.get(name)
        if old is not None:
            _by_id.pop(id(old.table), None)
        _tables[name] = entry
        _by_id[id(table)] = entry
    return table


def add(table, key, value):
    """`value` stored for `key` in `table` unless another thread stored one first; returns
    the stored one."""
    with _lock:
        entry = _by_id.get(id(table))
        if entry is not None and entry.limit is not None and len(table) >= entry.limit:
            table.clear()
        return table.setdefault(key, value)


def tables() -> dict[str, Table]:
    """Every registered table, by name."""
    with _lock:
        return dict(_tables)


def clear(prefix: str) -> None:
    """Empties the tables whose names start with `prefix` (the values derived from what
    just changed)."""
    for name, entry in tables().items():
        if name.startswith(prefix):
            entry.table.clear()


def clear_all() -> None:
    """Empties every memo table but the interning ones (the others are caches: their values
    are made again on demand)."""
    for entry in tables().values():
        if not entry.interns:
            entry.table.clear()
