"""Mirrors `jax.experimental.layout`: how an array's elements are ordered in memory
(`Layout`) together with its sharding (`Format`). didax's arrays are NumPy arrays in C order,
so an array's layout is always major to minor in axis order; these record what a program asks
for and say what arrays have."""
from __future__ import annotations

__all__ = ["Format", "Layout", "with_layout_constraint"]


class Layout:
    """The order of an array's axes in memory, most significant first."""

    def __init__(self, major_to_minor, tiling=None, sub_byte_element_size_in_bits: int = 0):
        self.major_to_minor = tuple(int(a) for a in major_to_minor)
        self.tiling = None if tiling is None else tuple(tuple(t) for t in tiling)
        self.sub_byte_element_size_in_bits = int(sub_byte_element_size_in_bits)

    def _key(self):
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __eq__(self, other):
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
                f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")


class Format:
    """A layout and a sharding (either may be None: left to the system)."""

    def __init__(self, layout=None, sharding=None):
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError("Format: a concrete Layout needs a concrete sharding (a "
                             "NamedSharding or SingleDeviceSharding), got sharding=None")
        self.layout = layout
        self.sharding = sharding

    def __eq__(self, other):
        return (isinstance(other, Format) and self.layout == other.layout
                and self.sharding == other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __repr__(self):
        return f"Format(layout={self.layout!r}, sharding={self.sharding!r})"


def with_layout_constraint(x, layout):
    """`x`, whose layout didax cannot change (arrays are C-ordered): accepted only when
    `layout` is that order."""
    ndim = len(getattr(x, "shape", ()))
    if layout is not None and layout.major_to_minor != tuple(range(ndim)):
        raise NotImplementedError(
            f"with_layout_constraint: didax arrays are stored in C order "
            f"(major_to_minor={tuple(range(ndim))}); {layout} cannot be honoured")
    return x
