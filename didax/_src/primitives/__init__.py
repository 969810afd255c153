"""Primitives beyond lax's families: custom rules, checkpointing, effects, PRNG, jit's call."""
