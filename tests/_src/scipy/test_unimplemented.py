"""The names of jax.scipy didax does not compute yet raise NotImplementedError naming them."""
import pytest

import didax.numpy as jnp
from didax.scipy import linalg, special

CASES = [(linalg.schur, (jnp.eye(2),)), (linalg.rsf2csf, (jnp.eye(2), jnp.eye(2))),
         (linalg.funm, (jnp.eye(2), jnp.exp)), (special.hyp1f1, (1.0, 2.0, 0.5)),
         (special.hyp2f1, (1.0, 2.0, 3.0, 0.5)), (special.wofz, (0.5,))]


@pytest.mark.parametrize("fn, args", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_raises_not_implemented_naming_the_function(fn, args):
    with pytest.raises(NotImplementedError, match=rf"{fn.__name__} is not implemented: \w+"):
        fn(*args)
