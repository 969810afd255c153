"""Tests of didax.tree_util and didax.tree against JAX's behaviour (expected values are JAX's)."""

import collections
import dataclasses
import functools
import pickle

import numpy as np
import pytest

import didax.tree as dtree
import didax.tree_util as tu
from didax.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    Partial,
    PyTreeDef,
    SequenceKey,
)

Point = collections.namedtuple("Point", "x y")
Other = collections.namedtuple("Other", "x y")


class Box:
    """A custom node: `items` are children, `label` is aux data."""

    def __init__(self, items, label):
        self.items, self.label = items, label

    def __eq__(self, other):
        return type(other) is Box and (self.items, self.label) == (other.items, other.label)


tu.register_pytree_node(Box, lambda b: (b.items, b.label), lambda label, xs: Box(list(xs), label))


@tu.register_pytree_node_class
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


@tu.register_pytree_with_keys_class
class Keyed:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten_with_keys(self):
        return ((GetAttrKey("a"), self.a), (DictKey("bee"), self.b)), "aux"

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


@tu.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="p", metadata=dict(static=True))


@tu.register_static
class Config:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return type(other) is Config and other.n == self.n

    def __hash__(self):
        return hash(self.n)

    def __repr__(self):
        return f"Config({self.n})"


# (tree, leaves, str(treedef)) for every kind of node, as JAX prints them.
CASES = [
    (1, [1], "PyTreeDef(*)"),
    (None, [], "PyTreeDef(None)"),
    ((), [], "PyTreeDef(())"),
    ([], [], "PyTreeDef([])"),
    ({}, [], "PyTreeDef({})"),
    ((1,), [1], "PyTreeDef((*,))"),
    ((1, [2, 3], {"a": 4}), [1, 2, 3, 4], "PyTreeDef((*, [*, *], {'a': *}))"),
    ({"b": 1, "a": (2, None)}, [2, 1], "PyTreeDef({'a': (*, None), 'b': *})"),
    ({3: "x", 1: "y"}, ["y", "x"], "PyTreeDef({1: *, 3: *})"),
    ([None, 1, (None,)], [1], "PyTreeDef([None, *, (None,)])"),
    (Point(1, (2, 3)), [1, 2, 3], "PyTreeDef(CustomNode(namedtuple[Point], [*, (*, *)]))"),
    (collections.OrderedDict([("b", 1), ("a", 2)]), [1, 2],
     "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"),
    (collections.defaultdict(list, {"b": 1, "a": 2}), [2, 1],
     "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))"),
    (Box([1, {"q": 2}], "meta"), [1, 2], "PyTreeDef(CustomNode(Box[meta], [*, {'q': *}]))"),
    (Params(1, (2,)), [1, 2], "PyTreeDef(CustomNode(Params[('p',)], [*, (*,)]))"),
    (Config(3), [], "PyTreeDef(CustomNode(Config[Config(3)], []))"),
    (Partial(max, 1, key=2), [1, 2],
     "PyTreeDef(CustomNode(Partial[<built-in function max>], [(*,), {'key': *}]))"),
]


@pytest.mark.parametrize("tree, leaves, text", CASES, ids=[c[2] for c in CASES])
def test_flatten_round_trip(tree, leaves, text):
    got_leaves, treedef = tu.tree_flatten(tree)
    assert got_leaves == leaves
    assert repr(treedef) == str(treedef) == text
    assert treedef.num_leaves == len(leaves)
    rebuilt = tu.tree_unflatten(treedef, got_leaves)
    assert type(rebuilt) is type(tree)
    assert tu.tree_structure(rebuilt) == treedef
    assert tu.tree_leaves(rebuilt) == leaves


