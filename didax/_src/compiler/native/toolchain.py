"""The C compiler the native tier builds with: found, probed once, and how it is run.

The compiler is `$CC`, else `gcc`, else `cc`. Flags keep IEEE semantics (no fast-math, no
FMA contraction, so results round as NumPy's do; no trapping math, which changes no value
but lets gcc vectorize selects). A one-time probe builds and loads a tiny extension module
with each candidate set of flags; if none works the tier is off, with one warning. A success
is recorded in the cache directory, so later processes skip the probe.
"""
from __future__ import annotations

import atexit
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import warnings
from typing import NamedTuple

import numpy as np

from didax._src import caches
from didax._src.compiler.native.directory import cache_dir, cpu_features, write_atomic
from didax._src.compiler.native.threads import usable_cores
from didax._src.errors import NativeTierWarning
from didax._src.numerics import float32_math

# -O2: measured against -O1 and -O3 on the same modules run interleaved (LSTM, CNN, fused
# reduction, MLP step), -O2 and -O3 ran within 1 % of each other (-O1 up to 15 % slower)
# and -O2 builds in 60-80 % of -O3's time (benchmarks/build_time_curve.py).
BASE_FLAGS = ("-O2", "-fPIC", "-shared", "-fno-math-errno", "-fno-trapping-math",
              "-ffp-contract=off", "-fno-strict-aliasing", "-w")
# Candidates, best first: vector code for this CPU with OpenMP's parallel loops (see
# threads.py), vector code for this CPU, vector code, plain code. Without "-fopenmp" the
# parallel loops' pragmas are ignored: they run on one thread, to the same bits.
# Vectors as wide as the CPU has: gcc's tuning for Intel's AVX-512 CPUs prefers 256-bit
# vectors, and the fused reduction's loop took 9.3-10 ms there against 4.7-5.5 ms with
# 512-bit ones (XLA's 5.75); a CPU without AVX-512 is not affected. The loops' bits do not
# depend on the width (float sums are written out lane by lane, see loops.py).
_FOR_THIS_CPU = ("-march=native", "-mprefer-vector-width=512")
CANDIDATES = ((*_FOR_THIS_CPU, "-fopenmp"), (*_FOR_THIS_CPU, "-fopenmp-simd"),
              ("-fopenmp-simd",), ())
BUILD_TIMEOUT = 120  # seconds


class Toolchain(NamedTuple):
    cc: tuple          # the compiler command (path first)
    version: str       # its `--version` first line
    flags: tuple

    def identity(self) -> str:
        """What a built module depends on, besides its source (part of the cache key)."""
        return "\n".join([" ".join(self.cc), self.version, " ".join(self.flags)])


_lock = threading.Lock()
_probed = caches.memo("native.toolchains")  # the CC setting -> Toolchain or None


def toolchain() -> Toolchain | None:
    """The working toolchain for the current `$CC`, or None (after one warning)."""
    setting = os.environ.get("CC")
    with _lock:  # (held while probing: a setting is probed once)
        if setting not in _probed:
            caches.add(_probed, setting, _probe(setting))
        return _probed[setting]


def known() -> bool:
    """Whether `toolchain()` answers without running the compiler: probed already in this
    process, or recorded on disk."""
    setting = os.environ.get("CC")
    with _lock:
        if setting in _probed:
            return True
        cc = _find(setting)
        tc = _read_record(_record_path(cc), cc) if cc is not None else None
        if tc is not None:
            caches.add(_probed, setting, tc)
        return tc is not None


def _find(setting) -> tuple | None:
    if setting:
        cmd = shlex.split(setting)
        path = shutil.which(cmd[0]) if cmd else None
        return (path, *cmd[1:]) if path else None
    for name in ("gcc", "cc"):
        path = shutil.which(name)
        if path:
            return (path,)
    return None


def _probe(setting) -> Toolchain | None:
    cc = _find(setting)
    if cc is None:
        _warn(f"no C compiler found ({'CC=' + setting if setting else 'gcc, cc'})")
        return None
    record = _record_path(cc)
    tc = _read_record(record, cc)
    if tc is None:
        tc = _probe_compiler(cc)
        if tc is not None and record is not None:
            _write_record(record, tc)
    return tc


# A successful probe is recorded in the cache directory, keyed by the compiler's file and
# everything the probe depends on: running the compiler three times costs a process start a
# tenth of a second (on one core, before its first native module). A record that cannot be
# read is ignored (the probe runs again); a compiler that fails is probed in every process.

def _record_path(cc) -> str | None:
    directory = cache_dir()
    if directory is None:
        return None
    try:
        st = os.stat(cc[0])
    except OSError:
        return None
    key = hashlib.sha256("\0".join([
        *cc, str(st.st_mtime_ns), str(st.st_size), sys.version, np.__version__,
        repr((BASE_FLAGS, CANDIDATES)), _PROBE_SOURCE, cpu_features()]).encode())
    return os.path.join(directory, f"toolchain-{key.hexdigest()[:24]}.json")


