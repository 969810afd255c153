"""didax.experimental.sparse's implementation: the BCOO class and the functions on it."""
