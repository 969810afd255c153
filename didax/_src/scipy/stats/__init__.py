"""didax.scipy.stats: distributions written with didax.numpy, lax and scipy.special only, so
they differentiate, vmap and jit like any other didax program (one module per distribution,
as in JAX)."""