def test_unflatten_rebuilds_each_node_type():
    assert tu.tree_unflatten(tu.tree_structure({"b": 0, "a": 0}), [1, 2]) == {"a": 1, "b": 2}
    point = tu.tree_unflatten(tu.tree_structure(Point(0, 0)), [5, 6])
    assert type(point) is Point and point == Point(5, 6)
    od = tu.tree_unflatten(tu.tree_structure(collections.OrderedDict(b=0, a=0)), [1, 2])
    assert type(od) is collections.OrderedDict and list(od.items()) == [("b", 1), ("a", 2)]
    dd = tu.tree_unflatten(tu.tree_structure(collections.defaultdict(int, a=0)), [7])
    assert type(dd) is collections.defaultdict and dd.default_factory is int and dd["a"] == 7
    assert tu.tree_unflatten(tu.tree_structure(Box([0, 0], "m")), [1, 2]) == Box([1, 2], "m")
    params = tu.tree_unflatten(tu.tree_structure(Params(0, 0, name="q")), [3, 4])
    assert params == Params(3, 4, name="q")
    partial = tu.tree_unflatten(tu.tree_structure(Partial(max, 0, key=0)), [1, abs])
    assert type(partial) is Partial and partial.args == (1,) and partial.keywords == {"key": abs}


def test_unflatten_accepts_any_iterable():
    treedef = tu.tree_structure((0, [0]))
    assert tu.tree_unflatten(treedef, iter([1, 2])) == (1, [2])
    assert treedef.unflatten(x for x in (1, 2)) == (1, [2])


def test_unregistered_objects_and_subclasses_are_leaves():
    class D(dict):
        pass

    class T(tuple):
        pass

    array = np.ones(3)
    tree = [D(a=1), T((1, 2)), array, 2.5, "s", object]
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves[:2] == [D(a=1), T((1, 2))] and leaves[2] is array and leaves[3:] == tree[3:]
    assert str(treedef) == "PyTreeDef([*, *, *, *, *, *])"


def test_is_leaf_stops_traversal():
    tree = [None, (1, 2), {"a": (3,)}]
    leaves, treedef = tu.tree_flatten(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), (3,)]
    assert str(treedef) == "PyTreeDef([None, *, {'a': *}])"
    assert tu.tree_leaves(tree, is_leaf=lambda x: x is None) == [None, 1, 2, 3]
    assert tu.tree_flatten((1, 2), is_leaf=lambda x: True) == ([(1, 2)], tu.tree_structure(0))


def test_dict_keys_that_do_not_sort_raise():
    with pytest.raises(ValueError, match="Comparator raised exception while sorting"):
        tu.tree_flatten({1: 1, "a": 2})


def test_custom_flatten_must_return_a_pair():
    class Bad:
        pass

    tu.register_pytree_node(Bad, lambda x: [1, 2], lambda aux, xs: Bad())
    with pytest.raises(ValueError, match=r"should return a \(children, aux_data\) tuple, got"):
        tu.tree_flatten([Bad()])


# ---------------------------------------------------------------------------------------------
# PyTreeDef


def test_treedef_equality_and_hash():
    s = tu.tree_structure
    assert s((1, 2)) == s(("a", np.zeros(2)))
    assert hash(s((1, 2))) == hash(s((3, 4)))
    assert s({"a": 1, "b": 2}) == s({"b": 0, "a": 0})
    assert s((1, 2)) != s([1, 2])
    assert s(Point(1, 2)) != s(Other(1, 2))
    assert s({"a": 1}) != s(collections.OrderedDict(a=1))
    assert s(collections.OrderedDict(a=1, b=2)) != s(collections.OrderedDict(b=1, a=2))
    assert s(1) != s(None)
    assert s(Box([1], "x")) != s(Box([1], "y"))
    assert s((1, 2)) != (1, 2)
    assert len({s((1, 2)), s((3, 4)), s([1])}) == 2


def test_treedef_hash_with_unhashable_aux_data():
    a, b = tu.tree_structure(Box([1], [1])), tu.tree_structure(Box([2], [1]))
    assert a == b and hash(a) == hash(b)
    assert tu.tree_structure(Box([1], [1])) != tu.tree_structure(Box([1], [2]))


