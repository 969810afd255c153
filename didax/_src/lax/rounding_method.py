"""`lax.RoundingMethod`: how `lax.round` breaks ties (its `rounding_method` parameter)."""
import enum


class RoundingMethod(enum.IntEnum):
    """Ties round away from zero (0, the default) or to the nearest even integer (1)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1
