"""Symmetrization, phrase extraction, scores and reordering on corpora small enough to check by hand,
and the fast kernels against slow reference implementations written from the definitions."""

from __future__ import annotations

import gzip
import itertools

import numpy as np
import pytest

from smtlib.errors import InputError
from smtlib.system.align import Links, sentence_lengths, symmetrize
from smtlib.system.build import build_phrase_tables
from smtlib.system.extract import DISC, MONO, SWAP, mask_to_text
from smtlib.system.reordering import orientation_priors, reordering_scores
from smtlib.system.score import lexical_table, score_pairs, table_limit
from tests.support.phrase_fixtures import extracted_pairs, pair_text


def _links(lines, src, tgt):
    return Links.from_lines(lines, sentence_lengths(src), sentence_lengths(tgt))


def _pairs(src, tgt, align, max_length=7):
    """{(src phrase, tgt phrase): (joint, c(f), c(e), alignment text, prev counts, next counts)}."""
    corpus, links, pairs = extracted_pairs(src, tgt, align, max_length)
    out = {}
    for k in range(len(pairs)):
        out[pair_text(corpus, pairs, k)] = (
            int(pairs.joint[k]), int(pairs.src_count[k]), int(pairs.tgt_count[k]), mask_to_text(int(pairs.mask[k])),
            tuple(pairs.orient_prev[k]), tuple(pairs.orient_next[k]),
        )
    return corpus, links, pairs, out


# -- extraction --------------------------------------------------------------------------------
def test_extraction_with_a_crossing_alignment():
    # a-x, b-z, c-y: the consistent pairs are a/x, b/z, c/y, "b c"/"y z", "a b c"/"x y z".
    _, _, _, got = _pairs(["a b c"], ["x y z"], ["0-0 1-2 2-1"])
    assert set(got) == {("a", "x"), ("b", "z"), ("c", "y"), ("b c", "y z"), ("a b c", "x y z")}
    assert got[("b c", "y z")][3] == "0-1 1-0"
    # Orientations (index 0 mono, 1 swap, 2 disc) worked out from the definitions:
    # a/x: prev = sentence start (mono); next: neither (1,1) nor (-1,1) aligned -> disc.
    assert got[("a", "x")][4:] == ((1, 0, 0), (0, 0, 1))
    # c/y (f2, e1): prev: (1,0) no, (3,0) no -> disc; next: (3,2) no, (1,2) yes -> swap.
    assert got[("c", "y")][4:] == ((0, 0, 1), (0, 1, 0))
    # b/z (f1, e2): prev: (0,1) no, (2,1) yes -> swap; next: (2,3) no, (0,3) no -> disc.
    assert got[("b", "z")][4:] == ((0, 1, 0), (0, 0, 1))
    # "b c"/"y z": prev (0,0) yes -> mono; next = sentence end -> mono.
    assert got[("b c", "y z")][4:] == ((1, 0, 0), (1, 0, 0))


def test_unaligned_words_extend_phrases_on_both_sides():
    # b (source) and y (target) are unaligned.
    _, _, _, got = _pairs(["a b"], ["x y"], ["0-0"])
    assert set(got) == {("a", "x"), ("a b", "x"), ("a", "x y"), ("a b", "x y")}
    assert all(v[0] == 1 for v in got.values())


def test_max_phrase_length_applies_to_both_sides():
    _, _, _, got = _pairs(["a b c"], ["x y z"], ["0-0 1-1 2-2"], max_length=2)
    assert ("a b c", "x y z") not in got
    assert {("a b", "x y"), ("b c", "y z")} <= set(got)
    with pytest.raises(InputError):
        _pairs(["a"], ["x"], ["0-0"], max_length=9)