def _read_record(path, cc) -> Toolchain | None:
    if path is None:
        return None
    try:
        with open(path) as f:
            got = json.load(f)
        return Toolchain(tuple(cc), str(got["version"]), tuple(map(str, got["flags"])))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_record(path, tc: Toolchain):
    record = json.dumps({"version": tc.version, "flags": list(tc.flags)}).encode()
    try:
        write_atomic(os.path.dirname(path), path, record)
    except OSError:  # (unrecorded: the next process probes again)
        pass


def _probe_compiler(cc) -> Toolchain | None:
    """Builds and runs a tiny module with each candidate set of flags, best first."""
    try:
        out = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=30,
                             env=child_environment())
        version = (out.stdout.splitlines() or [""])[0]
    except (OSError, subprocess.SubprocessError) as e:
        _warn(f"the C compiler {cc[0]} does not run ({e})")
        return None
    errors = []
    with tempfile.TemporaryDirectory(prefix="didax-probe-") as tmp:
        for i, flags in enumerate(CANDIDATES):
            tc = Toolchain(cc, version, BASE_FLAGS + flags)
            name = f"didax_probe_{i}"
            try:
                path = build(tc, _PROBE_SOURCE, tmp, name)
                if load(name, path).check() == 3.0:
                    return tc
                errors.append("the probe module computed a wrong result")
            except (OSError, RuntimeError, ImportError, subprocess.SubprocessError) as e:
                errors.append(str(e).strip().splitlines()[-1] if str(e).strip() else repr(e))
    _warn(f"the C compiler {cc[0]} cannot build extension modules ({errors[-1]})")
    return None


def _warn(what: str):
    warnings.warn(f"didax: the native tier of jit is off: {what}; jitted functions run on "
                  "the NumPy tier.", NativeTierWarning, stacklevel=3)


def include_dirs() -> tuple:
    return (sysconfig.get_paths()["include"], np.get_include())


def build(tc: Toolchain, source: str, workdir: str, name: str,
          prelude: str | None = None, unit_prelude: str | None = None,
          objects: str | None = None, idle: bool = False) -> str:
    """Compiles `source` in `workdir` (as `name`.c, so the build does not depend on where it
    ran) to a shared library whose module is `name` (the macro DIDAX_MODULE); returns its
    path. `prelude`, `unit_prelude`: directories holding module_prelude() (and its variant
    for further units) precompiled (see precompiled_prelude), which a source starting with
    it includes instead. A source of several translation units (UNIT_MARK between them)
    has them compiled in parallel, each to an object file cached in `objects` (by its text
    and the toolchain), then linked; `idle`: at the lowest priority (run_compiler's). Raises
    RuntimeError with the compiler's message on failure."""
    units = source.split("\n" + UNIT_MARK + "\n")
    so_path = os.path.join(workdir, name + ".so")
    if len(units) == 1:
        cmd = [*tc.cc, *tc.flags, *_written(workdir, name, units[0], prelude, unit_prelude),
               f"-DDIDAX_MODULE={name}", "-o", name + ".so", "-lm"]
        _check(tc, *run_compiler(cmd, workdir, idle), so_path)
        return so_path
    flags = [f for f in tc.flags if f != "-shared"]

    def compile_unit(k):
        text = units[k]
        # (the headers too: an object compiled against another Python's calls its symbols)
        key = hashlib.sha256("\0".join([text, tc.identity(), sys.version, *include_dirs()])
                             .encode()).hexdigest()[:32]
        cached = os.path.join(objects, f"unit-{key}.o") if objects else None
        if k and cached and os.path.exists(cached):  # (the first holds the module's name)
            return cached
        c_name = name if k == 0 else f"{name}_unit{k}"
        cmd = [*tc.cc, *flags, "-c", *_written(workdir, c_name, text, prelude, unit_prelude),
               f"-DDIDAX_MODULE={name}", "-o", c_name + ".o"]
        o_path = os.path.join(workdir, c_name + ".o")
        _check(tc, *run_compiler(cmd, workdir, idle), o_path)
        if k and cached:
            try:
                with open(o_path, "rb") as f:
                    write_atomic(objects, cached, f.read())
            except OSError:  # (uncached: built again next time)
                pass
        return o_path

    import concurrent.futures  # (only large modules need it)

    with concurrent.futures.ThreadPoolExecutor(min(len(units), usable_cores())) as pool:
        object_files = list(pool.map(compile_unit, range(len(units))))
    _check(tc, *run_compiler([*tc.cc, *tc.flags, *object_files, "-o", name + ".so", "-lm"],
                             workdir, idle), so_path)
    return so_path


