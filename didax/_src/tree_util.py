"""Pytrees: nested containers taken apart into a flat list of leaves and a structure.

Every transformation flattens its arguments and unflattens its results, so this module is on
the hot path of every call. The structure is therefore kept as a nested tuple, the *spec*:
`None` for a leaf, `(node_type, aux_data, child_specs)` for a node (a `None` value in the
tree is the node `(NoneType, None, ())`). Tuples compare and hash in C, which makes a
`PyTreeDef` (a spec plus its leaf count) a cheap cache key, and flattening builds no object
per node beyond that tuple.

Node types are looked up by exact type in `_nodes`; tuple subclasses with `_fields`
(namedtuples) are nodes without registration. Everything else is a leaf.
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import functools
import operator
import textwrap
from collections.abc import Callable, Hashable, Iterable, Sequence
from types import NoneType
from typing import Any, NamedTuple, TypeVar

from didax._src.errors import user_error

T = TypeVar("T")
KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyPath = tuple[KeyEntry, ...]


class _Node(NamedTuple):
    """How to take a node type apart (`flatten`) and put it back together (`unflatten`)."""

    flatten: Callable  # node -> (children, aux_data)
    unflatten: Callable  # (aux_data, children tuple) -> node
    flatten_with_keys: Callable | None  # node -> ([(key, child), ...], aux_data)


_nodes: dict[type, _Node] = {}
_registry = _nodes  # (JAX's name for its table of node types: flax tests `type(x) in` it)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _node_of(x) -> _Node | None:
    """The registry entry for `x`'s type, a synthesized one for namedtuples, None for leaves."""
    node = _nodes.get(type(x))
    if node is None and _is_namedtuple(x):
        return _NAMEDTUPLE
    return node


def _checked(out, what="to_iterable"):
    """Validate what a user-supplied flatten function returned."""
    if not isinstance(out, tuple) or len(out) != 2:
        raise ValueError(
            f"The {what} function for a custom PyTree node should return a "
            f"(children, aux_data) tuple, got {out}")
    return out


def _sorted_keys(d) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError:
        raise ValueError(
            "Comparator raised exception while sorting pytree dictionary keys.") from None


# ---------------------------------------------------------------------------------------------
# Flatten and unflatten: the hot path.


def _flatten_children(children: Iterable, leaves: list, is_leaf) -> tuple:
    """Append the leaves under `children` to `leaves` and return their specs.

    Leaves are handled here without a call per leaf, and loops are used rather than
    comprehensions (which cost a function call each in Python 3.11): this is the hot path.
    """
    specs = []
    for c in children:
        if (is_leaf is None or not is_leaf(c)) and (type(c) in _nodes or isinstance(c, tuple)):
            specs.append(_flatten_node(c, leaves, is_leaf))
        else:
            leaves.append(c)
            specs.append(None)
    return tuple(specs)


def _flatten_node(x, leaves: list, is_leaf):
    """The spec of `x`, which is registered or a tuple subclass (a leaf unless a namedtuple)."""
    t = type(x)
    if t is tuple or t is list:
        return t, None, _flatten_children(x, leaves, is_leaf)
    if t is dict:
        keys = _sorted_keys(x)
        return dict, keys, _flatten_children([x[k] for k in keys], leaves, is_leaf)
    node = _nodes.get(t)
    if node is not None:
        children, aux = _checked(node.flatten(x))
        return t, aux, _flatten_children(children, leaves, is_leaf)
    if hasattr(x, "_fields"):
        return t, None, _flatten_children(x, leaves, is_leaf)
    leaves.append(x)
    return None


def _build(spec, leaves):
    """Rebuild the node described by `spec`, taking leaves from the iterator `leaves`."""
    kind, aux, children = spec
    values = []
    for c in children:
        values.append(next(leaves) if c is None else _build(c, leaves))
    if kind is tuple:
        return tuple(values)
    if kind is list:
        return values
    if kind is dict:
        return dict(zip(aux, values))
    node = _nodes.get(kind)
    if node is None:  # a namedtuple
        return kind(*values)
    return node.unflatten(aux, tuple(values))


_NONE_PREFIX_HINT = (
    "\n\nIn previous releases of JAX, flatten-up-to used to consider None to be a tree-prefix "
    "of non-None values. To obtain the previous behavior, you can usually write:\n"
    "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
    "is_leaf=lambda x: x is None)")


