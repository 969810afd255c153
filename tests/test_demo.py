"""The demo runs and prints the derivatives JAX computes for the same function."""
import re

from didax import demo


def test_demo_prints_value_derivatives_and_jaxprs(capsys):
    demo.main()
    out = capsys.readouterr().out
    values = [float(v) for v in re.findall(r"^  f\S* += +(-?\d+\.\d+)", out, re.M)]
    # f(0.7) and its first four derivatives by nested jvp, then the 4th by nested grad
    # (JAX 0.10.2, float32: 0.44651109, 1.1161563, 0.7873421, -2.3710802, 3.5727184).
    expected = [0.44651109, 1.1161563, 0.7873421, -2.3710802, 3.5727184, 3.5727184]
    assert len(values) >= 6
    for got, want in zip(values[:6], expected):
        assert abs(got - want) < 2e-6 * max(1.0, abs(want))
    assert out.count("{ lambda ; a:f32[]. let") == 2