def test_counts_and_four_scores_by_hand():
    src = ["a b", "a", "a"]
    tgt = ["x y", "x", "z"]
    align = ["0-0 1-1", "0-0", "0-0"]
    corpus, links, pairs, got = _pairs(src, tgt, align)
    # c(a,x) = 2, c(a) = 3 (a/x twice, a/z once), c(x) = 2.
    assert got[("a", "x")][:3] == (2, 3, 2)
    assert got[("a", "z")][:3] == (1, 3, 1)
    assert got[("a b", "x y")][:3] == (1, 1, 1)
    scores = score_pairs(corpus, pairs, lexical_table(corpus, links)).matrix()
    index = {k: n for n, k in enumerate(got)}
    # Word table: w(x|a) = 2/3, w(z|a) = 1/3, w(y|b) = 1; w(a|x) = w(a|z) = w(b|y) = 1.
    # Columns: p(f|e), lex(f|e), p(e|f), lex(e|f).
    np.testing.assert_allclose(scores[index[("a", "x")]], [1.0, 1.0, 2 / 3, 2 / 3])
    np.testing.assert_allclose(scores[index[("a", "z")]], [1.0, 1.0, 1 / 3, 1 / 3])
    np.testing.assert_allclose(scores[index[("a b", "x y")]], [1.0, 1.0, 1.0, 2 / 3])


def test_lexical_weights_with_null_and_many_to_one_links():
    src = ["a c", "a", "c", "b d", "e"]
    tgt = ["x", "x", "y", "z", "u v"]
    align = ["0-0", "0-0", "0-0", "0-0", "0-0 0-1"]
    corpus, links, pairs, got = _pairs(src, tgt, align)
    scores = score_pairs(corpus, pairs, lexical_table(corpus, links)).matrix()
    index = {k: n for n, k in enumerate(got)}
    # Links: (a,x) x2, (c,y), (b,z), (e,u), (e,v); unaligned source words c (sentence 1) and d.
    # w(f|e): w(a|x) = 1, w(c|NULL) = 1/2 (c and d are the two unaligned source words).
    # "a c"/"x": lex(f|e) = w(a|x) * w(c|NULL) = 1/2; lex(e|f) = w(x|a) = 2/2 = 1.
    np.testing.assert_allclose(scores[index[("a c", "x")]][[1, 3]], [0.5, 1.0])
    # e/"u v": e has two links; w(u|e) = w(v|e) = 1/2; lex(e|f) = 1/2 * 1/2;
    # lex(f|e) = average of w(e|u) = 1 and w(e|v) = 1 -> 1.
    np.testing.assert_allclose(scores[index[("e", "u v")]][[1, 3]], [1.0, 0.25])


def test_most_frequent_alignment_is_used():
    src = ["a b", "a b", "a b"]
    tgt = ["x y", "x y", "x y"]
    align = ["0-0 1-1", "0-1 1-0", "0-0 1-1"]
    _, _, _, got = _pairs(src, tgt, align)
    assert got[("a b", "x y")][0] == 3
    assert got[("a b", "x y")][3] == "0-0 1-1"


def _reference_pairs(src, tgt, align, max_length):
    """Every (f span, e span) with a link inside and no link leaving it (the definition)."""
    out = {}
    for s, (fs, es, al) in enumerate(zip(src, tgt, align)):
        f, e = fs.split(), es.split()
        pts = {tuple(map(int, p.split("-"))) for p in al.split()}
        for f1, e1 in itertools.product(range(len(f)), range(len(e))):
            for f2 in range(f1, min(f1 + max_length, len(f))):
                for e2 in range(e1, min(e1 + max_length, len(e))):
                    inside = [(i, j) for i, j in pts if f1 <= i <= f2 and e1 <= j <= e2]
                    crossing = [(i, j) for i, j in pts if (f1 <= i <= f2) != (e1 <= j <= e2)]
                    if inside and not crossing:
                        key = (" ".join(f[f1 : f2 + 1]), " ".join(e[e1 : e2 + 1]))
                        out[key] = out.get(key, 0) + 1
    return out


def test_extraction_equals_the_definition_on_random_corpora():
    rng = np.random.default_rng(4)
    src, tgt, align = [], [], []
    for _ in range(60):
        nf, ne = rng.integers(1, 10, size=2)
        src.append(" ".join(f"f{w}" for w in rng.integers(0, 6, nf)))
        tgt.append(" ".join(f"e{w}" for w in rng.integers(0, 6, ne)))
        pts = {(int(rng.integers(nf)), int(rng.integers(ne))) for _ in range(int(rng.integers(0, nf + ne)))}
        align.append(" ".join(f"{i}-{j}" for i, j in sorted(pts)))
    for max_length in (3, 7):
        _, _, _, got = _pairs(src, tgt, align, max_length)
        assert {k: v[0] for k, v in got.items()} == _reference_pairs(src, tgt, align, max_length)


