"""didax.numpy bit packing, gcd and lcm (integer_ops.py): values against NumPy, result dtypes and
weak types against JAX (the table below was produced by running JAX 0.10.2) and errors."""
import numpy as np
from numpy_testing import I, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

U = np.array([3, 1, 2], np.uint8)

DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "packbits": (lambda m: m.packbits(I), "uint8", "uint8"),
    "unpackbits": (lambda m: m.unpackbits(U), "uint8", "uint8"),
    "gcd": (lambda m: m.gcd(I, 4), "int32", "int32"),
    "lcm_u8": (lambda m: m.lcm(U, U), "uint8", "uint8"),
}


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))


PICK = np.array([[0, 2, 1, 0], [1, 1, 0, 2], [2, 0, 0, 1]])
BYTES = np.array([[3, 255], [17, 0]], np.uint8)
INTS = np.array([[0, -12, 18], [7, 35, -1], [48, 0, 9]])


NUMPY_CASES = {
    "packbits": lambda m: [m.packbits(A > 0), m.packbits(PICK, axis=1, bitorder="little")],
    "unpackbits": lambda m: [m.unpackbits(BYTES), m.unpackbits(BYTES, 1, 11, "little"),
                             m.unpackbits(BYTES, 0, 1)],
    "gcd_lcm": lambda m: [m.gcd(INTS, 12), m.gcd(INTS, INTS.T), m.lcm(INTS, 6),
                          m.gcd(np.int32(1836311903), np.int32(1134903170))],
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.packbits(np.ones(3)), TypeError),
    (lambda: jnp.unpackbits(np.ones(3, np.int32)), TypeError),
    (lambda: jnp.gcd(np.ones(3), 2), ValueError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
