"""smtlib._bytes: the pieces the compiled readers share."""

import numpy as np

from smtlib._bytes import room_for_row, same_bytes


def test_same_bytes_compares_the_ranges_only():
    a, b = np.frombuffer(b"xxabcx", dtype=np.uint8), np.frombuffer(b"abcd", dtype=np.uint8)
    assert same_bytes(a, 2, b, 0, 3) and same_bytes(a, 0, b, 0, 0)
    assert not same_bytes(a, 2, b, 0, 4) and not same_bytes(a, 1, b, 0, 3)


def test_room_for_row_grows_only_when_full_and_keeps_the_rows():
    rows = np.arange(6, dtype=np.int64).reshape(2, 3)
    assert room_for_row(rows, 1) is rows
    bigger = room_for_row(rows, 2)
    assert bigger.shape == (20, 3) and bigger.dtype == np.int64
    assert bigger[:2].tolist() == rows.tolist()
    for n in range(2, 100):  # filled row by row, as the readers do
        bigger = room_for_row(bigger, n)
        bigger[n] = n
    assert bigger[:100, 0].tolist() == [0, 3] + list(range(2, 100))
