"""Mutable array references (JAX's `jax.Ref`): their types (types.py), how they are indexed
(indexing.py), their primitives and rules (primitives.py), and the state discharge that turns a
jaxpr reading and writing references into one passing their values (discharge.py)."""
