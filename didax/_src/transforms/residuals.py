"""What reverse mode stores for a function (`jax.ad_checkpoint.print_saved_residuals`): each
residual's type and origin, an argument or the primitive and the user's line computing it."""
from __future__ import annotations

import inspect

from didax._src import core, dtypes
from didax._src.core import asarray_value, get_aval
from didax._src.errors import format_source_info
from didax._src.interpreters.partial_eval import linearize_flat
from didax._src.interpreters.staging import StagingInterpreter, StagingTracer
from didax._src.tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten


def saved_residuals(fun, *args, **kwargs) -> list[tuple[core.ShapedArray, str]]:
    """The residuals of `fun(*args, **kwargs)`: arguments first, in order, then the
    intermediates in the order the program computes them. The function is traced (as by
    jit), so its Python control flow must not depend on the values."""
    flat, in_tree = tree_flatten((args, kwargs))
    flat = [asarray_value(x) for x in flat]
    names = _argument_names(fun, args, kwargs)
    differentiable = [dtypes.kind(get_aval(x).dtype) in "fc" for x in flat]

    def flat_fun(*xs):
        a, k = tree_unflatten(in_tree, xs)
        return tree_flatten(fun(*a, **k))[0]

    interp = core.new_level(StagingInterpreter())
    with core.transformation(interp):
        ins = [interp.new_arg(get_aval(x)) for x in flat]
        lin = linearize_flat(flat_fun, ins, differentiable)
    argument = {t._var: i for i, t in enumerate(ins)}
    position = {v: k for k, eqn in enumerate(interp.eqns) for v in eqn.outvars}
    producer = {v: eqn for eqn in interp.eqns for v in eqn.outvars}
    found = []
    for c in lin.jaxpr.consts:
        if type(c) is StagingTracer and c._interp is interp:
            v = c._var
            if v in argument:
                found.append(((0, argument[v]), c.aval, f"from the argument {names[argument[v]]}"))
            else:
                found.append(((1, position.get(v, -1)), c.aval, _describe(producer.get(v))))
        else:
            found.append(((2, 0), get_aval(c), "from a constant"))
    found.sort(key=lambda r: r[0])
    return [(aval, where) for _, aval, where in found]


def _describe(eqn) -> str:
    if eqn is None:
        return "from an intermediate value"
    where = format_source_info(eqn.source_info)
    prim = eqn.primitive.name
    if prim == "name":
        return f"named {eqn.params['name']!r} from {where}"
    if prim == "jit_call":
        return f"output of jitted function {eqn.params.get('name', '')!r} from {where}"
    return f"output of {prim} from {where}"


def _argument_names(fun, args, kwargs) -> list[str]:
    """Each array leaf's name as the user wrote it: the parameter and the path in it."""
    leaves = tree_flatten_with_path((args, kwargs))[0]
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
    names = []
    for path, _ in leaves:
        kind, key, rest = path[0].idx, path[1], path[2:]
        if kind == 1:  # a keyword argument
            names.append(f"{key.key}{keystr(rest)}")
        elif key.idx < len(positional):
            names.append(f"{positional[key.idx].name}{keystr(rest)}")
        elif star is not None:
            names.append(f"{star}[{key.idx - len(positional)}]{keystr(rest)}")
        else:
            names.append(f"args[{key.idx}]{keystr(rest)}")
    return names
