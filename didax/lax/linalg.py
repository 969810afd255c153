"""Mirrors `jax.lax.linalg`: matrix decompositions and triangular solves."""
from didax._src.lax.linalg import (  # noqa: F401
    EighImplementation,
    EigImplementation,
    SvdAlgorithm,
    cholesky,
    cholesky_p,
    eig,
    eig_p,
    eigh,
    eigh_p,
    householder_product,
    householder_product_p,
    lu,
    lu_p,
    lu_pivots_to_permutation,
    lu_pivots_to_permutation_p,
    ormqr,
    ormqr_p,
    qr,
    qr_p,
    svd,
    svd_p,
    triangular_solve,
    triangular_solve_p,
)
from didax._src.lax.linalg_schur import hessenberg, hessenberg_p, schur, schur_p  # noqa: F401
from didax._src.lax.linalg_tridiagonal import (  # noqa: F401
    tridiagonal,
    tridiagonal_p,
    tridiagonal_solve,
    tridiagonal_solve_p,
)
from didax._src.lax.linalg_updates import (  # noqa: F401
    cholesky_update,
    cholesky_update_p,
    symmetric_product,
    symmetric_product_p,
)
from didax._src.scipy.qdwh import qdwh  # noqa: F401,E402 (built on didax.numpy)
