"""The native tier of `jit`: the optimised jaxpr compiled to C, then to machine code.

toolchain.py finds and probes a C compiler, cache.py keeps built modules on disk,
runtime.py is the helpers and calling convention every module shares (built once),
rules.py is what primitives register their `native` rules with, products.py gives products
with nothing to sum their elementwise form, emit.py writes the C source (control.py: that
of control flow), tier.py swaps the native code in for the NumPy tier when it is ready.
"""
