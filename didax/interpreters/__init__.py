"""Mirrors `jax.interpreters`: the rule tables libraries register their primitives' rules in
(`ad`, `batching`, `mlir`)."""
from didax.interpreters import ad, batching, mlir  # noqa: F401
