"""Mirrors `jax.experimental` (the `ode` module)."""
