"""jit's compiler: passes over jaxprs, the NumPy tier's code generation, and the native tier."""
