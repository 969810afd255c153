"""Eager evaluation above the compiler: reverse mode's compiled steps (`vjp`), and the
registry with which libraries declare their functions steps (`registry.step`)."""
