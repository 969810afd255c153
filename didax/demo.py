"""The didax demo: a small function, its derivatives of orders 1 to 4, and its jaxpr.

Run with `python -m didax.demo`.
"""
from __future__ import annotations

import didax as jax
import didax.numpy as jnp


def f(x):
    """A smooth scalar function: tanh(x) * sin(x) + x**3 / 6."""
    return jnp.tanh(x) * jnp.sin(x) + x ** 3 / 6.0


def derivative(fun):
    """The derivative of a scalar function, by one forward-mode JVP."""
    return lambda x: jax.jvp(fun, (x,), (1.0,))[1]


def main() -> None:
    x = 0.7
    print("didax demo: f(x) = tanh(x) * sin(x) + x**3 / 6, at x = 0.7\n")
    print(f"  f(x)     = {float(f(x)): .8f}")
    fun = f
    for order in range(1, 5):
        fun = derivative(fun)
        print(f"  f^({order})(x) = {float(fun(x)): .8f}   (nested jvp, order {order})")
    grad4 = jax.grad(jax.grad(jax.grad(jax.grad(f))))
    print(f"\n  f^(4)(x) = {float(grad4(x)): .8f}   (four nested grads, reverse mode)")
    xs = jnp.linspace(0.0, 1.0, 5)
    print(f"  f'(xs)   = {jax.vmap(jax.grad(f))(xs)}   (vmap of grad over {xs.tolist()})")
    print("\nThe jaxpr of f, as make_jaxpr stages it:\n")
    print(jax.make_jaxpr(f)(x))
    print("\nThe jaxpr of its first derivative (forward mode, staged):\n")
    print(jax.make_jaxpr(derivative(f))(x))


if __name__ == "__main__":
    main()
