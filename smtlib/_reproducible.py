"""The same floating-point results on every x86-64 CPU: the numeric libraries' CPU-specific paths pinned.

Three libraries pick their machine code for the CPU they run on, and each choice can change the last
bits of a result (measured in ``benchmarks/results/cpu_independence.md``); a tie or a pruning
threshold then turns the last bit into another translation, another hope or fear, other weights:

* **NumPy** runs AVX-512 versions of ``exp``, ``log``, ``log10``, ``expm1``, ``log1p`` (float64) on
  CPUs that have AVX-512 (Intel Xeons, AMD Zen 4) and the C library's elsewhere (AMD Zen 2/3). The
  two differ in the last bit for some inputs. ``NPY_DISABLE_CPU_FEATURES`` turns the AVX-512 paths
  off (both the names NumPy >= 2.4 uses and the older ones), so every x86-64 CPU computes them with
  the C library's functions.
* **OpenBLAS** (bundled with NumPy's and SciPy's wheels) chooses its kernels per CPU, and the
  kernels sum in different orders: ``M.T @ u`` and ``a @ b`` differ between its SkylakeX and Haswell
  kernels. ``OPENBLAS_CORETYPE=Haswell`` (AVX2 and FMA, which every x86-64 server CPU since 2013-2017
  has; Haswell's and Zen's kernels give the same results) fixes the kernels, on a CPU that has them.
  Our own products whose order matters do not go through BLAS at all (:mod:`smtlib._dot`); this
  covers the rest, e.g. the BLAS calls inside SciPy's L-BFGS-B.
* **MKL**, for a NumPy built with it: ``MKL_CBWR=AVX2`` (its conditional numerical reproducibility).

These variables take effect only if set before NumPy loads, so :func:`pin_numeric_libraries` runs
when ``smtlib`` is imported (first thing in every ``smtlib`` command and in the workflow's
Snakefile, whose jobs inherit the environment). A variable the user has set is left as it is. In a
Python process that imported NumPy before ``smtlib``, nothing can be pinned any more:
:func:`pinned` then says False.

numba's kernels need none of this: compiled without fast-math, LLVM neither reorders nor fuses their
floating-point operations, whatever vector width the CPU offers (the same study).
"""

from __future__ import annotations

import os
import platform
import sys

#: NumPy's AVX-512 dispatch targets, by their names in NumPy >= 2.4 (X86_V4, ...) and before
#: (AVX512F, AVX512_SKX, ...); NumPy ignores the names it does not know or the CPU lacks.
NUMPY_AVX512 = "X86_V4 AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"
OPENBLAS_CORE = "Haswell"

_state = {"pinned": False}


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def numeric_environment(flags: set[str] | None = None, machine: str | None = None) -> dict[str, str]:
    """The variables :func:`pin_numeric_libraries` sets on this machine (empty off x86-64)."""
    machine = (machine or platform.machine()).lower()
    if machine not in ("x86_64", "amd64"):
        return {}
    flags = _cpu_flags() if flags is None else flags
    env = {"NPY_DISABLE_CPU_FEATURES": NUMPY_AVX512, "MKL_CBWR": "AVX2"}
    if {"avx2", "fma"} <= flags:
        env["OPENBLAS_CORETYPE"] = OPENBLAS_CORE
    return env


def pin_numeric_libraries(environ=None) -> bool:
    """Set the variables of :func:`numeric_environment` that are unset, if NumPy is not loaded yet.

    Returns whether the pinning is in effect for this process (see :func:`pinned`).
    """
    environ = os.environ if environ is None else environ
    if "numpy" in sys.modules:
        return _state["pinned"]
    for name, value in numeric_environment().items():
        environ.setdefault(name, value)
    _state["pinned"] = True
    return True


def pinned() -> bool:
    """Whether this process's NumPy was loaded after :func:`pin_numeric_libraries` set its variables."""
    return _state["pinned"]