# -- table limit and reordering ----------------------------------------------------------------
def test_table_limit_keeps_the_best_targets_per_source():
    src = ["a", "a", "a", "a", "b"]
    tgt = ["x", "x", "y", "z", "x"]
    corpus, links, pairs, got = _pairs(src, tgt, ["0-0"] * 5)
    scores = score_pairs(corpus, pairs, lexical_table(corpus, links))
    keep = table_limit(pairs, scores, 2)
    names = list(got)
    kept = {names[k] for k in keep}
    # a/x (2/4) first; a/y and a/z tie at 1/4 and also tie on p(f|e) = 1: the earlier target wins.
    assert kept == {("a", "x"), ("a", "y"), ("b", "x")}
    assert len(table_limit(pairs, scores, 0)) == len(pairs)


def test_reordering_probabilities_use_moses_smoothing():
    _, _, pairs, got = _pairs(["a b c"], ["x y z"], ["0-0 1-2 2-1"])
    probs = reordering_scores(pairs, smoothing=0.5)
    prev_prior, next_prior = orientation_priors(pairs)
    # Over the five occurrences: prev orientations mono 3, swap 1, disc 1; next mono 2, swap 1, disc 2.
    np.testing.assert_allclose(prev_prior, [3 / 5, 1 / 5, 1 / 5])
    np.testing.assert_allclose(next_prior, [2 / 5, 1 / 5, 2 / 5])
    k = list(got).index(("c", "y"))  # prev disc, next swap, one occurrence each
    expected_prev = (np.array([0, 0, 1]) + 0.5 * prev_prior) / 1.5
    expected_next = (np.array([0, 1, 0]) + 0.5 * next_prior) / 1.5
    np.testing.assert_allclose(probs[k], np.concatenate([expected_prev, expected_next]))
    np.testing.assert_allclose(probs[:, :3].sum(axis=1), 1.0)
    np.testing.assert_allclose(probs[:, 3:].sum(axis=1), 1.0)
    assert (MONO, SWAP, DISC) == (0, 1, 2)


# -- symmetrization ----------------------------------------------------------------------------
def _reference_symmetrize(fwd: set, rev: set, ns: int, nt: int, method: str) -> set:
    """Koehn's pseudo-code (SMT book, Fig. 4.13), written out with Python sets."""
    union = fwd | rev
    if method == "union":
        return union
    a = set(fwd & rev)
    if method == "intersect":
        return a
    neighbours = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]

    def f_aligned(i):
        return any(p[0] == i for p in a)

    def e_aligned(j):
        return any(p[1] == j for p in a)

    added = True
    while added:
        added = False
        for j in range(nt):
            for i in range(ns):
                if (i, j) not in a:
                    continue
                for dj, di in neighbours:
                    ii, jj = i + di, j + dj
                    if 0 <= ii < ns and 0 <= jj < nt and (not f_aligned(ii) or not e_aligned(jj)) and (ii, jj) in union and (ii, jj) not in a:
                        a.add((ii, jj))
                        added = True
    if method == "grow-diag":
        return a
    for direction in (fwd, rev):
        for j in range(nt):
            for i in range(ns):
                if (i, j) in direction and (i, j) not in a:
                    if method == "grow-diag-final-and":
                        ok = not f_aligned(i) and not e_aligned(j)
                    else:
                        ok = not f_aligned(i) or not e_aligned(j)
                    if ok:
                        a.add((i, j))
    return a


