"""The compiled lattice reader (smtlib.lattice.reader) against the checking Python reader (issue 26).

Both read the files the writer wrote (:func:`smtlib.lattice.format.write_lattice`): every sentence
of the set must be the lattice the Python reader gives, value for value, with small chunks so that
blocks cross chunk boundaries; a damaged file is an error naming its file and line.
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from smtlib.errors import InputError
from smtlib.lattice.format import lattice_header, read_lattices, write_lattice
from smtlib.lattice.reader import read_lattice_set
from tests.support.lattice_fixtures import NAMES, random_lattice


def _write(path, lattices) -> None:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as fh:
        fh.write(lattice_header(list(NAMES)))
        for lat in lattices:
            write_lattice(fh, lat)


def _same(a, b) -> None:
    assert (a.sent_id, a.n_nodes) == (b.sent_id, b.n_nodes)
    assert a.tails.tolist() == b.tails.tolist() and a.heads.tolist() == b.heads.tolist()
    assert [tuple(w) for w in a.words] == [tuple(w) for w in b.words]
    assert np.array_equal(np.asarray(a.dense), np.asarray(b.dense))
    assert [dict(s) for s in a.sparse] == [dict(s) for s in b.sparse]
    assert list(a.feature_names) == list(b.feature_names)


@pytest.mark.parametrize("suffix, chunk_bytes", [(".lat", 16 << 20), (".lat.gz", 16 << 20), (".lat", 200)])
def test_the_compiled_reader_gives_the_python_readers_lattices(tmp_path, suffix, chunk_bytes):
    rng = np.random.default_rng(3)
    lattices = [random_lattice(rng, s, n_nodes=int(rng.integers(2, 9)), extra=int(rng.integers(0, 8)), sparse=True)
                for s in range(12)]
    path = tmp_path / f"dev{suffix}"
    _write(path, lattices)
    expected = read_lattices(path)
    ls = read_lattice_set([path], len(lattices), chunk_bytes=chunk_bytes).build()
    assert ls.n_sentences == len(lattices) and list(ls.feature_names) == list(NAMES)
    for s, lat in enumerate(expected):
        _same(ls.sentence(s), lat)


def test_sentences_without_a_lattice_are_empty(tmp_path):
    rng = np.random.default_rng(4)
    path = tmp_path / "dev.lat"
    _write(path, [random_lattice(rng, 0), random_lattice(rng, 1)])
    ls = read_lattice_set([path], 4).build()
    assert ls.n_nodes.tolist()[2:] == [0, 0] and ls.edge_off[2] == ls.edge_off[4]


@pytest.mark.parametrize("damage, line", [
    (lambda text: text.replace("#features", "#feature", 1), 2),
    (lambda text: text.replace(" ||| ", " || ", 1), 4),
    (lambda text: text[: text.rstrip("\n").rindex("\n") + 1], None),  # the last block one edge short
])
def test_a_damaged_file_is_an_error_naming_it(tmp_path, damage, line):
    rng = np.random.default_rng(5)
    path = tmp_path / "dev.lat"
    _write(path, [random_lattice(rng, 0), random_lattice(rng, 1)])
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_lattice_set([path], 2).build()
    assert str(path) in str(err.value)
    if line is not None:
        assert f"line {line}" in str(err.value) or f":{line}" in str(err.value), str(err.value)
