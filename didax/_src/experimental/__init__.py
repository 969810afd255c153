"""didax.experimental's implementations."""
