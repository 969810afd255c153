"""Parameters holding Python functions, per primitive: how each is exported.

custom_jvp/custom_vjp rules are staged to jaxprs at the call's types and come back as
functions evaluating those jaxprs, so a deserialized program can still be differentiated
with its custom rules. A checkpoint policy is kept by its name in `checkpoint_policies`.
Host callbacks are refused: a deserialized program runs only didax's primitives.
"""
from __future__ import annotations

from didax._src import core
from didax._src.base_prims import instantiate
from didax._src.export.serialize import DeserializationError, ExportError, RuleRef
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.ir import ClosedJaxpr, eval_jaxpr
from didax._src.primitives.checkpoint_policies import checkpoint_policies
from didax._src.primitives.custom_derivatives import _Named


def _stage(eqn, what, fun, avals) -> ClosedJaxpr:
    name = eqn.primitive.name
    try:
        closed, _ = trace_to_jaxpr(fun, avals)
    except Exception as e:
        raise ExportError(
            f"export: the {what} of '{eqn.params.get('name', name)}' (primitive '{name}') "
            f"could not be staged to a jaxpr at its types ({type(e).__name__}: {e}).\n"
            "What to do: make the rule a function of its arguments alone, written with "
            "didax operations, or export without the custom rule.") from e
    for c in closed.consts:
        if isinstance(c, core.Tracer):
            raise ExportError(f"export: the {what} of primitive '{name}' closes over a value "
                              "traced by an enclosing transformation")
    return closed


_IDENTIFYING_CELLS = ("self", "static", "in_tree", "n")  # (custom_derivatives' closures)


def _rule_key(eqn, fn):
    """What identifies a rule: the call, its types, and the custom function with its static
    arguments (read from the rule's closure; a closure of another shape is its own key)."""
    fn = getattr(fn, "fn", fn)
    code = getattr(fn, "__code__", None)
    cells = []
    for name, cell in zip(code.co_freevars if code else (), fn.__closure__ or ()):
        if name not in _IDENTIFYING_CELLS:
            continue
        value = cell.cell_contents
        if type(value) is list:
            value = tuple(value)
        try:
            hash(value)
        except TypeError:
            value = ("id", id(value))
        cells.append((name, value))
    if not cells:
        cells = [("id", id(fn))]
    return (eqn.primitive.name, eqn.params.get("name"), str(eqn.params["call_jaxpr"]),
            tuple(v.aval for v in eqn.invars), tuple(cells))


def _operand_avals(eqn):
    return [v.aval for v in eqn.invars[eqn.params["num_consts"]:]]


def _run(closed, args):
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


class CustomJVPRule:
    """`jvp(primals, tangents)` as a jaxpr of (primals..., tangents...) -> (primal outs...,
    tangent outs...), every tangent an array (a rule with symbolic zeros sees zeros)."""

    def encode(self, eqn, enc):
        params = dict(eqn.params)
        avals = _operand_avals(eqn)
        n = len(avals)
        jvp = params.pop("jvp")

        def flat_rule(*xs):
            p_out, t_out = jvp(list(xs[:n]), list(xs[n:]))
            return [*p_out, *[instantiate(t) for t in t_out]]

        params["jvp"] = enc.rule(_rule_key(eqn, jvp), lambda: _stage(
            eqn, "custom JVP rule", flat_rule, avals + [a.to_tangent_aval() for a in avals]))
        return params

    def decode(self, params, dec):
        ref = params.get("jvp")
        if type(ref) is not RuleRef:
            raise DeserializationError("deserialize: custom_jvp_call without its rule's jaxpr")

        def jvp(primals, tangents):
            outs = _run(dec.rule(ref), [*primals, *[instantiate(t) for t in tangents]])
            n_out = len(outs) // 2
            return outs[:n_out], outs[n_out:]

        params["jvp"] = _Named(jvp, f"{params.get('name', 'custom_jvp')}_jvp")
        params["symbolic_zeros"] = False
        return params


