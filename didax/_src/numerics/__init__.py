"""Special-function algorithms in pure NumPy: the impls behind lax's special functions."""