def test_treedef_properties():
    treedef = tu.tree_structure((1, [2, None], {"a": 3}))
    assert treedef.num_leaves == 3
    assert treedef.num_nodes == 7
    assert [str(c) for c in treedef.children()] == [
        "PyTreeDef(*)", "PyTreeDef([*, None])", "PyTreeDef({'a': *})"]
    assert [c.num_leaves for c in tu.treedef_children(treedef)] == [1, 1, 1]
    assert treedef.node_data() == (tuple, None)
    assert tu.tree_structure({"b": 1, "a": 2}).node_data() == (dict, ["a", "b"])
    assert tu.tree_structure(Box([], "m")).node_data() == (Box, "m")
    assert tu.tree_structure(Point(1, 2)).node_data() == (Point, None)
    assert tu.tree_structure(5).node_data() is None
    assert tu.tree_structure(5).children() == []
    assert tu.tree_structure(5).num_nodes == 1


def test_treedef_is_leaf():
    assert tu.treedef_is_leaf(tu.tree_structure(3))
    assert tu.treedef_is_leaf(tu.tree_structure(None))
    assert tu.treedef_is_leaf(tu.tree_structure(()))
    assert not tu.treedef_is_leaf(tu.tree_structure((3,)))


def test_treedef_tuple_and_compose():
    parts = [tu.tree_structure(1), tu.tree_structure(None), tu.tree_structure({"a": 1})]
    joined = tu.treedef_tuple(parts)
    assert str(joined) == "PyTreeDef((*, None, {'a': *}))"
    assert joined == tu.tree_structure((0, None, {"a": 0})) and joined.num_leaves == 2
    assert str(tu.treedef_tuple([])) == "PyTreeDef(())"
    outer, inner = tu.tree_structure((1, (2, 3))), tu.tree_structure([1, None, 2])
    composed = outer.compose(inner)
    assert str(composed) == "PyTreeDef(([*, None, *], ([*, None, *], [*, None, *])))"
    assert composed.num_leaves == 6
    assert tu.tree_structure(1).compose(inner) == inner


def test_unflatten_leaf_count_errors():
    treedef = tu.tree_structure((1, 2))
    with pytest.raises(ValueError, match=r"^Too few leaves for PyTreeDef; expected 2, got 1$"):
        treedef.unflatten([1])
    with pytest.raises(ValueError, match=r"^Too many leaves for PyTreeDef; expected 2\.$"):
        treedef.unflatten([1, 2, 3])
    with pytest.raises(TypeError):
        tu.tree_unflatten(tu.tree_structure(1), 5)


def test_treedef_pickles():
    treedef = tu.tree_structure((1, {"a": None, "b": [2]}, Point(3, 4)))
    assert pickle.loads(pickle.dumps(treedef)) == treedef


FLATTEN_UP_TO_ERRORS = [
    ((1, 2), (1, 2, 3), "Tuple arity mismatch: 3 != 2; tuple: (1, 2, 3)."),
    ((1, 2), [1, 2], "Expected tuple, got [1, 2]."),
    ([1, 2], [1], "List arity mismatch: 1 != 2; list: [1]."),
    ({"a": 1, "c": 2}, {"c": 1, "b": 2},
     "Dict key mismatch; expected keys: ['a', 'c']; present keys: ['b', 'c']."),
    ({"a": 1}, collections.OrderedDict(a=1),  # (the repr Python versions spell differently)
     f"Expected dict, got {collections.OrderedDict(a=1)!r}."),
    (Point(1, 2), Other(1, 2),
     f"Named tuple type mismatch: expected type: <class '{__name__}.Point'>, "
     "tuple: Other(x=1, y=2)."),
    (Point(1, 2), (1, 2), "Expected named tuple, got (1, 2)."),
    (Box([1], "a"), Box([1], "b"), "Mismatch custom node data: 'a' != 'b'; value: "),
    (Box([1], "a"), Box([1, 2], "a"), "Custom type arity mismatch: 2 != 1; value: "),
    (Box([1], "a"), [1],
     f"Custom node type mismatch: expected type: <class '{__name__}.Box'>, value: [1]."),
    ((1, None), (1, 2), "Expected None, got 2.\n\nIn previous releases of JAX"),
]


@pytest.mark.parametrize("tree, other, message", FLATTEN_UP_TO_ERRORS,
                         ids=range(len(FLATTEN_UP_TO_ERRORS)))
