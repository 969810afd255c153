"""Numerical algorithms: the special functions behind lax's (pure NumPy), and didax's own
float32 exp and tanh (as C and as NumPy operations of the same bits)."""