def _flatten_up_to(spec, x, out: list) -> None:
    """Append to `out` the subtrees of `x` found at the leaves of `spec` (JAX's messages)."""
    if spec is None:
        out.append(x)
        return
    kind, aux, children = spec
    t = type(x)
    if kind is tuple or kind is list:
        name = kind.__name__
        if t is not kind:
            raise ValueError(f"Expected {name}, got {x!r}.")
        if len(x) != len(children):
            raise ValueError(f"{name.capitalize()} arity mismatch: {len(x)} != {len(children)};"
                             f" {name}: {x!r}.")
        items = x
    elif kind is dict:
        if t is not dict:
            raise ValueError(f"Expected dict, got {x!r}.")
        keys = _sorted_keys(x)
        if keys != aux:
            raise ValueError(f"Dict key mismatch; expected keys: {list(aux)}; "
                             f"present keys: {list(keys)}.")
        items = [x[k] for k in keys]
    elif kind is NoneType:
        if x is not None:
            raise ValueError(f"Expected None, got {x!r}.{_NONE_PREFIX_HINT}")
        return
    elif kind in _nodes:
        if t is not kind:
            raise ValueError(f"Custom node type mismatch: expected type: {kind}, value: {x!r}.")
        items, x_aux = _checked(_nodes[kind].flatten(x))
        items = tuple(items)
        if x_aux != aux:
            raise ValueError(f"Mismatch custom node data: {aux!r} != {x_aux!r}; value: {x!r}.")
        if len(items) != len(children):
            raise ValueError(f"Custom type arity mismatch: {len(items)} != {len(children)};"
                             f" value: {x!r}.")
    else:
        if not _is_namedtuple(x):
            raise ValueError(f"Expected named tuple, got {x!r}.")
        if len(x) != len(children):
            raise ValueError(f"Named tuple arity mismatch: {len(x)} != {len(children)};"
                             f" tuple: {x!r}.")
        if t is not kind:
            raise ValueError(f"Named tuple type mismatch: expected type: {kind}, tuple: {x!r}.")
        items = x
    for c, item in zip(children, items):
        if c is None:
            out.append(item)
        else:
            _flatten_up_to(c, item, out)


def _fold(spec, leaf, node: Callable):
    """Bottom-up fold: `leaf` at leaves, `node(kind, aux, folded_children)` at nodes."""
    if spec is None:
        return leaf
    kind, aux, children = spec
    return node(kind, aux, [_fold(c, leaf, node) for c in children])


def _node_str(kind, aux, children: list[str]) -> str:
    """One node of JAX's PyTreeDef notation, e.g. `(*, [*], {'a': *})`."""
    if kind is tuple:
        return f"({children[0]},)" if len(children) == 1 else f"({', '.join(children)})"
    if kind is list:
        return f"[{', '.join(children)}]"
    if kind is dict:
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(aux, children)) + "}"
    if kind is NoneType:
        return "None"
    label = f"{kind.__name__}[{aux}]" if kind in _nodes else f"namedtuple[{kind.__name__}]"
    return f"CustomNode({label}, [{', '.join(children)}])"


