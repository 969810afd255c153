"""Every memo table of the process, in one place.

A memo table holds values derived from their keys (interned types, result types, compiled
code, loaded modules) and is shared by every thread that runs didax: the user's, pmap's
shard workers and the native tier's builder. Reads are plain dictionary reads (atomic under
the GIL, and as fast as a dict's). A value is added with `add`, under the table's lock, and
the first value added for a key is the one every thread gets from then on: two threads
that make a value at once both use the one that was stored, so an interned object stays
unique and a compiled function is one object. Making a value happens outside the lock (it
may compile, or add to the same table).

`functools.lru_cache` tables (thread-safe in CPython) remain where a function is its own
memo; registries that are written at import or registration time (primitives, pytree
node types) are not memo tables and are not here.
"""
from __future__ import annotations

import threading
import weakref
from typing import Callable

_MISSING = object()


class _Table:
    """What both kinds of table do: add under the lock, the first value winning."""

    __slots__ = ()
    interns = False
    limit = None

    def add(self, key, value):
        """`value` stored for `key` unless another thread stored one first; the stored one."""
        with self.lock:
            if self.limit is not None and len(self) >= self.limit:
                super().clear()
            return self.setdefault(key, value)

    def get_or_make(self, key, make: Callable):
        found = self.get(key, _MISSING)
        return self.add(key, make()) if found is _MISSING else found

    def clear(self):
        if self.interns:
            raise TypeError(f"the memo table {self.name!r} interns its values: emptying it "
                            "would make a second object for a key")
        with self.lock:
            super().clear()

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r}, {len(self)} entries)"


class Memo(_Table, dict):
    """A memo table: a dict whose values are added under a lock, the first one winning.
    `limit`: emptied when it would grow beyond this many entries. `interns`: its values are
    the one object of their key (compared by identity elsewhere), so it is never emptied."""

    __slots__ = ("name", "limit", "interns", "lock")  # (no instance dict: reads at dict speed)

    def __init__(self, name: str, limit: int | None = None, interns: bool = False):
        super().__init__()
        self.name, self.limit, self.interns = name, limit, interns
        self.lock = threading.Lock()


class WeakMemo(_Table, weakref.WeakKeyDictionary):
    """A memo table whose entries live as long as their key object (a jaxpr, a function)."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self.lock = threading.Lock()


_tables: dict[str, Memo | WeakMemo] = {}
_tables_lock = threading.Lock()


def memo(name: str, *, limit: int | None = None, weak: bool = False,
         interns: bool = False) -> Memo | WeakMemo:
    """A new memo table, registered as `name` (a module makes its tables at import; a
    module imported again replaces its tables)."""
    table = WeakMemo(name) if weak else Memo(name, limit, interns)
    with _tables_lock:
        _tables[name] = table
    return table


def tables() -> dict[str, Memo | WeakMemo]:
    """Every memo table, by name."""
    with _tables_lock:
        return dict(_tables)


def clear_all() -> None:
    """Empties every memo table but the interning ones (the others are caches: their values
    are made again on demand)."""
    for table in tables().values():
        if not table.interns:
            table.clear()