def test_flatten_up_to_errors(tree, other, message):
    with pytest.raises(ValueError) as info:
        tu.tree_structure(tree).flatten_up_to(other)
    assert str(info.value).startswith(message)


def test_flatten_up_to_allows_deeper_trees():
    treedef = tu.tree_structure((1, {"a": 2}))
    assert treedef.flatten_up_to(([3, 4], {"a": (None, 5)})) == [[3, 4], (None, 5)]
    assert tu.tree_structure(1).flatten_up_to(None) == [None]


# ---------------------------------------------------------------------------------------------
# tree_map and friends


def test_tree_map():
    tree = {"a": (1, 2), "b": [3, None]}
    assert tu.tree_map(lambda x: x * 10, tree) == {"a": (10, 20), "b": [30, None]}
    assert tu.tree_map(lambda x, y: x + y, tree, tree) == {"a": (2, 4), "b": [6, None]}
    assert tu.tree_map(lambda x: x, None) is None
    assert dtree.map(lambda x, y, z: x + y + z, [1, 2], [10, 20], [100, 200]) == [111, 222]


def test_tree_map_rest_may_nest_deeper_under_leaves():
    got = tu.tree_map(lambda x, y: (x, y), [1, (2, 3)], [{"a": 1}, (None, [4])])
    assert got == [(1, {"a": 1}), ((2, None), (3, [4]))]


def test_tree_map_is_leaf():
    got = tu.tree_map(lambda x: x is None, [None, 1, (None,)], is_leaf=lambda x: x is None)
    assert got == [True, False, (True,)]
    got = tu.tree_map(len, [(1, 2), (3,)], is_leaf=lambda x: isinstance(x, tuple))
    assert got == [2, 1]


# The first line of tree_map's error: which tree, the key path, what each tree has there.
TREE_MAP_ERRORS = [
    ((1, 2), (1, 2, 3),
     "tree_map: tree 1 does not match the structure of the first tree: at key path (the root) "
     "the first tree has a tuple of 2 entries, but tree 1 has a tuple of 3 entries."),
    ((1, (2, 3)), (1, [2, 3]),
     "tree_map: tree 1 does not match the structure of the first tree: at key path [1] the "
     "first tree has a tuple of 2 entries, but tree 1 has a list of 2 entries."),
    ({"a": 1}, {"a": 1, "b": 2},
     "tree_map: tree 1 does not match the structure of the first tree: at key path (the root) "
     "the first tree has a dict with keys ('a',), but tree 1 has a dict with keys ('a', 'b')."),
    ({"a": 1, "b": (2,)}, {"a": 1},
     "tree_map: tree 1 does not match the structure of the first tree: at key path (the root) "
     "the first tree has a dict with keys ('a', 'b'), but tree 1 has a dict with keys ('a',)."),
    ({"x": [Box([1], "a")]}, {"x": [Box([1], "b")]},
     "tree_map: tree 1 does not match the structure of the first tree: at key path ['x'][0] "
     "the first tree has a Box of 1 entry with metadata 'a', but tree 1 has a Box of 1 entry "
     "with metadata 'b'."),
    ([1, None], [2, 3],
     "tree_map: tree 1 does not match the structure of the first tree: at key path [1] the "
     "first tree has None, but tree 1 has a single value (a leaf)."),
]


@pytest.mark.parametrize("tree, other, message", TREE_MAP_ERRORS,
                         ids=range(len(TREE_MAP_ERRORS)))
def test_tree_map_structure_errors(tree, other, message):
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda *xs: None, tree, other)  # the line the message names
    lines = str(info.value).splitlines()
    assert lines[0] == message
    assert lines[1] == f"  at {__file__}:{info.traceback[0].lineno + 1} " \
                       "(test_tree_map_structure_errors)"


def test_tree_map_error_names_the_failing_tree():
    with pytest.raises(ValueError, match="tree 2 does not match the structure of the first "
                                         "tree: at key path .the root. the first tree has a "
                                         "list of 1 entry, but tree 2 has a list of 2 entries"):
        tu.tree_map(lambda *xs: None, [1], [2], [3, 4])