class PyTreeDef:
    """The structure of a pytree: its node types, their aux data and where the leaves go.

    Equal structures compare equal and hash alike, so a PyTreeDef can key a cache.
    """

    __slots__ = ("_spec", "_num_leaves")

    def __init__(self, spec, num_leaves: int):
        self._spec = spec
        self._num_leaves = num_leaves

    @property
    def num_leaves(self) -> int:
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        return _fold(self._spec, 1, lambda kind, aux, cs: 1 + sum(cs))

    def unflatten(self, leaves: Iterable) -> Any:
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        if len(leaves) < self._num_leaves:
            raise ValueError(f"Too few leaves for PyTreeDef; expected {self._num_leaves}, "
                             f"got {len(leaves)}")
        if len(leaves) > self._num_leaves:
            raise ValueError(f"Too many leaves for PyTreeDef; expected {self._num_leaves}.")
        return leaves[0] if self._spec is None else _build(self._spec, iter(leaves))

    def flatten_up_to(self, tree) -> list:
        """The subtrees of `tree` at this structure's leaves; `tree` may nest deeper there."""
        out = []
        _flatten_up_to(self._spec, tree, out)
        return out

    def children(self) -> list[PyTreeDef]:
        if self._spec is None:
            return []
        return [_treedef(c) for c in self._spec[2]]

    def node_data(self):
        """`(node_type, aux_data)` of the root (dict keys as a list, as JAX), None for a leaf."""
        if self._spec is None:
            return None
        kind, aux, _ = self._spec
        return kind, list(aux) if kind is dict else aux

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with `inner` substituted at every leaf."""
        spec = _fold(self._spec, inner._spec, lambda kind, aux, cs: (kind, aux, tuple(cs)))
        return PyTreeDef(spec, self._num_leaves * inner._num_leaves)

    def __eq__(self, other):
        if type(other) is not PyTreeDef:
            return NotImplemented
        return self._num_leaves == other._num_leaves and self._spec == other._spec

    def __hash__(self):
        try:
            return hash(self._spec)
        except TypeError:  # unhashable aux data: hash the shape alone, as JAX always does
            return hash(_fold(self._spec, None, lambda kind, aux, cs: (kind, tuple(cs))))

    def __repr__(self):
        return f"PyTreeDef({_fold(self._spec, '*', _node_str)})"


def _treedef(spec) -> PyTreeDef:
    return PyTreeDef(spec, _fold(spec, 1, lambda kind, aux, cs: sum(cs)))


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list, PyTreeDef]:
    """The leaves of `tree` (in order) and its structure."""
    leaves = []
    [spec] = _flatten_children((tree,), leaves, is_leaf)
    return leaves, PyTreeDef(spec, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    leaves = []
    _flatten_children((tree,), leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose elements have the given structures."""
    treedefs = list(treedefs)
    spec = (tuple, None, tuple(t._spec for t in treedefs))
    return PyTreeDef(spec, sum(t._num_leaves for t in treedefs))


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True for a leaf and for a node without children such as None or ()."""
    return treedef._spec is None or not treedef._spec[2]


def all_leaves(iterable: Iterable, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every item is a leaf by itself (a None is not: it is an empty node)."""
    if is_leaf is None:
        return all(_node_of(x) is None for x in iterable)
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


def is_tree_node(typ: type) -> bool:
    return typ in _nodes or (issubclass(typ, tuple) and hasattr(typ, "_fields"))


# ---------------------------------------------------------------------------------------------
# Mapping, reducing, transposing.


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply `f` leafwise; each tree in `rest` must have `tree`'s structure, or extend it."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    try:
        others = _flatten_rest(treedef, tree, rest, "tree_map tree", is_leaf)
    except ValueError as e:
        for k, other in enumerate(rest, 1):
            diff = first_difference(tree, other, prefix=True, is_leaf=is_leaf)
            if diff is not None:
                path, first, there = diff
                raise user_error(ValueError, (
                    f"tree_map: tree {k} does not match the structure of the first tree: at "
                    f"key path {path or '(the root)'} the first tree has {first}, but tree {k} "
                    f"has {there}.\nWhat to do: every tree after the first must have the "
                    "first tree's structure (or extend it below the first tree's leaves); "
                    "compare them with `jax.tree_util.tree_structure`.")) from None
        raise user_error(ValueError, str(e)) from None
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def _flatten_rest(treedef: PyTreeDef, tree, rest, name: str, is_leaf,
                  is_leaf_takes_path: bool = False) -> list[list]:
    """Each of `rest` flattened up to `treedef`; a mismatch raises JAX's key-path error."""
    try:
        return [treedef.flatten_up_to(other) for other in rest]
    except Exception:
        is_leaf = _with_path(is_leaf, is_leaf_takes_path)
        for other in rest:
            err = next(_prefix_error((), tree, other, is_leaf), None)
            if err is not None:
                raise err(name) from None
        raise


class _Unspecified:
    """Default for `initializer`/`identity`, since None is a legitimate value."""


_UNSPECIFIED = _Unspecified()


