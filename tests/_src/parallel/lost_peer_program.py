"""Run by tests/_src/parallel/test_distributed.py as `mpiexec -n 2 python
lost_peer_program.py OUT` with DIDAX_PEER_TIMEOUT set: process 1 leaves before the first
collective; process 0 writes what its collective raised, and after how long, to OUT."""
import json
import pathlib
import sys
import time

import numpy as np

import didax as jax
from didax import lax

jax.distributed.initialize()
if jax.process_index() == 1:
    sys.exit(0)
start = time.monotonic()
try:
    jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(np.ones((1, 3), np.float32))
    raised = None
except jax.distributed.PeerLostError as e:
    raised = str(e)
pathlib.Path(sys.argv[1], "lost_peer.json").write_text(
    json.dumps({"raised": raised, "seconds": time.monotonic() - start}))