def test_grow_diag_final_and_by_hand():
    # fwd: 0-0 1-1 2-1 ; rev: 0-0 1-1 1-2 3-3. Intersection {0-0, 1-1}; grow adds 2-1? no: source 2
    # is unaligned and (2,1) neighbours (1,1) and is in the union -> added; (1,2) neighbours (1,1),
    # target 2 is unaligned -> added; final-and adds 3-3 (both words unaligned).
    src, tgt = ["a b c d"], ["w x y z"]
    fwd = _links(["0-0 1-1 2-1"], src, tgt)
    rev = _links(["0-0 1-1 1-2 3-3"], src, tgt)
    lens = sentence_lengths(src), sentence_lengths(tgt)
    assert symmetrize(fwd, rev, *lens, "diag-and").to_lines() == ["0-0 1-1 1-2 2-1 3-3"]
    assert symmetrize(fwd, rev, *lens, "grow-diag").to_lines() == ["0-0 1-1 1-2 2-1"]
    assert symmetrize(fwd, rev, *lens, "intersect").to_lines() == ["0-0 1-1"]
    with pytest.raises(InputError):
        symmetrize(fwd, rev, *lens, "grow-sideways")


@pytest.mark.parametrize("method", ["intersect", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and"])
def test_symmetrization_equals_the_reference(method):
    rng = np.random.default_rng(11)
    src, tgt, f_lines, r_lines, ref = [], [], [], [], []
    for _ in range(150):
        ns, nt = (int(x) for x in rng.integers(1, 9, size=2))
        src.append(" ".join(["w"] * ns))
        tgt.append(" ".join(["v"] * nt))
        fwd = {(int(rng.integers(ns)), j) for j in range(nt) if rng.random() < 0.8}
        rev = {(i, int(rng.integers(nt))) for i in range(ns) if rng.random() < 0.8}
        f_lines.append(" ".join(f"{i}-{j}" for i, j in sorted(fwd)))
        r_lines.append(" ".join(f"{i}-{j}" for i, j in sorted(rev)))
        ref.append(" ".join(f"{i}-{j}" for i, j in sorted(_reference_symmetrize(fwd, rev, ns, nt, method))))
    got = symmetrize(_links(f_lines, src, tgt), _links(r_lines, src, tgt), sentence_lengths(src), sentence_lengths(tgt), method)
    assert got.to_lines() == ref


def test_alignment_points_are_checked():
    with pytest.raises(InputError, match="outside the sentence"):
        _links(["0-3"], ["a b"], ["x y"])
    with pytest.raises(InputError, match="malformed"):
        _links(["0:1"], ["a b"], ["x y"])
    with pytest.raises(InputError, match="lines"):
        _links(["0-0", "0-0"], ["a b"], ["x y"])


# -- tables on disk ----------------------------------------------------------------------------
def test_written_tables_are_sorted_moses_lines(tmp_path):
    src = ["le chat", "le chien", "un chat"]
    tgt = ["the cat", "the dog", "a cat"]
    align = ["0-0 1-1"] * 3
    info = build_phrase_tables(
        src, tgt, align, phrase_table=tmp_path / "pt.gz", reordering_table=tmp_path / "rt.gz", sparse=True, limit=0
    )
    pt = gzip.open(tmp_path / "pt.gz", "rt", encoding="utf-8").read().splitlines()
    rt = gzip.open(tmp_path / "rt.gz", "rt", encoding="utf-8").read().splitlines()
    assert info["pairs_written"] == len(pt) == len(rt) == 7
    keys = [tuple(line.split(" ||| ")[:2]) for line in pt]
    assert keys == sorted(keys) == [tuple(line.split(" ||| ")[:2]) for line in rt]
    line = dict((tuple(x.split(" ||| ")[:2]), x.split(" ||| ")) for x in pt)[("chat", "cat")]
    # p(f|e) = 2/2, p(e|f) = 2/2; counts c(e)=2 c(f)=2 c(f,e)=2; sparse: count bin 2, lengths 1/1.
    assert line[2].split()[0] == "1" and line[2].split()[2] == "1"
    assert line[3] == "0-0" and line[4] == "2 2 2"
    names, values = line[5].split()[::2], line[5].split()[1::2]
    assert len(set(names)) == len(names) and set(values) == {"1"}
    assert "cb_le2" in line[5].split() and "lb_src1tgt1" in line[5].split()
