"""smtlib._dot: products summed in a fixed order, and smtlib._reproducible's pinned variables."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib._dot import dot, matvec, rmatvec
from smtlib._reproducible import NUMPY_AVX512, numeric_environment


def test_products_equal_a_left_to_right_sum():
    rng = np.random.default_rng(3)
    m = rng.standard_normal((7, 19))
    v = rng.standard_normal(19)
    u = rng.standard_normal(7)
    for i in range(7):
        total = 0.0
        for j in range(19):
            total += m[i, j] * v[j]
        assert matvec(m, v)[i] == total  # bit for bit: the order is the definition
    for j in range(19):
        total = 0.0
        for i in range(7):
            total += m[i, j] * u[i]
        assert rmatvec(m, u)[j] == total
    total = 0.0
    for x in v:
        total += x * x
    assert dot(v, v) == total
    np.testing.assert_allclose(matvec(m, v), m @ v, rtol=1e-12)
    np.testing.assert_allclose(rmatvec(m, u), m.T @ u, rtol=1e-12)


def test_products_take_views_and_empty_inputs():
    m = np.arange(12.0).reshape(3, 4)
    assert matvec(m.T, np.ones(3)).tolist() == (m.T @ np.ones(3)).tolist()  # a Fortran-ordered view
    assert matvec(np.zeros((0, 4)), np.ones(4)).shape == (0,)
    assert rmatvec(np.zeros((0, 4)), np.zeros(0)).tolist() == [0.0] * 4
    assert dot(np.zeros(0), np.zeros(0)) == 0.0
    with pytest.raises(ValueError, match="do not align"):
        matvec(m, np.ones(3))


def test_pinned_variables_by_cpu():
    assert numeric_environment(flags={"avx2", "fma"}, machine="x86_64") == {
        "NPY_DISABLE_CPU_FEATURES": NUMPY_AVX512, "MKL_CBWR": "AVX2", "OPENBLAS_CORETYPE": "Haswell"}
    # without AVX2 and FMA, Haswell's kernels would not run: BLAS stays unpinned
    assert "OPENBLAS_CORETYPE" not in numeric_environment(flags={"sse4_2"}, machine="x86_64")
    assert numeric_environment(flags=set(), machine="aarch64") == {}
