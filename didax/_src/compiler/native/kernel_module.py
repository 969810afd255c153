"""A module of hand-written C kernels (a batch of small matrices' factorizations, the
max-pool gradient, sparse products), built with the native tier's toolchain into its disk
cache the first time it is wanted: in the background, unless the native tier is "sync" or
"check" (then now); never when it is "off" or there is no compiler. Until it is there the
callers' NumPy twins, which compute the same bits, serve every call."""
from __future__ import annotations

import os
import threading

import numpy as np

from didax._src.compiler.native import cache, handoff, toolchain
from didax._src.compiler.native.directory import cache_dir
from didax._src.config import config
from didax._src.errors import TierMismatchError

C_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))  # the dtypes the kernels take

_MODULE_INIT = """
static PyMethodDef methods[] = {{{entries}
    {{NULL, NULL, 0, NULL}}}};
static struct PyModuleDef def = {{PyModuleDef_HEAD_INIT, DIDAX_STR(DIDAX_MODULE), NULL, -1,
                                  methods}};
PyMODINIT_FUNC DIDAX_CAT(PyInit_, DIDAX_MODULE)(void) {{
    import_array();
    return PyModule_Create(&def);
}}
"""


def _settings():
    """What decides whether there is a compiler and a cache directory."""
    return os.environ.get("CC"), os.environ.get("DIDAX_CACHE_DIR")


class KernelModule:
    """The C extension module of `body` (after the toolchain's prelude), whose `functions`
    (C functions of Python's METH_VARARGS convention) it exports under their names."""

    def __init__(self, body: str, functions: tuple[str, ...], makes_preludes: bool = True):
        entries = "".join(f'\n    {{"{f}", {f}, METH_VARARGS, NULL}},' for f in functions)
        self.body = body + _MODULE_INIT.format(entries=entries)
        self.status = "unbuilt"  # unbuilt, building, ready, none
        self._module = None
        self._lock = threading.Lock()
        self._built = threading.Event()
        self._none_under = None  # the settings a build found no compiler or cache under
        self.makes_preludes = makes_preludes  # (cache.load_or_build's)

    def source(self) -> str:
        return toolchain.module_prelude() + self.body

    def get(self, wait: bool = False, idle: bool = False):
        """The module, or None while it is not (yet) there. `wait` builds it now unless the
        native tier is off; `idle`, if it is not cached, builds it in the background at the
        lowest priority whatever the mode (for a caller that must not wait)."""
        if self.status == "ready":
            return self._module
        mode = config.read("didax_native_tier")
        if self.status == "none" and self._none_under != _settings():
            self.status = "unbuilt"  # (another compiler or cache directory: try it)
        if mode == "off" or self.status == "none":
            return None
        if self.status == "unbuilt":  # (a building module's lock is held till it is built)
            with self._lock:
                if self.status == "unbuilt":  # ("sync", checking: now)
                    self._start(now=not idle and (wait or mode != "background"), idle=idle)
        if wait and self.status == "building":
            self._built.wait()
        return self._module

    def _start(self, now: bool, idle: bool = False):
        """Loads the module if it is cached, else builds it now or starts building it in a
        thread (which also probes the compiler if that has not been done: that runs it),
        with `idle` at the lowest priority."""
        if now or toolchain.known():
            self._build(cached_only=True)
        if self.status == "unbuilt":
            if now:
                self._build(cached_only=False)
            else:
                self.status = "building"
                threading.Thread(target=self._background, args=(idle,), daemon=True).start()

    def get_cached(self):
        """The module if it is loaded or cached (nothing is built), else None."""
        if self.status == "unbuilt":
            with self._lock:
                if self.status == "unbuilt":
                    self._build(cached_only=True)
        return self._module if self.status == "ready" else None

    def load(self):
        """The module, built now if it is not cached, whatever the native tier's mode (for a
        module that other native modules need); None if it cannot be built."""
        if self.status != "ready":
            with self._lock:
                if self.status == "building":  # (a background build: its result)
                    self._built.wait()
                elif self.status == "unbuilt":
                    self._build(cached_only=False)
        return self._module

    def run(self, name, c_call, numpy_twin, outputs):
        """`c_call(module)` if the module is there (it fills `outputs` in place), else
        `numpy_twin()`, which returns them; in the "check" mode both, compared bit for bit
        (the twin first: the kernel may write where the twin reads)."""
        module = self.get()
        if module is None:
            return numpy_twin()
        want = numpy_twin() if config.read("didax_native_tier") == "check" else None
        c_call(module)
        if want is not None and any(w.tobytes() != o.tobytes() for w, o in zip(want, outputs)):
            raise TierMismatchError(f"{name}: the C kernel and its NumPy twin differ")
        return outputs

    def _build(self, cached_only: bool, idle: bool = False):
        """Loads (or builds) the module; records it, or that there is none."""
        self._none_under = _settings()  # (what "none" would be under)
        tc = toolchain.toolchain()
        directory = cache_dir() if tc is not None else None
        if tc is None or directory is None:
            self.status = "none"
            return
        try:
            if cached_only:
                module = cache.load_cached(self.source(), tc, directory)
                if module is None:
                    return
            else:
                module = cache.load_or_build(self.source(), tc, directory,
                                             self.makes_preludes, idle)
        except Exception:  # (a failed build: the NumPy twins serve every call, same bits)
            self.status = "none"
            return
        self._module, self.status = module, "ready"

    def _background(self, idle: bool = False):
        try:
            with self._lock, handoff.prompt_handoffs():
                self._build(cached_only=False, idle=idle)
                if self.status == "building":
                    self.status = "none"
        finally:
            self._built.set()
