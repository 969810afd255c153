"""Eager evaluation above the compiler: reverse mode's compiled steps."""
