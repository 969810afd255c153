"""What libraries written for JAX reach for: `jax` as an alias, rules registered JAX's way."""
