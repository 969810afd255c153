"""Mirrors `jax.interpreters`: the rule tables libraries register their primitives' rules in
(`ad`, `batching`, `mlir`), and tracing with some inputs known (`partial_eval`)."""
from didax.interpreters import ad, batching, mlir, partial_eval  # noqa: F401
