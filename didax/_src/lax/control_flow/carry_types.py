"""Agreement of a loop body's carry output with its carry input (scan, while_loop): JAX's
promotion of weakly typed initial carries, and the messages when they still differ (which
part of the carry, what went in and what came out, which body function)."""
from __future__ import annotations

from didax._src import dtypes
from didax._src.base_prims import convert_element_type
from didax._src.errors import function_site, user_error
from didax._src.tree_util import first_difference, keystr, tree_flatten_with_path, tree_unflatten


def promote_weak_carry(init: list, in_avals, out_avals) -> list | None:
    """As in JAX, an initial carry leaf that is weakly typed (a Python scalar, say `0`) takes
    the dtype the body gives it, when weak promotion reaches that dtype (`0` becomes float32
    for a body adding 0.5; `0.0` never becomes int32). The new initial leaves, or None."""
    new, changed = list(init), False
    for i, (a, b) in enumerate(zip(in_avals, out_avals)):
        if (a.weak_type and a.dtype != b.dtype and a.shape == b.shape
                and dtypes.result_type(a, b) == b.dtype):
            new[i] = convert_element_type(init[i], b.dtype, False)
            changed = True
    return new if changed else None


def _carry_paths(tree) -> list[str]:
    dummy = tree_unflatten(tree, range(tree.num_leaves))
    return [keystr(p) for p, _ in tree_flatten_with_path(dummy)[0]]


def carry_structure_error(op: str, body, in_tree, out_tree):
    path, has_in, has_out = first_difference(
        tree_unflatten(in_tree, range(in_tree.num_leaves)),
        tree_unflatten(out_tree, range(out_tree.num_leaves)))
    return user_error(TypeError, (
        f"{op} body function carry input and carry output must have the same pytree "
        f"structure, but they differ{f' at carry{path}' if path else ''}: the carry goes in "
        f"as {has_in} and the body function {function_site(body)} returns {has_out}.\n"
        "What to do: return the new carry with exactly the structure of the initial carry (the "
        "same containers, keys and number of entries)."))


def carry_type_error(op: str, body, in_tree, i: int, a, b):
    """Carry leaf `i` (of the initial carry's `in_tree`) goes in as `a`, comes out as `b`."""
    path = _carry_paths(in_tree)[i]
    what = "shape" if a.shape != b.shape else "dtype" if a.dtype != b.dtype else "weak type"
    fix = ("keep its shape: a carry cannot grow or shrink from one step to the next (stack "
           "per-step values in scan's `y`, or preallocate and use `.at[i].set`)"
           if what == "shape" else
           "start from the type the body produces (e.g. `jnp.float32(0)` rather than `0`) or "
           "convert inside the body (`.astype(...)`)")
    return user_error(TypeError, (
        f"{op} body function carry input and carry output must have equal types, but carry "
        f"{i}{f' (carry{path})' if path else ''} goes in as {a.str_short()} and comes out as "
        f"{b.str_short()}: its {what} changes in the body function {function_site(body)}.\n"
        f"What to do: {fix}."))
