"""The options' sparse scores: one compiled pass over the entries, the same bits as ``dot`` per entry."""

from __future__ import annotations

import numpy as np

from smtlib._dot import dot
from smtlib.decoder.model import add_sparse_dots
from smtlib.decoder.phrases import SparseRows


def _rows(rng, n_entries, n_names, values_dtype):
    counts = rng.integers(0, 6, n_entries)
    counts[::7] = 0  # entries without sparse features
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    ids = rng.integers(0, n_names, offsets[-1]).astype(np.int32)
    values = (rng.standard_normal(offsets[-1]) * 10.0 ** rng.integers(-3, 4, offsets[-1])).astype(values_dtype)
    return SparseRows(offsets, ids, values)


def test_each_score_has_the_bits_of_dot_one_entry_at_a_time():
    rng = np.random.default_rng(7)
    for values_dtype in (np.float64, np.float32):
        rows = _rows(rng, 500, 300, values_dtype)
        weights = rng.standard_normal(300) * 1e-3
        entries = np.concatenate([rng.integers(0, 500, 400), [-1, 3, -1]]).astype(np.int64)
        base = rng.standard_normal(len(entries))
        expected = base.copy()
        for i, e in enumerate(entries.tolist()):
            if e >= 0 and rows.offsets[e + 1] > rows.offsets[e]:
                ids, vals = rows[e]
                expected[i] += dot(weights[ids], vals)
        out = base.copy()
        add_sparse_dots(rows, weights, entries, out)
        assert out.tobytes() == expected.tobytes()


def test_entries_without_features_and_pass_through_ones_are_left_as_they_are():
    rows = SparseRows(np.array([0, 0, 2], dtype=np.int64), np.array([0, 1], dtype=np.int32), np.array([2.0, -3.0]))
    out = np.array([-0.0, 5.0, 1.0])
    add_sparse_dots(rows, np.array([0.5, 1.0]), np.array([0, -1, 1]), out)
    assert out.tolist() == [-0.0, 5.0, 1.0 + (0.5 * 2.0 + 1.0 * -3.0)]
    assert np.signbit(out[0])
