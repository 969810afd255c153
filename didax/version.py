"""Mirrors `jax.version`: the release of JAX whose API didax speaks (libraries read
`jax.version.__version_info__` to choose between code paths of JAX releases). didax's own
release is `didax.__version__`."""
__version_info__ = (0, 10, 2)
__version__ = ".".join(map(str, __version_info__))
_version = __version__
