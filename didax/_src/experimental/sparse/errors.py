"""The warnings and errors of sparse arrays, as `jax.experimental.sparse` names them."""


class SparseEfficiencyError(ValueError):
    """An operation would store a sparse array inefficiently (many explicit zeros)."""


class SparseEfficiencyWarning(UserWarning):
    """An operation stores a sparse array inefficiently, and was asked to warn only."""


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    """JAX's warning for a product falling back from cuSPARSE; didax (CPU, NumPy) never
    raises it, but programs may filter or catch it."""