def _written(workdir, c_name, text, prelude, unit_prelude) -> list:
    """Writes `text` as `c_name`.c, its prelude an include where that is precompiled; the
    compiler's arguments for it (include directories, then the file)."""
    includes = [f"-I{d}" for d in include_dirs()]
    for directory, start in ((prelude, module_prelude()), (unit_prelude, module_prelude(True))):
        if directory is not None and text.startswith(start):
            text = f'#include "{PRELUDE_HEADER}"\n' + text[len(start):]
            includes.insert(0, f"-I{directory}")
            break
    with open(os.path.join(workdir, c_name + ".c"), "w") as f:
        f.write(text)
    return [*includes, c_name + ".c"]


def _check(tc, returncode, stderr, path):
    if returncode != 0 or not os.path.exists(path):
        raise RuntimeError(f"{tc.cc[0]} failed:\n{stderr[-2000:]}")


# The compiler processes this process's builds are running. At exit they are stopped: a
# background build the process did not wait for can no longer store its module (that is
# Python's work, after the compiler's), so a compiler left running would only take a core
# from whatever runs next.
_running: set = set()
_running_lock = threading.Lock()
stopping = False  # set at exit: a build failing from then on is not reported
_POSIX = hasattr(os, "killpg")  # (process groups)


def child_environment() -> dict | None:
    """A copy of the environment for a child process started from a background thread.
    Without one, the child (started by vfork) reads the C library's environment while it
    starts, and a variable another thread set or removed meanwhile freed what it read: the
    start failed with "Bad address" (8 of 35 starts beside a thread changing os.environ).
    None (the environment itself) if other threads kept changing it while it was copied."""
    for _ in range(100):
        try:
            return dict(os.environ)
        except (RuntimeError, KeyError):  # (changed while iterated)
            continue
    return None