def tree_reduce(function: Callable[[T, Any], T], tree: Any,
                initializer: T | _Unspecified = _UNSPECIFIED,
                is_leaf: Callable[[Any], bool] | None = None) -> T:
    leaves = tree_leaves(tree, is_leaf)
    if isinstance(initializer, _Unspecified):
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                            identity: T | _Unspecified = _UNSPECIFIED,
                            is_leaf: Callable[[Any], bool] | None = None) -> T:
    """Reduce the leaves pairwise as a balanced tree, which `operation` must allow."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if isinstance(identity, _Unspecified):
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity

    def reduce(lo, hi):
        if hi - lo == 1:
            return leaves[lo]
        mid = (lo + hi) // 2
        return operation(reduce(lo, mid), reduce(mid, hi))

    return reduce(0, len(leaves))


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn an outer tree of inner trees into an inner tree of outer trees."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size = inner_treedef.num_leaves
    outer_size = outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    rows = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in zip(*rows)])


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Repeat each leaf of `prefix_tree` over the matching subtree of `full_tree`."""
    return tree_structure(full_tree).unflatten(broadcast_prefix(prefix_tree, full_tree, is_leaf))


def broadcast_prefix(prefix_tree: Any, full_tree: Any,
                     is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of `prefix_tree`, each repeated once per leaf of its subtree in `full_tree`."""
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    [subtrees] = _flatten_rest(treedef, prefix_tree, [full_tree],
                               "broadcast_prefix prefix_tree", is_leaf)
    result = []
    for x, subtree in zip(leaves, subtrees):
        result.extend([x] * len(tree_leaves(subtree)))
    return result


# ---------------------------------------------------------------------------------------------
# Key paths.


def _check_type(value, typ: type, cls) -> None:
    if not isinstance(value, typ):
        raise TypeError(f"{cls.__name__}() expects {typ.__name__}, got {type(value).__name__}")


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """Key of a tuple or list element: `[0]`."""

    idx: int

    def __post_init__(self):
        _check_type(self.idx, int, SequenceKey)

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """Key of a dict entry: `['a']`."""

    key: Hashable

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """Key of an attribute (namedtuple field, dataclass field): `.name`."""

    name: str

    def __post_init__(self):
        _check_type(self.name, str, GetAttrKey)

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """Key of a child of a custom node registered without keys: its position."""

    key: int

    def __post_init__(self):
        _check_type(self.key, int, FlattenedIndexKey)

    def __str__(self):
        return f"[<flat index {self.key}>]"


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Format a key path: `[0]['a'].b`, or `0/a/b` with `simple=True, separator='/'`."""
    return separator.join(map(_simple_keystr if simple else str, keys))


def _simple_keystr(key) -> str:
    match key:
        case SequenceKey(k) | DictKey(k) | GetAttrKey(k) | FlattenedIndexKey(k):
            return str(k)
    return str(key)


def _keyed_level(x):
    """`(node_type, aux, [(key, child), ...])` for a node, None for a leaf."""
    node = _node_of(x)
    if node is None:
        return None
    if node.flatten_with_keys is None:
        children, aux = _checked(node.flatten(x))
        return type(x), aux, [(FlattenedIndexKey(i), c) for i, c in enumerate(children)]
    pairs, aux = _checked(node.flatten_with_keys(x), "flatten_with_keys")
    return type(x), aux, list(pairs)


def _flatten_with_path(x, path: tuple, out: list, is_leaf):
    """Like `_flatten_node`, appending `(key_path, leaf)` pairs; `is_leaf` takes `(path, x)`."""
    level = None if is_leaf is not None and is_leaf(path, x) else _keyed_level(x)
    if level is None:
        out.append((path, x))
        return None
    kind, aux, pairs = level
    return kind, aux, tuple([_flatten_with_path(c, (*path, k), out, is_leaf) for k, c in pairs])


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like `tree_flatten`, each leaf paired with its key path."""
    out = []
    spec = _flatten_with_path(tree, (), out, _with_path(is_leaf, is_leaf_takes_path))
    return out, PyTreeDef(spec, len(out))


def _with_path(is_leaf, takes_path: bool):
    """`is_leaf` as a function of `(path, x)`."""
    if is_leaf is None or takes_path:
        return is_leaf
    return lambda _, x: is_leaf(x)


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[KeyPath, Any]]:
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """Like `tree_map`, with each leaf's key path as `f`'s first argument."""
    path_leaves, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = _flatten_rest(treedef, tree, rest, "tree_map_with_path tree", is_leaf,
                           is_leaf_takes_path)
    return treedef.unflatten(
        [f(path, x, *xs) for (path, x), *xs in zip(path_leaves, *others)])


def flatten_one_level(tree: Any) -> tuple[Iterable, Hashable]:
    """`(children, aux_data)` of a node; a leaf raises ValueError."""
    node = _node_of(tree)
    if node is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return _checked(node.flatten(tree))


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[Any, Any]], Hashable]:
    """`([(key, child), ...], aux_data)` of a node; a leaf raises ValueError."""
    level = _keyed_level(tree)
    if level is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return level[2], level[1]


def first_difference(a: Any, b: Any, prefix: bool = False,
                     is_leaf: Callable[[Any], bool] | None = None
                     ) -> tuple[str, str, str] | None:
    """Where the structures of two pytrees first differ, for error messages: `(key path,
    what a has there, what b has there)`, or None if the structures are equal (with
    `prefix`, if `a` is a prefix of `b`: a leaf of `a` matches any subtree of `b`)."""
    return _difference(a, b, (), prefix, is_leaf)


def _difference(a, b, path, prefix=False, is_leaf=None):
    if prefix and (_node_of(a) is None or (is_leaf is not None and is_leaf(a))):
        return None
    if tree_structure(a) == tree_structure(b):
        return None
    node_a, node_b = _node_of(a), _node_of(b)
    if node_a is None or node_b is None or type(a) is not type(b):
        return keystr(path), describe_node(a), describe_node(b)
    kids_a, aux_a = flatten_one_level_with_keys(a)
    kids_b, aux_b = flatten_one_level_with_keys(b)
    kids_a, kids_b = list(kids_a), list(kids_b)
    if aux_a != aux_b or [k for k, _ in kids_a] != [k for k, _ in kids_b]:
        return keystr(path), describe_node(a), describe_node(b)
    for (k, x), (_, y) in zip(kids_a, kids_b):
        found = _difference(x, y, path + (k,), prefix, is_leaf)
        if found is not None:
            return found
    return keystr(path), describe_node(a), describe_node(b)


def describe_node(x) -> str:
    """`an array`, `None`, `a tuple of 2 entries`, `a dict with keys ['a', 'b']`..."""
    if x is None:
        return "None"
    if _node_of(x) is None:
        aval = getattr(x, "aval", None)
        shown = aval.str_short() if aval is not None and hasattr(aval, "str_short") else ""
        return f"an array ({shown})" if shown else "a single value (a leaf)"
    if isinstance(x, dict):
        return f"a dict with keys {_sorted_keys(x)!r}"
    if isinstance(x, (list, tuple)) and not _is_namedtuple(x):
        n = len(x)
        return f"a {type(x).__name__} of {n} entr{'y' if n == 1 else 'ies'}"
    children, aux = flatten_one_level(x)
    n = len(list(children))
    return (f"a {type(x).__name__} of {n} entr{'y' if n == 1 else 'ies'} with metadata "
            f"{aux!r}")


# ---------------------------------------------------------------------------------------------
# Explaining why a tree is not a prefix of another.


def prefix_errors(prefix_tree: Any, full_tree: Any,
                  is_leaf: Callable[[Any], bool] | None = None
                  ) -> list[Callable[[str], ValueError]]:
    """One error factory (taking the tree's name) per place where the structures disagree."""
    return list(_prefix_error((), prefix_tree, full_tree, _with_path(is_leaf, False)))


def _prefix_error(path: KeyPath, prefix, full, is_leaf):
    """Yield error factories for `prefix` versus `full`; `is_leaf` takes `(path, x)`."""
    if (is_leaf is not None and is_leaf(path, prefix)) or _node_of(prefix) is None:
        return
    if type(prefix) is not type(full):
        yield _structure_error(path, "different types", (
            f"\n    {type(prefix)}\n"
            f"but at the same key path the full pytree has a subtree of different type\n"
            f"    {type(full)}."))
        return
    _, prefix_aux, prefix_pairs = _keyed_level(prefix)
    _, full_aux, full_pairs = _keyed_level(full)
    prefix_keys = [k for k, _ in prefix_pairs]
    full_keys = [k for k, _ in full_pairs]
    if isinstance(prefix, (list, tuple)):
        if len(prefix) != len(full):
            name = type(prefix).__name__
            yield _structure_error(path, f"different lengths of {name}", (
                f" {name} of length {len(prefix)}, but the full pytree has a subtree of the "
                f"same type but of length {len(full)}."))
            return
    elif len(prefix_keys) != len(full_keys):
        diff = [k for k in prefix_keys if k not in full_keys]
        diff += [k for k in full_keys if k not in prefix_keys]
        yield _structure_error(path, "different numbers of pytree children", (
            f"\n    {type(prefix)}\n"
            f"with {len(prefix_keys)} child keys\n"
            f"    {keystr(prefix_keys, simple=True, separator=' ')}\n"
            f"but at the same key path the full pytree has a subtree of the same type but with "
            f"{len(full_keys)} child keys\n"
            f"    {keystr(full_keys, simple=True, separator=' ')}\n"
            f"so the symmetric difference on key sets is\n"
            f"    {keystr(diff, simple=True, separator=' ')}"))
        return
    if prefix_aux != full_aux:
        diff = "\n".join(difflib.ndiff(str(prefix_aux).splitlines(), str(full_aux).splitlines()))
        yield _structure_error(path, "different pytree metadata", (
            f"\n    {type(prefix)}\n"
            f"with metadata\n"
            f"    {prefix_aux}\n"
            f"but at the same key path the full pytree has a subtree of the same type but with "
            f"metadata\n"
            f"    {full_aux}\n"
            f"so the diff in the metadata at these pytree nodes is\n"
            f"{textwrap.indent(diff, '    ')}"))
        return
    for key, (_, p), (_, f) in zip(prefix_keys, prefix_pairs, full_pairs):
        yield from _prefix_error((*path, key), p, f, is_leaf)


def _structure_error(path: KeyPath, what: str, details: str) -> Callable[[str], ValueError]:
    """An error factory: the message names the tree (e.g. 'tree_map tree') where it is used."""
    return lambda name: ValueError(
        f"pytree structure error: {what} at key path\n    {name}{keystr(path)}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type{details}")


# ---------------------------------------------------------------------------------------------
# Registration.


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Make `nodetype` a node: `flatten_func(x) -> (children, aux_data)` and
    `unflatten_func(aux_data, children) -> x`; aux_data should be hashable and comparable."""
    if nodetype in _nodes:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _nodes[nodetype] = _Node(flatten_func, unflatten_func, flatten_with_keys_func)


def register_pytree_node_class(cls):
    """Class decorator: register using the `tree_flatten` method and `tree_unflatten`
    classmethod."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable, flatten_func: Callable | None = None):
    """Register a node whose children have meaningful keys, for key paths."""
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = _checked(flatten_with_keys(x), "flatten_with_keys")
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls):
    """Class decorator: register using `tree_flatten_with_keys` (and `tree_flatten` if
    present) methods and the `tree_unflatten` classmethod."""
    flatten = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten, flatten)
    return cls


