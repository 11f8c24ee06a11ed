"""Matrix-vector and vector-vector products whose bits do not depend on the CPU or the BLAS library.

``M @ v`` on NumPy arrays calls BLAS, whose kernels (chosen per CPU, and different between OpenBLAS,
MKL and their versions) sum in different orders: the same model scores differ in the last bit from
one machine to another, and a tie between two hypotheses, or a score at a pruning threshold, then
decides differently. Every product here sums strictly left to right, in float64, compiled by numba
without fast-math (LLVM neither reorders nor fuses the operations), so it gives the same bits on
every CPU. They are used wherever a product's value is compared or written: the decoder's option
and hypothesis scores, the k-best pools' and lattices' model scores, the line searches.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _matvec(matrix, vector, out):  # pragma: no cover - compiled
    rows, cols = matrix.shape
    for i in range(rows):
        total = 0.0
        for j in range(cols):
            total += matrix[i, j] * vector[j]
        out[i] = total


@numba.njit(cache=True)
def _vecdot(a, b):  # pragma: no cover - compiled
    total = 0.0
    for i in range(a.shape[0]):
        total += a[i] * b[i]
    return total


def matvec(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` (2-D by 1-D, float64), each row's sum taken in column order."""
    matrix = np.asarray(matrix, dtype=np.float64)
    vector = np.ascontiguousarray(vector, dtype=np.float64)
    if matrix.ndim != 2 or vector.ndim != 1 or matrix.shape[1] != vector.shape[0]:
        raise ValueError(f"matvec: shapes {matrix.shape} and {vector.shape} do not align")
    out = np.empty(matrix.shape[0], dtype=np.float64)
    if matrix.shape[0]:
        _matvec(matrix, vector, out)
    return out


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a @ b`` of two 1-D float64 vectors, summed in index order."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"dot: shapes {a.shape} and {b.shape} do not align")
    return float(_vecdot(a, b)) if a.shape[0] else 0.0


@numba.njit(cache=True)
def _rmatvec(matrix, vector, out):  # pragma: no cover - compiled
    rows, cols = matrix.shape
    out[:] = 0.0
    for i in range(rows):
        v = vector[i]
        for j in range(cols):
            out[j] += matrix[i, j] * v


def rmatvec(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix.T @ vector`` (float64): each column's sum taken in row order."""
    matrix = np.asarray(matrix, dtype=np.float64)
    vector = np.ascontiguousarray(vector, dtype=np.float64)
    if matrix.ndim != 2 or vector.ndim != 1 or matrix.shape[0] != vector.shape[0]:
        raise ValueError(f"rmatvec: shapes {matrix.shape} and {vector.shape} do not align")
    out = np.zeros(matrix.shape[1], dtype=np.float64)
    if matrix.shape[0]:
        _rmatvec(matrix, vector, out)
    return out