def test_tree_reduce():
    assert tu.tree_reduce(lambda a, b: a + b, [1, (2, {"x": 3})]) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [1, 2, 3], 10) == 16
    assert tu.tree_reduce(lambda a, b: a + b, [], None) is None
    with pytest.raises(TypeError):
        tu.tree_reduce(lambda a, b: a + b, [])
    assert dtree.reduce(max, {"a": 4, "b": (7, 1)}) == 7


def test_tree_reduce_associative():
    pair = tu.tree_reduce_associative(lambda a, b: (a, b), [1, 2, 3, 4, 5])
    assert pair == ((1, 2), (3, (4, 5)))
    assert tu.tree_reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    assert tu.tree_reduce_associative(lambda a, b: a + b, [[7]]) == 7
    with pytest.raises(TypeError, match="Must specify identity"):
        tu.tree_reduce_associative(lambda a, b: a + b, [])


def test_tree_all_and_all_leaves():
    assert tu.tree_all([1, True, (2.0,)]) and not tu.tree_all([1, (0,)])
    assert tu.tree_all([]) and tu.tree_all(None)
    assert tu.all_leaves([1, np.ones(2), "s"])
    assert not tu.all_leaves([1, None])
    assert not tu.all_leaves([1, (2,)])
    assert tu.all_leaves([1, (2,)], is_leaf=lambda x: isinstance(x, tuple))
    assert tu.all_leaves([])


def test_tree_transpose():
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0, 0))
    tree = [(1, 2, 3), (4, 5, 6)]
    assert tu.tree_transpose(outer, inner, tree) == ([1, 4], [2, 5], [3, 6])
    assert tu.tree_transpose(outer, None, tree) == ([1, 4], [2, 5], [3, 6])
    with pytest.raises(TypeError) as info:
        tu.tree_transpose(outer, tu.tree_structure((0, 0)), tree)
    assert str(info.value) == ("Mismatch\nPyTreeDef([(*, *, *), (*, *, *)])\n != \n"
                               "PyTreeDef([(*, *), (*, *)])")


def test_tree_broadcast():
    got = tu.tree_broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0)))
    assert got == (1, {"a": 2, "b": 2}, (3, 3))
    assert tu.tree_broadcast(1, None) is None
    assert dtree.broadcast({"a": 1}, {"a": [0, 0]}) == {"a": [1, 1]}
    with pytest.raises(ValueError, match=r"different lengths of tuple at key path\n"
                                         r"    broadcast_prefix prefix_tree\n"):
        tu.tree_broadcast((1, 2), (0, 0, 0))


def test_flatten_one_level():
    assert tu.flatten_one_level((1, 2)) == ((1, 2), None)
    assert tu.flatten_one_level({"b": 1, "a": 2}) == ((2, 1), ("a", "b"))
    assert tu.flatten_one_level(None) == ((), None)
    children, aux = tu.flatten_one_level(Box([1, [2]], "m"))
    assert list(children) == [1, [2]] and aux == "m"
    with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
        tu.flatten_one_level(1)
    pairs, aux = tu.flatten_one_level_with_keys(Point(1, 2))
    assert list(pairs) == [(GetAttrKey("x"), 1), (GetAttrKey("y"), 2)]
    pairs, aux = tu.flatten_one_level_with_keys({"b": 1, "a": 2})
    assert list(pairs) == [(DictKey("a"), 2), (DictKey("b"), 1)] and aux == ("a", "b")
    assert tu.default_registry.flatten_one_level(1) is None


def test_is_tree_node():
    for typ in [tuple, list, dict, type(None), Point, collections.OrderedDict, Box, Params]:
        assert tu.is_tree_node(typ), typ
    for typ in [int, np.ndarray, str, object]:
        assert not tu.is_tree_node(typ), typ
    assert tu.default_registry.is_node(list)


# ---------------------------------------------------------------------------------------------
# Key paths


