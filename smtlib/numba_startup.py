"""Cheaper start-up of numba in every command that runs compiled kernels (decoding, tuning, scoring).

The first call of any compiled function (even one loaded from numba's cache) makes numba import its
implementations of NumPy. One of them, ``numba.np.arraymath``, imports ``scipy.linalg`` at import
time only to learn whether a BLAS is available (``_HAVE_BLAS``); that import pulls in much of scipy
and numpy's f2py and costs about 0.15 s of CPU and 30 MiB per process, a tenth of a short command's CPU
(a k-best tuning step, a MIRA shard epoch). :func:`load_numba_implementations` imports ``numba.np.arraymath`` while
numba's BLAS check only asks whether scipy is installed, which gives the same answer without the
import, and then restores the check: a kernel that really calls BLAS still imports scipy (and runs
numba's full check, integer width included) when it is compiled or first called.
"""

from __future__ import annotations

import importlib.util
import sys


def _scipy_installed() -> None:
    if importlib.util.find_spec("scipy") is None:
        raise ImportError("scipy is required for linear algebra")


def _load_typing_without_cffi() -> None:
    """Import numba's cffi typing (which every first kernel call imports) with cffi hidden.

    With cffi installed, ``numba.core.typing.cffi_utils`` imports it and its C parser (pycparser):
    0.07 s of CPU per process, for typing cffi functions passed to kernels, which no kernel here
    takes. Hidden, numba records cffi as unsupported in this process; cffi itself stays importable.
    """
    if "numba.core.typing.cffi_utils" in sys.modules or "cffi" in sys.modules:
        return
    sys.modules["cffi"] = None  # `import cffi` raises ImportError
    try:
        import numba.core.typing.cffi_utils  # noqa: F401
    except ImportError:
        pass
    finally:
        del sys.modules["cffi"]


def load_numba_implementations() -> None:
    """Import numba's NumPy implementations without importing scipy.linalg, and its typing without
    cffi (see the module docstring and :func:`_load_typing_without_cffi`).

    Does nothing if they are imported already or numba's layout is not the expected one.
    """
    _load_typing_without_cffi()
    if "numba.np.arraymath" in sys.modules:
        return
    try:
        import numba.np.linalg as linalg

        real = linalg.ensure_blas
    except (ImportError, AttributeError):
        return
    linalg.ensure_blas = _scipy_installed
    try:
        import numba.np.arraymath  # noqa: F401 - runs numba's BLAS check once, at import
    finally:
        linalg.ensure_blas = real