def run_compiler(cmd, cwd, idle: bool = False) -> tuple[int, str]:
    """Runs the compiler command `cmd` in `cwd`; its exit status and error output. `idle`:
    at the lowest priority (work for later, which must not slow what runs now), through the
    `nice` command where there is one. (Not Popen's preexec_fn: it makes Popen fork, and
    OpenBLAS stops its threads before a fork: a product another thread was running waited
    for them forever.)"""
    nice = shutil.which("nice") if idle else None
    proc = subprocess.Popen([nice, "-n", "19", *cmd] if nice else cmd, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=child_environment(),
                            start_new_session=_POSIX)  # (its own group: the compiler's
    # own children, cc1 and as, are stopped with it)
    with _running_lock:
        _running.add(proc)
    try:
        _, stderr = proc.communicate(timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        _kill(proc)
        proc.communicate()
        raise
    finally:
        with _running_lock:
            _running.discard(proc)
    return proc.returncode, stderr


@atexit.register
def _stop_compilers():
    global stopping
    stopping = True
    with _running_lock:
        running = list(_running)
    for proc in running:
        _kill(proc)


def _kill(proc):
    try:
        if _POSIX:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:  # (it ended meanwhile)
        pass


PRELUDE_HEADER = "didax_prelude.h"
# Between the translation units of a module's source (see parts.py).
UNIT_MARK = "/* ---- didax: a translation unit of its own ---- */"


def precompiled_prelude(tc: Toolchain, directory: str, unit: bool = False,
                        make: bool = True) -> str | None:
    """A directory in `directory` holding module_prelude(unit) as a header and precompiled
    by `tc` (the headers of Python and NumPy are a tenth of a second of each translation
    unit's build), made once for all processes (at the lowest priority); None if it is not
    there and `make` is false, or if it cannot be made (modules then include the text)."""
    text = module_prelude(unit)
    key = hashlib.sha256("\n".join([text, tc.identity(), sys.version, np.__version__,
                                     *include_dirs()]).encode()).hexdigest()[:24]
    path = os.path.join(directory, f"prelude-{key}")
    if os.path.exists(os.path.join(path, PRELUDE_HEADER + ".gch")):
        return path
    if not make:
        return None
    try:
        work = tempfile.mkdtemp(dir=directory, prefix=".prelude-")
    except OSError:  # (the directory is gone, or not writable)
        return None
    try:
        with open(os.path.join(work, PRELUDE_HEADER), "w") as f:
            f.write(text)
        flags = [f for f in tc.flags if f != "-shared"]
        returncode, _ = run_compiler(
            [*tc.cc, *flags, *(f"-I{d}" for d in include_dirs()), "-x", "c-header",
             PRELUDE_HEADER, "-o", PRELUDE_HEADER + ".gch"], work, idle=True)
        if returncode != 0:
            return None
        os.rename(work, path)  # (atomic; if another process made it first, that one stays)
        return path
    except OSError:
        return path if os.path.exists(os.path.join(path, PRELUDE_HEADER + ".gch")) else None
    except subprocess.SubprocessError:
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


# OpenMP's threads (GNU libgomp, which reads this when the first module loads it) wait for
# the next parallel loop spinning for a while (300,000 turns by default) before they sleep.
# Spinning, they took the core from OpenBLAS's threads, which spin too after their products:
# on two cores, a CNN step took 15 ms with 300,000 turns, 6.2-6.3 ms with 10,000 and 5.0-5.3
# ms with 1,000 or none (4.8-5.1 ms on one thread); the Transformer step 36 ms, 18.4 ms and
# 16.0-16.5 ms. A loop over 2^22 elements that sums (one parallel loop a call) took 1.95 ms
# with 10,000 turns, 2.03-2.14 ms with 1,000. A setting of the user's stays.
_SPINCOUNT = "1000"


def load(name: str, path: str):
    """Loads the extension module `name` (its init function is PyInit_<name>) from `path`."""
    os.environ.setdefault("GOMP_SPINCOUNT", _SPINCOUNT)
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def module_prelude(unit: bool = False) -> str:
    """The includes and helpers every module starts with; `unit`: a further translation
    unit's, which uses NumPy's C API through the table the module's first unit imports."""
    lines = [*(["#define NO_IMPORT_ARRAY"] if unit else []),
             "#define PY_SSIZE_T_CLEAN", "#include <Python.h>",
             "#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION",
             "#define PY_ARRAY_UNIQUE_SYMBOL DIDAX_ARRAY_API",
             "#include <numpy/arrayobject.h>", "#include <numpy/ufuncobject.h>",
             "#include <math.h>",
             "#define DIDAX_CAT_(a, b) a##b", "#define DIDAX_CAT(a, b) DIDAX_CAT_(a, b)",
             "#define DIDAX_STR_(a) #a", "#define DIDAX_STR(a) DIDAX_STR_(a)",
             # A NaN constant of exact bits, hidden from constant folding: gcc folds
             # `x - NAN` to a NaN of the other sign than the hardware's (and NumPy's).
             "static inline float didax_nan_f32(npy_uint32 bits) {",
             "    union { npy_uint32 u; float f; } v = {bits};",
             '    __asm__("" : "+m"(v));',
             "    return v.f;",
             "}",
             "static inline double didax_nan_f64(npy_uint64 bits) {",
             "    union { npy_uint64 u; double f; } v = {bits};",
             '    __asm__("" : "+m"(v));',
             "    return v.f;",
             "}",
             # `c ? a : b` of floats by their bits: the same value, and gcc vectorizes a
             # loop holding it beside a maximum's reduction, which it kept scalar with `?:`.
             "static inline float didax_select_f32(int c, float a, float b) {",
             "    union { npy_uint32 u; float f; } x = {.f = a}, y = {.f = b}, r;",
             "    const npy_uint32 m = -(npy_uint32)(c != 0);",
             "    r.u = (x.u & m) | (y.u & ~m);",
             "    return r.f;",
             "}",
             "static inline double didax_select_f64(int c, double a, double b) {",
             "    union { npy_uint64 u; double f; } x = {.f = a}, y = {.f = b}, r;",
             "    const npy_uint64 m = -(npy_uint64)(c != 0);",
             "    r.u = (x.u & m) | (y.u & ~m);",
             "    return r.f;",
             "}", ""]
    return "\n".join(lines) + "\n" + float32_math.C_SOURCE




_PROBE_SOURCE = module_prelude() + """
static PyObject *check(PyObject *self, PyObject *unused) {
    float a[16], s = 0.0f;
    for (int i = 0; i < 16; i++) a[i] = (float)(i % 2);
#pragma omp simd
    for (int i = 0; i < 16; i++) a[i] = sqrtf(a[i] * 0.0f + 1.0f);
    for (int i = 0; i < 16; i++) s += a[i];
    float m = -1.0f;  /* (a reduction declared in a block, as loops' maxima are) */
    {
#pragma omp declare reduction(didax_max : float : omp_out = omp_in > omp_out ? omp_in : omp_out) \
    initializer(omp_priv = -1.0f)
#pragma omp simd reduction(didax_max:m)
        for (int i = 0; i < 16; i++) m = a[i] > m ? a[i] : m;
    }
    int ran = 0;  /* (a team of one thread: OpenMP's library loads, no thread starts) */
#pragma omp parallel for num_threads(1) reduction(+:ran)
    for (int i = 0; i < 4; i++) ran += 1;
    return PyFloat_FromDouble((double)s / 16.0 * 3.0 * (ran / 4) * m);
}
static PyMethodDef methods[] = {{"check", check, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, DIDAX_STR(DIDAX_MODULE), NULL, -1,
                                  methods};
PyMODINIT_FUNC DIDAX_CAT(PyInit_, DIDAX_MODULE)(void) {
    import_array();
    return PyModule_Create(&def);
}
"""
