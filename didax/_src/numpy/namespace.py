"""The `jax.numpy` namespace: what `didax.numpy` exports, and what didax's own libraries
import (as `jnp`) without going through the public package."""
import numpy as _np

from didax._src import dtypes as _dtypes
from didax._src.core import Array as ndarray  # noqa: F401
from didax._src.numpy import array_methods as _array_methods
from didax._src.numpy import fft, linalg  # noqa: F401
from didax._src.numpy.bessel import i0  # noqa: F401
from didax._src.numpy.comparisons import *  # noqa: F401,F403
from didax._src.numpy.convolution import *  # noqa: F401,F403
from didax._src.numpy.creation import *  # noqa: F401,F403
from didax._src.numpy.diagonals import *  # noqa: F401,F403
from didax._src.numpy.differences import *  # noqa: F401,F403
from didax._src.numpy.dtype_objects import *  # noqa: F401,F403
from didax._src.numpy.editing import *  # noqa: F401,F403
from didax._src.numpy.einsum import *  # noqa: F401,F403
from didax._src.numpy.file_io import *  # noqa: F401,F403
from didax._src.numpy.histograms import *  # noqa: F401,F403
from didax._src.numpy.index_tricks import *  # noqa: F401,F403
from didax._src.numpy.indexing import *  # noqa: F401,F403
from didax._src.numpy.integer_ops import *  # noqa: F401,F403
from didax._src.numpy.joining import *  # noqa: F401,F403
from didax._src.numpy.misc import *  # noqa: F401,F403
from didax._src.numpy.padding import *  # noqa: F401,F403
from didax._src.numpy.polynomial import *  # noqa: F401,F403
from didax._src.numpy.products import *  # noqa: F401,F403
from didax._src.numpy.reductions import *  # noqa: F401,F403
from didax._src.numpy.searching import *  # noqa: F401,F403
from didax._src.numpy.searching import where  # noqa: F401 - both forms (ufuncs has three-argument)
from didax._src.numpy.selection import *  # noqa: F401,F403
from didax._src.numpy.setops import *  # noqa: F401,F403
from didax._src.numpy.shape_ops import *  # noqa: F401,F403
from didax._src.numpy.sorting import *  # noqa: F401,F403
from didax._src.numpy.statistics import *  # noqa: F401,F403
from didax._src.numpy.tiling import *  # noqa: F401,F403
from didax._src.numpy.ufunc_objects import *  # noqa: F401,F403
from didax._src.numpy.ufuncs import *  # noqa: F401,F403
from didax._src.numpy.ufuncs import (  # noqa: F401 - names shadowing builtins
    abs,
    divmod,
    pow,
    round,
)
from didax._src.numpy.util import array, asarray, broadcast_arrays, broadcast_to  # noqa: F401
from didax._src.numpy.vectorize import *  # noqa: F401,F403
from didax._src.numpy.windows import *  # noqa: F401,F403

promote_types = _dtypes.promote_types
result_type = _dtypes.result_type
finfo = _dtypes.finfo
iinfo = _dtypes.iinfo
issubdtype = _dtypes.issubdtype
isdtype = _dtypes.isdtype
dtype = _np.dtype
float0 = _dtypes.float0
pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
euler_gamma = _np.euler_gamma
newaxis = None
generic, number, inexact, floating, complexfloating = (
    _np.generic, _np.number, _np.inexact, _np.floating, _np.complexfloating)
integer, signedinteger, unsignedinteger = _np.integer, _np.signedinteger, _np.unsignedinteger
character, flexible = _np.character, _np.flexible

_array_methods.install(__import__(__name__, fromlist=["*"]))