def test_key_entries():
    assert [repr(k) for k in (SequenceKey(0), DictKey("a"), GetAttrKey("x"),
                              FlattenedIndexKey(3))] == [
        "SequenceKey(idx=0)", "DictKey(key='a')", "GetAttrKey(name='x')",
        "FlattenedIndexKey(key=3)"]
    assert [str(k) for k in (SequenceKey(0), DictKey("a"), DictKey(1), GetAttrKey("x"),
                             FlattenedIndexKey(3))] == [
        "[0]", "['a']", "[1]", ".x", "[<flat index 3>]"]
    assert SequenceKey(0) == SequenceKey(0) and hash(DictKey("a")) == hash(DictKey("a"))
    assert SequenceKey(0) != FlattenedIndexKey(0)
    assert SequenceKey(idx=2).idx == 2 and DictKey(key=1).key == 1
    with pytest.raises(AttributeError):
        SequenceKey(0).idx = 1
    with pytest.raises(TypeError):
        SequenceKey("a")
    with pytest.raises(TypeError):
        GetAttrKey(1)
    assert pickle.loads(pickle.dumps(GetAttrKey("w"))) == GetAttrKey("w")
    match DictKey("k"):
        case DictKey(key):
            assert key == "k"


def test_keystr():
    path = (SequenceKey(0), DictKey("a"), GetAttrKey("b"), FlattenedIndexKey(2))
    assert tu.keystr(path) == "[0]['a'].b[<flat index 2>]"
    assert tu.keystr(path, simple=True, separator="/") == "0/a/b/2"
    assert tu.keystr(()) == ""


def test_flatten_with_path_over_every_node_kind():
    tree = [Box([1, {"q": 2}], "m"), Params(3, (4,)), Config(0), Keyed(5, 6), Point(7, [8]),
            collections.OrderedDict(z=9, y=10), collections.defaultdict(int, k=11),
            Partial(max, 12, key=13), {"a": None, "b": 14}]
    path_leaves, treedef = tu.tree_flatten_with_path(tree)
    assert [(tu.keystr(p), x) for p, x in path_leaves] == [
        ("[0][<flat index 0>]", 1), ("[0][<flat index 1>]['q']", 2), ("[1].w", 3),
        ("[1].b[0]", 4), ("[3].a", 5), ("[3]['bee']", 6), ("[4].x", 7), ("[4].y[0]", 8),
        ("[5]['z']", 9), ("[5]['y']", 10), ("[6]['k']", 11), ("[7][<flat index 0>][0]", 12),
        ("[7][<flat index 1>]['key']", 13), ("[8]['b']", 14)]
    assert path_leaves[0][0] == (SequenceKey(0), FlattenedIndexKey(0))
    assert treedef == tu.tree_structure(tree)
    assert tu.tree_flatten_with_path(5) == ([((), 5)], tu.tree_structure(0))


def test_flatten_with_path_is_leaf():
    tree = {"a": [1, (2,)], "b": None}
    got = tu.tree_leaves_with_path(tree, is_leaf=lambda p, x: len(p) == 2,
                                   is_leaf_takes_path=True)
    assert got == [((DictKey("a"), SequenceKey(0)), 1), ((DictKey("a"), SequenceKey(1)), (2,))]
    got = dtree.leaves_with_path(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert [x for _, x in got] == [1, (2,)]


def test_tree_map_with_path():
    got = tu.tree_map_with_path(lambda p, x, y: (tu.keystr(p), x, y),
                                {"a": [1, 2]}, {"a": [3, (4,)]})
    assert got == {"a": [("['a'][0]", 1, 3), ("['a'][1]", 2, (4,))]}
    assert dtree.map_with_path(lambda p, x: x + p[0].idx, [1, 2, 3]) == [1, 3, 5]
    with pytest.raises(ValueError, match=r"different lengths of list at key path\n"
                                         r"    tree_map_with_path tree\['a'\]\n"):
        tu.tree_map_with_path(lambda p, x, y: x, {"a": [1, 2]}, {"a": [3]})


# ---------------------------------------------------------------------------------------------
# Registration


def test_duplicate_registration_raises():
    for typ in [Box, tuple, collections.OrderedDict]:
        with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
            tu.register_pytree_node(typ, lambda x: ((), None), lambda aux, xs: None)


def test_register_pytree_with_keys_function():
    class Node:
        def __init__(self, left, right):
            self.left, self.right = left, right

    tu.register_pytree_with_keys(
        Node, lambda n: (((GetAttrKey("left"), n.left), (GetAttrKey("right"), n.right)), None),
        lambda aux, xs: Node(*xs))
    node = tu.tree_map(lambda x: x + 1, Node(1, (2,)))
    assert (node.left, node.right) == (2, (3,))
    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Node(1, 2))]
    assert paths == [".left", ".right"]