def register_dataclass(nodetype, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()):
    """Register a class whose `data_fields` are children and `meta_fields` are static aux data.

    For a dataclass both may be omitted: fields marked `field(metadata=dict(static=True))`
    (see `jax.tree.static`) are meta, the others data. Usable as a decorator.
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields must both be specified when "
                f"either is specified. Got {data_fields=} {meta_fields=}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields are required when nodetype is "
                f"not a dataclass. Got {nodetype=}.")
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    _check_dataclass_fields(nodetype, data_fields, meta_fields, drop_fields)

    def flatten(x):
        return (tuple(getattr(x, name) for name in data_fields),
                tuple(getattr(x, name) for name in meta_fields))

    def flatten_with_keys(x):
        return ([(GetAttrKey(name), getattr(x, name)) for name in data_fields],
                tuple(getattr(x, name) for name in meta_fields))

    def unflatten(meta, data):
        return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, data)))

    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


def _check_dataclass_fields(nodetype, data_fields, meta_fields, drop_fields) -> None:
    """Data and meta fields must be disjoint and, for a dataclass, be its `init` fields."""
    named = {*data_fields, *meta_fields}
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        if named != init_fields:
            msg = ("data_fields and meta_fields must include all dataclass fields with "
                   "``init=True`` and only them.")
            if missing := init_fields - named:
                msg += (f" Missing fields: {missing}. Add them to drop_fields to suppress this "
                        "error.")
            if unexpected := named - init_fields:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)
    if overlap := set(data_fields) & set(meta_fields):
        raise ValueError(
            f"data_fields and meta_fields must not overlap. Overlapping fields: {overlap}.")


def static(**kwargs):
    """`dataclasses.field` marked static, so `register_dataclass` makes it aux data."""
    metadata = {"static": True, **(kwargs.pop("metadata", {}) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


def register_static(cls):
    """Register `cls` as a node with no children: instances become aux data, not leaves."""
    register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x)
    return cls


class _DefaultRegistry:
    """`jax.tree_util.default_registry`: the registry behind every function of this module."""

    def flatten(self, tree, leaf_predicate=None):
        return tree_flatten(tree, leaf_predicate)

    def flatten_with_path(self, tree, leaf_predicate=None):
        return tree_flatten_with_path(tree, leaf_predicate, is_leaf_takes_path=True)

    def flatten_one_level(self, tree):
        """None for a leaf, unlike the module-level function, which raises."""
        return None if _node_of(tree) is None else flatten_one_level(tree)

    def flatten_one_level_with_keys(self, tree):
        return None if _node_of(tree) is None else flatten_one_level_with_keys(tree)

    def is_node(self, typ):
        return is_tree_node(typ)

    def register_node(self, nodetype, to_iterable, from_iterable, to_iterable_with_keys=None):
        register_pytree_node(nodetype, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(self, nodetype, data_fields, meta_fields):
        register_dataclass(nodetype, data_fields, meta_fields)

    def __repr__(self):
        return "didax.tree_util.default_registry"


default_registry = _DefaultRegistry()


# ---------------------------------------------------------------------------------------------
# The built-in node types.


def _sequence_keys(x):
    return [(SequenceKey(i), c) for i, c in enumerate(x)], None


def _dict_flatten(x):
    keys = _sorted_keys(x)
    return tuple(x[k] for k in keys), keys


def _dict_keys(x):
    keys = _sorted_keys(x)
    return [(DictKey(k), x[k]) for k in keys], keys


def _defaultdict_flatten(x):
    values, keys = _dict_flatten(x)
    return values, (x.default_factory, keys)


def _defaultdict_keys(x):
    pairs, keys = _dict_keys(x)
    return pairs, (x.default_factory, keys)


# Namedtuples are nodes without registration; `_build` rebuilds them from their type.
_NAMEDTUPLE = _Node(
    flatten=lambda x: (x, None),
    unflatten=None,
    flatten_with_keys=lambda x: ([(GetAttrKey(f), c) for f, c in zip(x._fields, x)], None))

register_pytree_node(tuple, lambda x: (x, None), lambda _, xs: tuple(xs), _sequence_keys)
register_pytree_node(list, lambda x: (x, None), lambda _, xs: list(xs), _sequence_keys)
register_pytree_node(dict, _dict_flatten, lambda keys, xs: dict(zip(keys, xs)), _dict_keys)
register_pytree_node(NoneType, lambda x: ((), None), lambda _, xs: None, lambda x: ((), None))
register_pytree_node(collections.OrderedDict, lambda x: (tuple(x.values()), tuple(x)),
                     lambda keys, xs: collections.OrderedDict(zip(keys, xs)),
                     lambda x: ([(DictKey(k), c) for k, c in x.items()], tuple(x)))
register_pytree_node(collections.defaultdict, _defaultdict_flatten,
                     lambda aux, xs: collections.defaultdict(aux[0], zip(aux[1], xs)),
                     _defaultdict_keys)


# ---------------------------------------------------------------------------------------------
# Partial.


class _HashableCallableShim:
    """Wraps a `functools.partial` used as a Partial's func, so that functools does not merge
    the two (which would turn the inner partial's static arguments into leaves)."""

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        if isinstance(other, _HashableCallableShim):
            return self.fun == other.fun
        return self.fun == other

    def __repr__(self):
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):
    """A `functools.partial` that is a pytree: its arguments are the leaves and its function
    is static, so it can be passed through transformations like jit."""

    def __new__(cls, func, *args, **kw):
        if not isinstance(func, functools.partial):
            return super().__new__(cls, func, *args, **kw)
        shim = _HashableCallableShim(func)
        out = super().__new__(cls, shim, *args, **kw)
        shim.func, shim.args, shim.keywords = func.func, func.args, func.keywords
        return out


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, xs: Partial(func, *xs[0], **xs[1]))
