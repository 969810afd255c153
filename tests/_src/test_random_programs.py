"""Random programs (tests/random_programs.py) checked against themselves under every
transformation, and against JAX (the properties are in tests/program_checks.py).

The suite runs a short, derandomized sample: hypothesis draws (a failing one shrinks to a
small program) and a few seeds. The long run checks 10,000 programs (seeds
0..9999, every tenth also against JAX), prints a summary and fails with the source of every
mismatching program; it is deselected unless asked for:

    PYTHONPATH=. python -m pytest -n 0 -s -m long_random_programs tests/_src/test_random_programs.py

`DIDAX_RANDOM_PROGRAMS=N` sets the count, `DIDAX_RANDOM_PROGRAMS_START=s` the first seed,
`DIDAX_RANDOM_PROGRAMS_JAX_EVERY=k` how often JAX is compared (0: never);
`DIDAX_NATIVE_TIER=sync` checks jit's native (C) tier instead of its NumPy tier. A failing program
reproduces from its seed: `random_programs.from_seed(seed)`, checked by
`program_checks.check_program(program, seed)`.
"""
import collections
import os
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_testing import both_x64
from program_checks import check_against_jax, check_program
from random_programs import Program, from_seed, programs

import didax as jax
import didax.numpy as jnp
from didax import lax


@pytest.fixture(autouse=True)
def x64():
    with both_x64():
        yield


seeds = st.integers(0, 2 ** 16)


@settings(derandomize=True, max_examples=30, deadline=None, database=None)
@given(program=programs(), seed=seeds)
def test_transformations_agree(program, seed):
    report = check_program(program, seed)
    assert report, report.describe(program)


@pytest.mark.parametrize("seed", range(10_000, 10_012))
def test_seeded_programs(seed):
    # hypothesis starts from the simplest programs and repeats some; these are typical
    program = from_seed(seed)
    report = check_program(program, seed)
    assert report, report.describe(program)


@settings(derandomize=True, max_examples=4, deadline=None, database=None)
@given(program=programs(max_ops=5), seed=seeds)
def test_same_as_jax(program, seed):
    report = check_against_jax(program, seed)
    assert report, report.describe(program)


def test_programs_have_the_shapes_the_grammar_says():
    features = collections.Counter()
    for seed in range(100):
        program = from_seed(seed)
        features.update(program.features)
        args = [jnp.asarray(a) for a in program.arguments(seed)]
        out = program.build(jax, jnp, lax)(*args)
        out = out if isinstance(out, tuple) else (out,)
        assert [np.shape(o) for o in out] == [tuple(s) for s in program.shapes], program
        assert all(np.asarray(o).dtype == np.float64 for o in out), program
    assert {"while", "custom_vjp", "kink"} <= set(features)


def test_source_is_readable_python():
    text = str(from_seed(3))
    assert text.startswith("# inputs ") and "def f(" in text and "return " in text


def _program(body, params=(("x", (3,)),), shapes=((3,),)):
    return Program(list(params), ["    " + line for line in body.splitlines()], ["y"],
                   list(shapes))


def test_a_wrong_derivative_rule_is_caught():
    body = ("@jax.custom_jvp\n"
            "def g(a):\n"
            "    return jnp.sin(a)\n"
            "@g.defjvp\n"
            "def g_jvp(p, t):\n"
            "    return g(p[0]), 1.1 * jnp.cos(p[0]) * t[0]\n"
            "y = g(x)")
    wrong = _program(body)
    report = check_program(wrong)
    assert {"fd jvp", "fd vjp"} <= {check for check, _ in report.failures}
    assert "1.1 * jnp.cos" in report.describe(wrong)
    assert check_program(_program(body.replace("1.1 * ", "")))


def test_a_kink_within_a_step_is_set_aside():
    probe = _program("y = x")
    near = probe.arguments(0)[0] + 3e-6  # |x - near| has its kink 3e-6 from the input
    kink = _program(f"y = jnp.abs(x - jnp.array({near.tolist()!r}))")
    report = check_program(kink)
    assert report, report.describe(kink)
    assert "fd jvp" in report.set_aside
    smooth = _program(f"y = jnp.abs(x - jnp.array({(near + 1.0).tolist()!r}))")
    assert check_program(smooth).set_aside == []


@pytest.mark.long_random_programs
def test_long_run():
    count = int(os.environ.get("DIDAX_RANDOM_PROGRAMS", "10000"))
    first = int(os.environ.get("DIDAX_RANDOM_PROGRAMS_START", "0"))
    jax_every = int(os.environ.get("DIDAX_RANDOM_PROGRAMS_JAX_EVERY", "10"))
    start = time.perf_counter()
    failed, set_aside, features, compared = [], collections.Counter(), collections.Counter(), 0
    for seed in range(first, first + count):
        program = from_seed(seed)
        features.update(program.features)
        report = check_program(program, seed)
        if jax_every and seed % jax_every == 0:
            compared += 1
            report.failures += check_against_jax(program, seed).failures
        set_aside.update(report.set_aside)
        if not report:
            failed.append((seed, report.describe(program)))
            print(f"seed {seed}:\n{failed[-1][1]}", flush=True)
        if (seed + 1 - first) % 500 == 0:
            print(f"{seed + 1 - first} programs, {len(failed)} failing, "
                  f"{time.perf_counter() - start:.0f} s", flush=True)
    print(f"{count} programs ({compared} also against JAX) in "
          f"{time.perf_counter() - start:.0f} s: {len(failed)} failing "
          f"(seeds {[s for s, _ in failed]}); features {dict(features)}; "
          f"finite differences set aside at kinks: {dict(set_aside)}")
    assert not failed, "\n\n".join(text for _, text in failed[:5])