def test_register_dataclass_explicit_fields_on_plain_class():
    class P:
        def __init__(self, a, b):
            self.a, self.b = a, b

    assert tu.register_dataclass(P, data_fields=["a"], meta_fields=["b"]) is P
    leaves, treedef = tu.tree_flatten(P(1, 2))
    assert leaves == [1] and str(treedef) == "PyTreeDef(CustomNode(P[(2,)], [*]))"
    p = treedef.unflatten([5])
    assert (p.a, p.b) == (5, 2)
    assert tu.tree_leaves_with_path(P(1, 2)) == [((GetAttrKey("a"),), 1)]


def test_register_dataclass_static_fields():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        op: str = dtree.static(default="add")

    leaves, treedef = dtree.flatten(Op(1))
    assert leaves == [1] and str(treedef) == "PyTreeDef(CustomNode(Op[('add',)], [*]))"
    assert dtree.structure(Op(1, "mul")) != treedef
    assert dtree.unflatten(treedef, [2]) == Op(2)


def test_register_dataclass_errors():
    @dataclasses.dataclass
    class D:
        x: int
        s: str
        y: int = 0

    with pytest.raises(ValueError, match=r"Missing fields: \{'y'\}\. Add them to drop_fields"):
        tu.register_dataclass(D, ["x"], ["s"])
    with pytest.raises(ValueError, match=r"must not overlap. Overlapping fields: \{'s'\}"):
        tu.register_dataclass(D, ["x", "s"], ["s", "y"])
    with pytest.raises(TypeError, match="must both be specified"):
        tu.register_dataclass(D, ["x"], None)
    with pytest.raises(TypeError, match="required when nodetype is not a dataclass"):
        tu.register_dataclass(int)
    tu.register_dataclass(D, ["y", "x"], ["s"])
    assert tu.tree_leaves(D(1, "q", 2)) == [2, 1]


def test_register_static():
    leaves, treedef = tu.tree_flatten([Config(1), 2])
    assert leaves == [2]
    assert tu.tree_unflatten(treedef, [3])[0] == Config(1)
    assert treedef != tu.tree_structure([Config(2), 2])


def test_register_pytree_node_class():
    pair = tu.tree_map(lambda x: x * 2, Pair(1, [2]))
    assert type(pair) is Pair and (pair.a, pair.b) == (2, [4])
    assert str(tu.tree_structure(Pair(1, 2))) == "PyTreeDef(CustomNode(Pair[None], [*, *]))"


def test_custom_unflatten_receives_a_tuple():
    received = []

    class C:
        pass

    tu.register_pytree_node(C, lambda c: ([1, 2], None),
                            lambda aux, xs: received.append(xs) or C())
    tu.tree_map(lambda x: x, C())
    assert received == [(1, 2)]


# ---------------------------------------------------------------------------------------------
# Partial


def test_partial_is_a_pytree_with_static_func():
    p = Partial(lambda a, b, scale: (a + b) * scale, 1, scale=2)
    doubled = tu.tree_map(lambda x: x * 10, p)
    assert type(doubled) is Partial and doubled(3) == (10 + 3) * 20
    assert tu.tree_structure(p) == tu.tree_structure(Partial(p.func, 5, scale=6))
    assert tu.tree_structure(p) != tu.tree_structure(Partial(max, 5, scale=6))


def test_partial_of_a_partial_keeps_inner_arguments_static():
    inner = functools.partial(max, 1)
    p = Partial(inner, 2)
    assert tu.tree_leaves(p) == [2]
    assert p() == 2 and p(5) == 5
    assert (p.func.func, p.func.args) == (max, (1,))


