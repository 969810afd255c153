"""Mirrors `jax.experimental.ode` (`odeint`)."""
from didax._src.ode import odeint  # noqa: F401
