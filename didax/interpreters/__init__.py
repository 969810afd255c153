"""Mirrors `jax.interpreters`: the rule tables libraries register their primitives' rules in
(`ad`, `batching`, `mlir`), tracing with some inputs known (`partial_eval`), and the dtype
handlers of value types (`xla`)."""
from didax.interpreters import ad, batching, mlir, partial_eval, xla  # noqa: F401
