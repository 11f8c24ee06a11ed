"""The compiled lattice reader (smtlib.lattice.reader): against the checking Python reader, and directly.

Both readers read the files the writer wrote (:func:`smtlib.lattice.format.write_lattice`): every
sentence of the set must be the lattice the Python reader gives, value for value, with small chunks so
that blocks cross chunk boundaries. Then :func:`~smtlib.lattice.reader.read_lattice_set` on files
written by hand: the values of each field, an edge without words, several files and the ``transform``
hook, and every malformed input an :class:`~smtlib.errors.InputError` naming the file and its line,
also when the bad line is in a later chunk or inside a gzip stream.
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


# ------------------------------------------------------------------------------ files written by hand
HEADER = "#smtlib-lattice/1\n#features tm_0 lm_0\n"
SENTENCE_0 = "SENTENCE 0 NODES 3 EDGES 2\n0 1 ||| a b ||| 1 2.5e-3 ||| x_y=1.5 u_v=-2\n1 2 ||| ||| -0 1e-400 ||| \n"
SENTENCE_1 = "SENTENCE 1 NODES 2 EDGES 1\n0 1 ||| c ||| 0.1 123456789012345678901 ||| x_y=3\n"


def _file(path, text: str):
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


@pytest.mark.parametrize("name, chunk_bytes", [("dev.lat", 16 << 20), ("dev.lat.gz", 16 << 20), ("dev.lat", 40)])
def test_every_field_is_read_as_written(tmp_path, name, chunk_bytes):
    path = _file(tmp_path / name, HEADER + SENTENCE_0 + SENTENCE_1)
    ls = read_lattice_set(path, 2, chunk_bytes=chunk_bytes).build()
    first, second = ls.sentence(0), ls.sentence(1)
    assert (first.n_nodes, first.tails.tolist(), first.heads.tolist()) == (3, [0, 1], [1, 2])
    assert [tuple(w) for w in first.words] == [("a", "b"), ()]  # an edge that writes no word
    dense = np.asarray(first.dense)
    assert dense[0].tolist() == [1.0, 0.0025] and dense[1].tolist() == [0.0, 0.0]
    assert np.signbit(dense[1, 0]) and not np.signbit(dense[1, 1])  # -0 kept; 1e-400 underflows to 0
    assert [dict(sp) for sp in first.sparse] == [{"x_y": 1.5, "u_v": -2.0}, {}]
    # a number outside the compiled fast path (21 digits) is Python's float of the token
    assert np.asarray(second.dense)[0].tolist() == [0.1, float("123456789012345678901")]
    assert [dict(sp) for sp in second.sparse] == [{"x_y": 3.0}]


def test_a_header_alone_is_a_set_of_empty_sentences(tmp_path):
    ls = read_lattice_set(_file(tmp_path / "dev.lat", HEADER), 3).build()
    assert ls.n_nodes.tolist() == [0, 0, 0] and list(ls.feature_names) == ["tm_0", "lm_0"]


def test_files_are_merged_per_sentence_and_transform_sees_each_sentence(tmp_path):
    one = _file(tmp_path / "one.lat", HEADER + SENTENCE_0)
    # the second file lists the features in the other order: its columns are put in the first file's
    two = _file(tmp_path / "two.lat", "#smtlib-lattice/1\n#features lm_0 tm_0\n"
                "SENTENCE 0 NODES 2 EDGES 1\n0 1 ||| z ||| 7 8 ||| \n")
    seen = []

    def transform(sid, part, builder):
        seen.append((sid, part[0], len(part[1])))
        return part

    ls = read_lattice_set([one, two], 1, transform=transform).build()
    assert seen == [(0, 3, 2), (0, 2, 1)]
    merged = ls.sentence(0)
    assert merged.n_edges == 3 and ("z",) in [tuple(w) for w in merged.words]
    z = [tuple(w) for w in merged.words].index(("z",))
    assert np.asarray(merged.dense)[z].tolist() == [8.0, 7.0]


def test_a_sentence_twice_in_one_file_is_an_error_not_a_merge(tmp_path):
    # the checking reader refuses it too (blocks are 0, 1, 2 ...); separate files are still merged above
    twice = _file(tmp_path / "twice.lat", HEADER + SENTENCE_0 + SENTENCE_0)
    with pytest.raises(InputError, match="sentence 0 has two lattices in this file") as err:
        read_lattice_set([twice], 1).build()
    assert "twice.lat" in str(err.value)
    with pytest.raises(InputError):
        read_lattices(twice)


def _second_edge(line: str) -> str:
    """A file whose sentence 1 has the one edge ``line`` (line 7 of the file)."""
    return HEADER + SENTENCE_0 + "SENTENCE 1 NODES 2 EDGES 1\n" + line


def _long_block(bad_edge: int, bad_value: str) -> str:
    """One sentence of a chain of 12 edges, edge ``bad_edge`` (0-based; line 4 + bad_edge) with ``bad_value``."""
    edges = "".join(f"{e} {e + 1} ||| w{e} ||| 1 {bad_value if e == bad_edge else 2} ||| \n" for e in range(12))
    return HEADER + "SENTENCE 0 NODES 13 EDGES 12\n" + edges + SENTENCE_1


BAD_FILES = [  # (text, line, what the message says)
    pytest.param("#smtlib-lattice/2\n#features tm_0 lm_0\n", 1, "not a lattice file", id="other-format"),
    pytest.param((HEADER + SENTENCE_0).replace("\n", "\r\n"), 1, "Windows line ends", id="crlf"),
    pytest.param("#smtlib-lattice/1\n#feature tm_0 lm_0\n", 2, "'#features'", id="no-features-line"),
    pytest.param(HEADER + "SENTENCE x NODES 3 EDGES 2\n", 3, "SENTENCE id NODES n EDGES m", id="bad-sentence-line"),
    pytest.param(HEADER + "SENTENCE 0 NODES 1 EDGES 0\n", 3, "2 nodes and 1 edge", id="one-node"),
    pytest.param(HEADER + "SENTENCE 0 NODES 2 EDGES 0\n" + SENTENCE_1, 3, "2 nodes and 1 edge", id="no-edge"),
    pytest.param(_second_edge("0 1 ||| c ||| 0.1 2\n"), 7, "edge line must be", id="three-fields"),
    pytest.param(_second_edge("1 1 ||| c ||| 0.1 2 ||| \n"), 7, "tail < head < NODES", id="tail-not-before-head"),
    pytest.param(_second_edge("0 2 ||| c ||| 0.1 2 ||| \n"), 7, "tail < head < NODES", id="head-past-goal"),
    pytest.param(_second_edge("0 1 ||| c ||| 0.1 2 ||| x_y\n"), 7, "name=value", id="sparse-without-value"),
    pytest.param(_second_edge("0 1 ||| c ||| 0.1 2 ||| =1\n"), 7, "name=value", id="sparse-without-name"),
    pytest.param(_second_edge("0 1 ||| c ||| 0.1 ||| \n"), 7, "1 dense values, expected 2", id="too-few-values"),
    pytest.param(_second_edge("0 1 ||| c ||| 0.1 abc ||| \n"), 7, "'abc' is not a number", id="dense-not-a-number"),
    pytest.param(_second_edge("0 1 ||| c ||| 0.1 2 ||| x_y=1,5\n"), 7, "'1,5' is not a number",
                 id="sparse-not-a-number"),
    pytest.param(HEADER + SENTENCE_0 + "SENTENCE 1 NODES 3 EDGES 2\n0 1 ||| c ||| 0.1 2 ||| \n", 8,
                 "ends inside a sentence block", id="block-cut-short"),
    pytest.param(HEADER + SENTENCE_0 + SENTENCE_1.rstrip("\n"), 7, "no line end", id="no-last-line-end"),
    pytest.param(_long_block(9, "abc"), 13, "'abc' is not a number", id="deep-in-a-block"),
]


@pytest.mark.parametrize("name", ["dev.lat", "dev.lat.gz"])
@pytest.mark.parametrize("chunk_bytes", [16 << 20, 40])
@pytest.mark.parametrize("text, line, message", BAD_FILES)
def test_a_malformed_file_is_an_error_at_its_line(tmp_path, name, chunk_bytes, text, line, message):
    path = _file(tmp_path / name, text)
    with pytest.raises(InputError) as err:
        read_lattice_set(path, 2, chunk_bytes=chunk_bytes).build()
    assert (err.value.path, err.value.line) == (str(path), line), str(err.value)
    assert message in err.value.message


@pytest.mark.parametrize("text, message", [
    (HEADER + SENTENCE_0 + SENTENCE_1.replace("SENTENCE 1", "SENTENCE 2"), "the references have 2 segments"),
    (HEADER + "SENTENCE 0 NODES 3 EDGES 2\n1 2 ||| a ||| 1 2 ||| \n0 1 ||| b ||| 1 2 ||| \n", "not sorted by head"),
])
def test_a_block_that_does_not_fit_the_set_names_the_file(tmp_path, text, message):
    path = _file(tmp_path / "dev.lat", text)
    with pytest.raises(InputError, match=message) as err:
        read_lattice_set(path, 2).build()
    assert err.value.path == str(path)


def test_words_that_are_not_utf8_and_other_features_are_errors(tmp_path):
    path = tmp_path / "dev.lat"
    path.write_bytes((HEADER + SENTENCE_0).encode().replace(b"a b", b"a \xff"))
    with pytest.raises(InputError, match="not UTF-8") as err:
        read_lattice_set(path, 1).build()
    assert err.value.path == str(path)
    one = _file(tmp_path / "one.lat", HEADER + SENTENCE_0)
    two = _file(tmp_path / "two.lat", "#smtlib-lattice/1\n#features tm_0 wp_0\n" + SENTENCE_0)
    with pytest.raises(InputError, match="dense features") as err:
        read_lattice_set([one, two], 1).build()
    assert (err.value.path, err.value.line) == (str(two), 2)
    with pytest.raises(InputError, match="no lattice file given"):
        read_lattice_set([], 1)


def test_the_checking_reader_names_windows_line_ends_too(tmp_path):
    path = _file(tmp_path / "dev.lat", (HEADER + SENTENCE_0).replace("\n", "\r\n"))
    with pytest.raises(InputError, match="Windows line ends") as err:
        read_lattices(path)
    assert (err.value.path, err.value.line) == (str(path), 1)
