"""The user-facing transformations: grad, vjp, vmap, jit, and what is built on them."""
