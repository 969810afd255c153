"""Many processes over MPI (`jax.distributed`): launch with `mpiexec -n <processes>`, call
`initialize()`, and `pmap` maps over every process's devices (needs `didax[mpi]`)."""
from didax._src.parallel.distributed import (  # noqa: F401
    DivergedProcessesError,
    PeerLostError,
    initialize,
    is_initialized,
    shutdown,
)
