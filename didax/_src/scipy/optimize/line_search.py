"""A line search for the strong Wolfe conditions as one `while_loop` (so it jits).

Along phi(a) = f(x + a p), trial steps double from 1 until an interval is known to hold an
acceptable step (the trial breaks sufficient decrease, or stops decreasing, or has turned
uphill); the interval is then shrunk around the best point so far, each trial the minimizer
of the cubic through its ends' values and slopes, or the midpoint when that minimizer falls
too near an end. A step is accepted when
  phi(a) <= phi(0) + c1 a phi'(0)   and   |phi'(a)| <= c2 |phi'(0)|,
or, near a minimum where f's changes drown in rounding, when it meets Hager and Zhang's
approximate Wolfe conditions: phi(a) <= phi(0) + 100 eps |phi(0)| and
c2 phi'(0) <= phi'(a) <= (2 c1 - 1) phi'(0).
"""
from __future__ import annotations

from typing import NamedTuple

from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.numpy import namespace as jnp


class LineSearchResult(NamedTuple):
    """The accepted step, f and its gradient there, evaluations used, and whether it
    failed (`bracketed` tells how far it got: the interval was found but not shrunk
    enough)."""
    step: object
    f: object
    g: object
    nfev: object
    failed: object
    bracketed: object


def _cubic_minimizer(a, fa, da, b, fb, db):
    """Minimizer of the cubic through (a, fa, da) and (b, fb, db); NaN if it has none."""
    d1 = da + db - 3 * (fa - fb) / (a - b)
    d2 = jnp.sign(b - a) * jnp.sqrt(d1 * d1 - da * db)
    return b - (b - a) * (db + d2 - d1) / (db - da + 2 * d2)


def line_search(value_and_grad, x, p, f0, g0, maxiter=10, c1=1e-4, c2=0.9):
    dtype = f0.dtype
    d0 = jnp.vdot(g0, p)
    zero = jnp.zeros((), dtype)
    noise = 100 * jnp.finfo(dtype).eps * jnp.abs(f0)
    one = jnp.ones((), dtype)

    def cond(s):
        return ~s["done"] & (s["i"] < maxiter)

    def body(s):
        lo, hi = s["lo"], s["hi"]
        width = hi[0] - lo[0]
        cubic = _cubic_minimizer(*lo, *hi)
        inside = jnp.isfinite(cubic) & (jnp.abs(cubic - lo[0]) > 0.1 * jnp.abs(width)) & (
            jnp.abs(hi[0] - cubic) > 0.1 * jnp.abs(width))
        zoom_step = jnp.where(inside, cubic, lo[0] + 0.5 * width)
        grow_step = jnp.where(s["i"] == 0, one, 2 * lo[0])
        a = jnp.where(s["bracketed"], zoom_step, grow_step)
        fa, ga = value_and_grad(x + a * p)
        da = jnp.vdot(ga, p)
        point = (a, fa, da)
        too_high = (fa > f0 + c1 * a * d0) | (fa >= lo[1]) | ~jnp.isfinite(fa)
        flat = jnp.abs(da) <= -c2 * d0
        approximate = (fa <= f0 + noise) & (c2 * d0 <= da) & (da <= (2 * c1 - 1) * d0)
        accept = (~too_high & flat) | approximate
        # the new interval: [lo, a] when a is too high, [a, lo] when a is past a minimum,
        # [a, hi] (or [a, unbounded] while growing) otherwise
        uphill = da * (hi[0] - lo[0]) >= 0
        uphill = jnp.where(s["bracketed"], uphill, da >= 0)
        new_lo = tuple(jnp.where(too_high, l_, a_) for l_, a_ in zip(lo, point))
        new_hi = tuple(jnp.where(too_high, a_, jnp.where(uphill, l_, h_))
                       for l_, a_, h_ in zip(lo, point, hi))
        bracketed = s["bracketed"] | too_high | (uphill & ~too_high)
        return dict(i=s["i"] + 1, done=accept, bracketed=bracketed, lo=new_lo, hi=new_hi,
                    best=jnp.where(accept, a, s["best"]), f=jnp.where(accept, fa, s["f"]),
                    g=jnp.where(accept, ga, s["g"]))

    start = dict(i=0, done=jnp.asarray(False), bracketed=jnp.asarray(False),
                 lo=(zero, f0, d0), hi=(zero, f0, d0), best=zero, f=f0, g=g0)
    s = while_loop(cond, body, start)
    return LineSearchResult(s["best"], s["f"], s["g"], s["i"], ~s["done"], s["bracketed"])
