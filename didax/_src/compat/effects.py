"""`jax.extend.core.Effect`: the base class of the effects libraries declare for their
primitives (an abstract evaluation may return `(avals, effects)`). didax orders effectful
equations by their primitives' `effectful` trait and keeps no effect sets in jaxprs, so an
effect object only names itself."""


class Effect:
    """An effect a primitive has (subclass it; instances are compared by identity)."""

    def __repr__(self):
        return type(self).__name__
