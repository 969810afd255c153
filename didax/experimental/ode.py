"""Mirrors `jax.experimental.ode` (`odeint`)."""
from didax._src.experimental.ode import odeint  # noqa: F401
