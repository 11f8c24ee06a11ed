"""k-best lists: dialects, pools, merging, round trips, and every n-best file in ../shared/data."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from smtlib.errors import InputError
from smtlib.kbest import parse_line, read_pool, write_pool
from smtlib.kbest.pool import argmax_per_sentence

MODERN = "0 ||| the house ||| LM0= -4.5 TranslationModel0= -1 -2 -3 -4 WT_maison~house= 1 ||| -7.25 ||| 0-0 1-1\n"
OLD = "0||| the house  ||| d: 0 -3.3 lm: -47.2 tm: -36.7 -58.3 w: -2 ||| -9.26\n"
JOSHUA = "3 ||| la maison ||| lm_0=-27.184 tm_pt_0=-0.000 WordPenalty=-5.646 ||| -227.217\n"


def write(tmp_path, name, text, compress=False):
    path = tmp_path / name
    if compress:
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_parse_modern_line():
    line = parse_line(MODERN)
    assert line.sentence_id == 0 and line.text == "the house" and line.total == -7.25
    assert [g.column_names() for g in line.groups] == [["LM0_0"], [f"TranslationModel0_{k}" for k in range(4)]]
    assert line.dense == (-4.5, -1, -2, -3, -4)
    assert line.sparse == (("WT_maison~house", 1.0),)
    assert line.extra == "0-0 1-1"


def test_parse_old_and_joshua_dialects():
    old = parse_line(OLD)
    assert [n for g in old.groups for n in g.column_names()] == ["d_0", "d_1", "lm_0", "tm_0", "tm_1", "w_0"]
    assert old.text == "the house"
    joshua = parse_line(JOSHUA)
    assert [n for g in joshua.groups for n in g.column_names()] == ["lm_0", "tm_pt_0", "WordPenalty"]
    assert joshua.dense == (-27.184, -0.0, -5.646)
    zmert = parse_line("0 ||| a b ||| -126.855 -5.823 -8.813")
    assert zmert.groups[0].column_names() == ["F_0", "F_1", "F_2"] and zmert.total is None


@pytest.mark.parametrize(
    "line,message",
    [
        ("0 ||| a b\n", "field"),
        ("x ||| a ||| LM0= 1 ||| 1\n", "sentence id"),
        ("-1 ||| a ||| LM0= 1 ||| 1\n", "sentence id"),
        ("0 ||| a ||| LM0= nan ||| 1\n", "not finite"),
        ("0 ||| a ||| LM0= inf ||| 1\n", "not finite"),
        ("0 ||| a ||| LM0= abc ||| 1\n", "not a number"),
        ("0 ||| a ||| 1.5 LM0= 1 ||| 1\n", "no feature name"),
        ("0 ||| a ||| F= 1 1.5e ||| 1\n", "not a number"),
        ("0 ||| a ||| LM0= ||| 1\n", "no value"),
        ("0 ||| a ||| LM0= 1 LM0= 2 ||| 1\n", "twice"),
        ("0 ||| a ||| LM0= 1 ||| x\n", "total"),
    ],
)
def test_malformed_lines(line, message):
    with pytest.raises(InputError, match=message):
        parse_line(line, "f.nbest", 7)


def test_pool_arrays_and_merge(tmp_path):
    a = write(tmp_path, "a.nbest", "0 ||| x ||| F= 1 2 ||| 0\n0 ||| y ||| F= 3 4 s_a= 1 ||| 0\n2 ||| z ||| F= 5 6 ||| 0\n")
    b = write(tmp_path, "b.nbest.gz", "0 ||| y ||| F= 3 4 s_a= 1 ||| 9\n0 ||| y ||| F= 3 5 ||| 0\n1 ||| w ||| F= 0 0 s_b= 2 ||| 0\n", compress=True)
    pool = read_pool([a, b])
    assert pool.duplicates_dropped == 1  # the same text and features; the total does not count
    assert pool.n_sentences == 3 and pool.n_hypotheses == 5
    np.testing.assert_array_equal(pool.offsets, [0, 3, 4, 5])
    assert pool.texts == ["x", "y", "y", "w", "z"]
    assert pool.feature_names == ["F_0", "F_1", "s_a", "s_b"]
    np.testing.assert_array_equal(pool.features().toarray(), [[1, 2, 0, 0], [3, 4, 1, 0], [3, 5, 0, 0], [0, 0, 0, 2], [5, 6, 0, 0]])
    np.testing.assert_array_equal(pool.model_scores(np.array([1.0, 0, 10, 1])), [1, 13, 3, 2, 5])
    np.testing.assert_array_equal(pool.best_indices(np.array([1.0, 0, 10, 1])), [1, 3, 4])


def test_round_trip(tmp_path):
    src = write(tmp_path, "in.nbest", MODERN + "1 ||| b ||| LM0= 2 TranslationModel0= 0.5 0.25 0.125 1e-05 ||| 3 ||| 0-0\n")
    pool = read_pool(src)
    write_pool(pool, tmp_path / "out.nbest.gz")
    again = read_pool(tmp_path / "out.nbest.gz")
    assert again.texts == pool.texts and again.feature_names == pool.feature_names
    np.testing.assert_array_equal(again.features().toarray(), pool.features().toarray())
    np.testing.assert_array_equal(again.totals, pool.totals)
    assert again.extras == pool.extras


def test_ids_must_not_decrease_within_a_file(tmp_path):
    path = write(tmp_path, "bad.nbest", "1 ||| a ||| F= 1 ||| 0\n0 ||| b ||| F= 1 ||| 0\n")
    with pytest.raises(InputError, match=r"bad.nbest:2: sentence id 0 after 1"):
        read_pool(path)


def test_id_out_of_range_and_inconsistent_dense_sizes(tmp_path):
    path = write(tmp_path, "a.nbest", "0 ||| a ||| F= 1 ||| 0\n5 ||| b ||| F= 1 ||| 0\n")
    with pytest.raises(InputError, match="out of range"):
        read_pool(path, n_sentences=3)
    path = write(tmp_path, "b.nbest", "0 ||| a ||| F= 1 ||| 0\n1 ||| b ||| F= 1 2 ||| 0\n")
    with pytest.raises(InputError, match="value"):
        read_pool(path)


def test_empty_and_non_utf8_files(tmp_path):
    with pytest.raises(InputError, match="empty"):
        read_pool(write(tmp_path, "e.nbest", ""))
    bad = tmp_path / "b.nbest"
    bad.write_bytes(b"0 ||| \xff ||| F= 1 ||| 0\n")
    with pytest.raises(InputError, match="UTF-8"):
        read_pool(bad)


def test_argmax_first_on_ties():
    scores = np.array([1.0, 3, 3, 2, 5, 5])
    np.testing.assert_array_equal(argmax_per_sentence(scores, np.array([0, 3, 3, 6])), [1, -1, 4])


def _nbest_files(root):
    names = ("nbest", "NBEST", "output.gold.gz", "output-classlm.gold", "cand_database")
    return sorted(p for p in root.rglob("*") if p.is_file() and any(n in p.name for n in names) and "TRANS" not in p.name)


@pytest.mark.data
def test_every_shared_nbest_file_parses(shared_data):
    files = _nbest_files(shared_data)
    assert len(files) >= 37  # 36 Moses n-best lists, Joshua 10-best lists, a Z-MERT candidate file
    for path in files:
        pool = read_pool(path, dedup=False)
        assert pool.n_hypotheses > 0, path
        assert pool.dense.shape[1] >= 1, path


def _pool_with(paths, fast):
    from smtlib.kbest.pool import _PoolBuilder

    builder = _PoolBuilder(fast=fast)
    for path in paths:
        builder.add_file(path)
    return builder.build()


def _assert_same_pool(a, b):
    assert a.texts == b.texts and a.feature_names == b.feature_names and a.extras == b.extras
    np.testing.assert_array_equal(a.offsets, b.offsets)
    np.testing.assert_array_equal(a.features().toarray(), b.features().toarray())
    np.testing.assert_array_equal(a.totals, b.totals)


def test_fast_and_line_by_line_parsers_agree(tmp_path):
    text = MODERN + "0 ||| the  house ||| LM0= -4.5 TranslationModel0= -1 -2 -3 -4 WT_a= 2 ||| -7 ||| 1-1\n" + "1 ||| x ||| LM0= 1e-3 TranslationModel0= .5 -2. 3 +4 ||| 2 ||| 0-0\n"
    path = write(tmp_path, "a.nbest", text)
    _assert_same_pool(_pool_with([path], True), _pool_with([path], False))


@pytest.mark.data
def test_fast_and_line_by_line_parsers_agree_on_shared_data(shared_data):
    for path in _nbest_files(shared_data):
        _assert_same_pool(_pool_with([path], True), _pool_with([path], False))


@pytest.mark.data
def test_merge_counts_equal_moses_extractor(shared_data):
    # mert.extractor-bin truth: 1,020 / 2,019 / 3,019 / 3,963 / 4,932 lines incl. 20 header lines.
    data = shared_data / "moses-regtest-mert/mert.extractor-bin/data"
    expected = [1000, 1999, 2999, 3943, 4912]
    for i, count in enumerate(expected, 1):
        assert read_pool([data / f"nbest.{k}.gz" for k in range(1, i + 1)]).n_hypotheses == count
