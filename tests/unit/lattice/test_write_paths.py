"""lb-mert's aggregated paths file: every previous line, the new paths not seen before, by sentence id.

Reference: the rule written out plainly (keep every previous line; keep a new line unless the same path,
the line up to its total score, came earlier; order by sentence id, previous lines before new ones and
each group in its own order), on random lines with repeats inside and across the files.
"""
from __future__ import annotations

import gzip

import numpy as np
import pytest

from smtlib.lattice.problem import write_paths


def _plain(previous: list[list[str]], new: list[tuple[int, str]]) -> tuple[list[str], int]:
    rows, seen, kept = [], set(), 0
    for lines in previous:
        for line in lines:
            rows.append((int(line.split(" ||| ")[0]), len(rows), line))
            seen.add(line.rsplit(" ||| ", 1)[0])
    for sid, line in new:
        key = line.rsplit(" ||| ", 1)[0]
        if key not in seen:
            seen.add(key)
            rows.append((sid, len(rows), line))
            kept += 1
    return [line for _, _, line in sorted(rows)], kept


def _line(rng, sid: int) -> str:
    words = " ".join(rng.choice(["a", "b", "c"], size=int(rng.integers(1, 3))))
    return f"{sid} ||| {words} ||| F0= {int(rng.integers(0, 2))} ||| {rng.normal():.3f}"


@pytest.mark.parametrize("seed", range(5))
def test_write_paths_keeps_the_rule(tmp_path, seed):
    rng = np.random.default_rng(seed)
    previous, files = [], []
    for f in range(int(rng.integers(0, 3))):  # zero to two previous files, sorted or not
        lines = [_line(rng, int(rng.integers(0, 6))) for _ in range(int(rng.integers(0, 30)))]
        if rng.random() < 0.5:
            lines.sort(key=lambda line: int(line.split(" ||| ")[0]))
        previous.append(lines)
        path = tmp_path / f"prev{f}.kbest.gz"
        with gzip.open(path, "wt") as fh:
            fh.write("".join(line + "\n" for line in lines))
        files.append(path)
    new = []
    for _ in range(int(rng.integers(0, 40))):
        sid = int(rng.integers(0, 7))
        new.append((sid, _line(rng, sid)))
    want, want_kept = _plain(previous, new)
    out = tmp_path / "out.kbest.gz"
    kept = write_paths(out, files, new)
    with gzip.open(out, "rt") as fh:
        assert fh.read().splitlines() == want
    assert kept == want_kept