# ---------------------------------------------------------------------------------------------
# Public surface


TREE_UTIL_NAMES = """
DictKey FlattenedIndexKey GetAttrKey KeyEntry KeyPath Partial PyTreeDef SequenceKey all_leaves
default_registry flatten_one_level flatten_one_level_with_keys is_tree_node keystr
register_dataclass register_pytree_node register_pytree_node_class register_pytree_with_keys
register_pytree_with_keys_class register_static tree_all tree_broadcast tree_flatten
tree_flatten_with_path tree_leaves tree_leaves_with_path tree_map tree_map_with_path
tree_reduce tree_reduce_associative tree_structure tree_transpose tree_unflatten
treedef_children treedef_is_leaf treedef_tuple
""".split()

TREE_NAMES = """all broadcast flatten flatten_with_path leaves leaves_with_path map map_with_path
reduce reduce_associative static structure transpose unflatten""".split()


def test_public_names():
    assert sorted(tu.__all__) == sorted(TREE_UTIL_NAMES)
    assert all(hasattr(tu, name) for name in TREE_UTIL_NAMES)
    assert sorted(dtree.__all__) == sorted(TREE_NAMES)
    assert all(hasattr(dtree, name) for name in TREE_NAMES)


def test_tree_module_matches_tree_util():
    tree = {"a": [1, 2], "b": (3,)}
    leaves, treedef = dtree.flatten(tree)
    assert isinstance(treedef, PyTreeDef) and leaves == [1, 2, 3]
    assert dtree.leaves(tree) == leaves and dtree.structure(tree) == treedef
    assert dtree.all(tree) and dtree.reduce_associative(lambda a, b: a + b, tree) == 6
    assert dtree.transpose(tu.tree_structure([0, 0]), None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert [p for p, _ in dtree.flatten_with_path(tree)[0]][0] == (DictKey("a"), SequenceKey(0))


# ---------------------------------------------------------------------------------------------
# Differential test against real JAX


DIFF_TREES = [
    lambda: 1.5,
    lambda: None,
    lambda: (1, [2, None, (3,)], {"b": 4, "a": {"c": 5}}),
    lambda: [Point(1, (2,)), collections.OrderedDict(b=1, a=(2,))],
    lambda: collections.defaultdict(list, {"y": 1, "x": [2, 3]}),
    lambda: ({}, [], (), [None, ()], {1: 2, 0: [3]}),
]


@pytest.mark.parametrize("make", DIFF_TREES)
def test_matches_jax(make):
    import jax.tree_util as jtu  # JAX is the specification (in the test extra)
    tree = make()
    leaves, treedef = tu.tree_flatten(tree)
    jleaves, jtreedef = jtu.tree_flatten(tree)
    assert leaves == jleaves and str(treedef) == str(jtreedef)
    assert treedef.num_nodes == jtreedef.num_nodes
    assert [str(c) for c in treedef.children()] == [str(c) for c in jtreedef.children()]
    paths = [(tu.keystr(p), x) for p, x in tu.tree_leaves_with_path(tree)]
    assert paths == [(jtu.keystr(p), x) for p, x in jtu.tree_leaves_with_path(tree)]
    assert tu.tree_map(str, tree) == jtu.tree_map(str, tree)


@pytest.mark.parametrize("tree, other", [(t, o) for t, o, _ in TREE_MAP_ERRORS[:4]]
                         + [((1, None), (1, 2)), ([1], [2, 3])])
def test_errors_match_jax(tree, other):
    import jax.tree_util as jtu  # JAX is the specification (in the test extra)
    with pytest.raises(ValueError) as ours:
        tu.tree_map(lambda *xs: None, tree, other)
    with pytest.raises(ValueError) as theirs:
        jtu.tree_map(lambda *xs: None, tree, other)
    # the same exception and the same key path; ours also names the caller's line
    path = str(theirs.value).splitlines()[1].strip().removeprefix("tree_map tree")
    assert f"at key path {path or '(the root)'} the first tree has" in str(ours.value)
    assert f"{__file__}:" in str(ours.value)
