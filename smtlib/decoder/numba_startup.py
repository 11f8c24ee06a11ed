"""Cheaper start-up of numba in a decoding process.

The first call of any compiled function (even one loaded from numba's cache) makes numba import its
implementations of NumPy. One of them, ``numba.np.arraymath``, imports ``scipy.linalg`` at import
time only to learn whether a BLAS is available (``_HAVE_BLAS``); that import pulls in much of scipy
and numpy's f2py and costs about 0.15 s of CPU and 30 MiB per process, a tenth of what decoding one
sentence costs in all. :func:`load_numba_implementations` imports ``numba.np.arraymath`` while
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


def load_numba_implementations() -> None:
    """Import numba's NumPy implementations without importing scipy.linalg (see the module docstring).

    Does nothing if they are imported already or numba's layout is not the expected one.
    """
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
