"""Mirrors `jax.scipy.linalg`: decompositions and solves, matrix functions, and SciPy's
special matrices."""
from didax._src.scipy.linalg import (  # noqa: F401
    cho_factor,
    cho_solve,
    cholesky,
    det,
    eigh,
    inv,
    lu,
    lu_factor,
    lu_solve,
    qr,
    solve,
    solve_triangular,
    svd,
)
from didax._src.scipy.linalg_schur import funm, rsf2csf, schur  # noqa: F401
from didax._src.scipy.matrix_functions import (  # noqa: F401
    eigh_tridiagonal,
    expm,
    expm_frechet,
    hessenberg,
    polar,
    qr_multiply,
    solve_sylvester,
    sqrtm,
)
from didax._src.scipy.special_matrices import (  # noqa: F401
    block_diag,
    circulant,
    companion,
    convolution_matrix,
    dft,
    fiedler,
    fiedler_companion,
    hadamard,
    hankel,
    helmert,
    hilbert,
    invhilbert,
    invpascal,
    leslie,
    pascal,
    toeplitz,
)
