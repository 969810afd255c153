"""Optimizers as composable gradient transformations (optax's API); public in didax.optim."""