class CustomVJPRule:
    """`fwd` as a jaxpr of primals -> (outs..., residuals...), and `bwd` as a jaxpr of
    (residuals..., output cotangents...) -> input cotangents."""

    def encode(self, eqn, enc):
        params = dict(eqn.params)
        avals = _operand_avals(eqn)
        fwd, bwd = params.pop("fwd"), params.pop("bwd")
        n_out = len(eqn.outvars)
        box = []

        def flat_fwd(*xs):
            outs, res = fwd(*xs)
            res = list(res)
            box.append(len(res))
            return [*outs, *res]

        key = ("vjp", _rule_key(eqn, fwd))
        found = enc.rule_keys.get(key)  # (a rule calling its own function meets it again)
        if found is None:
            fwd_index, bwd_index = enc.reserve(), enc.reserve()
            fwd_jaxpr = _stage(eqn, "custom VJP fwd rule", flat_fwd, avals)
            n_res = box[-1]
            found = enc.rule_keys[key] = (fwd_index, bwd_index, n_res)
            res_avals = fwd_jaxpr.out_avals[n_out:]
            ct_avals = [a.to_tangent_aval() for a in fwd_jaxpr.out_avals[:n_out]]

            def flat_bwd(*xs):
                return [instantiate(c) for c in bwd(list(xs[:n_res]), list(xs[n_res:]))]

            bwd_jaxpr = _stage(eqn, "custom VJP bwd rule", flat_bwd, res_avals + ct_avals)
            enc.fill(fwd_index, fwd_jaxpr)
            enc.fill(bwd_index, bwd_jaxpr)
        fwd_index, bwd_index, n_res = found
        params["fwd"], params["bwd"] = RuleRef(fwd_index), RuleRef(bwd_index)
        params["num_res"] = n_res
        return params

    def decode(self, params, dec):
        fwd_ref, bwd_ref = params.get("fwd"), params.get("bwd")
        n_res = params.pop("num_res", None)
        if not (type(fwd_ref) is RuleRef and type(bwd_ref) is RuleRef and type(n_res) is int):
            raise DeserializationError("deserialize: custom_vjp_call without its rules' jaxprs")

        def fwd(*xs, perturbed=None):
            outs = _run(dec.rule(fwd_ref), xs)
            return outs[:len(outs) - n_res], outs[len(outs) - n_res:]

        def bwd(res, cts):
            return _run(dec.rule(bwd_ref), [*res, *[instantiate(c) for c in cts]])

        name = params.get("name", "custom_vjp")
        params["fwd"] = fwd
        params["bwd"] = _Named(bwd, f"{name}_bwd")
        params["symbolic_zeros"] = False
        return params


class CheckpointRule:
    """The policy by its name in `checkpoint_policies` (None stays None)."""

    def encode(self, eqn, enc):
        params = dict(eqn.params)
        policy = params.get("policy")
        if policy is not None:
            names = [n for n in dir(checkpoint_policies) if not n.startswith("_")
                     and getattr(checkpoint_policies, n) is policy]
            if not names:
                raise ExportError(
                    f"export: the checkpoint policy {policy!r} is not one of "
                    "checkpoint_policies' named policies, so it cannot be serialized.\nWhat to "
                    "do: use a named policy (checkpoint_policies.nothing_saveable...) or None.")
            params["policy"] = {"$policy": names[0]}
        return params

    def decode(self, params, dec):
        policy = params.get("policy")
        if isinstance(policy, dict):
            name = policy.get("$policy")
            found = getattr(checkpoint_policies, name, None) if isinstance(name, str) else None
            if name is None or name.startswith("_") or not callable(found):
                raise DeserializationError(f"deserialize: unknown checkpoint policy {name!r}")
            params["policy"] = found
        return params


class HostCallbackRule:
    def encode(self, eqn, enc):
        raise ExportError(
            f"export: the program calls back into Python (primitive '{eqn.primitive.name}'), "
            "and a deserialized program runs only didax's primitives.\nWhat to do: export "
            "the parts before and after the callback separately, and call the Python "
            "function between them.")

    def decode(self, params, dec):
        raise DeserializationError("deserialize: host callbacks are never deserialized")


PARAM_RULES = {
    "custom_jvp_call": CustomJVPRule(),
    "custom_vjp_call": CustomVJPRule(),
    "checkpoint": CheckpointRule(),
    "pure_callback": HostCallbackRule(),
    "io_callback": HostCallbackRule(),
    "debug_callback": HostCallbackRule(),
    "debug_print": HostCallbackRule(),
}

