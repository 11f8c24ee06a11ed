"""A sentence with 65,535 distinct tokens or more: BLEU statistics as sacrebleu's, in every path.

The statistics kernel keys an n-gram by its prefix's table entry and its last token id, so neither a
corpus's nor a sentence's vocabulary has a limit (token ids below 2**32): the library, ``smtlib
bleu`` and a k-best pool (``rerank``, ``tune``) score such a sentence as sacrebleu does, at every
n-gram order. The lattice tuners number a sentence's reference words in 16 bits and build a context
automaton over them: there a sentence beyond that is exit status 2 with one line naming it.
"""

from __future__ import annotations

import numpy as np
import pytest
from sacrebleu.metrics import BLEU

from smtlib.bleu.corpus import corpus_bleu_from_stats
from smtlib.bleu.stats import BleuSettings, compute_stats
from tests.support.bleu_reference import slow_stats

N_TYPES = 70_000


def _big_sentences(seed: int = 0) -> tuple[list[str], list[str]]:
    """Two hypotheses and two reference lines; the first of each has N_TYPES distinct tokens."""
    rng = np.random.default_rng(seed)
    words = [f"t{i}" for i in range(N_TYPES)]
    ref = " ".join(words)
    hyp = " ".join(words[:30_000] + rng.permutation(words)[:40_000].tolist() + words[100:200])
    return [hyp, "a short hypothesis here"], [ref, "a short reference here too"]


@pytest.mark.parametrize("order", [1, 4, 6])
def test_statistics_of_a_huge_sentence_equal_sacrebleu(order):
    hyps, refs = _big_sentences()
    settings = BleuSettings(tokenize="none", max_ngram_order=order)
    stats = compute_stats(hyps, [0, 1], [refs], settings)
    theirs = BLEU(tokenize="none", max_ngram_order=order)
    for i in range(2):
        want = theirs._extract_corpus_statistics([hyps[i]], [[refs[i]]])[0]
        assert stats[i].astype(int).tolist() == list(want)
    assert 100 * corpus_bleu_from_stats(stats) == pytest.approx(
        theirs.corpus_score(hyps, [refs]).score, abs=1e-9)
    if order == 4:
        assert stats[0].tolist() == slow_stats(hyps[0], [refs[0]], settings).tolist()


def test_a_corpus_of_many_types_and_one_sentence_of_many_equal_the_slow_reference():
    """Many types over the corpus (each sentence small) and several references of a big sentence."""
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(80_000)]
    refs = [[" ".join(rng.choice(words, 30)) for _ in range(400)] for _ in range(2)]
    hyps = [" ".join(rng.choice(words, 25).tolist() + refs[0][s].split()[:10]) for s in range(400) for _ in range(3)]
    ids = np.repeat(np.arange(400), 3)
    settings = BleuSettings(tokenize="none")
    stats = compute_stats(hyps, ids, refs, settings)
    for k in range(0, len(hyps), 97):
        assert stats[k].tolist() == slow_stats(hyps[k], [r[ids[k]] for r in refs], settings).tolist()


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_the_command_line_and_a_pool_score_a_huge_sentence(cli, tmp_path):
    hyps, refs = _big_sentences(1)
    want = BLEU(tokenize="none").corpus_score(hyps, [refs]).score
    ref = _write(tmp_path / "ref", refs)
    r = cli("bleu", "--refs", ref, "--hyps", _write(tmp_path / "hyp", hyps), "--tokenize", "none", "--score-only")
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) == pytest.approx(want, abs=5e-5)
    nbest = _write(tmp_path / "k.nbest", [f"0 ||| {hyps[0]} ||| lm= -1 w= -2 ||| -3",
                                          "0 ||| t1 t2 t3 ||| lm= -5 w= -3 ||| -8",
                                          f"1 ||| {hyps[1]} ||| lm= -1 w= -1 ||| -2",
                                          "1 ||| a reference ||| lm= -4 w= -2 ||| -6"])
    init = _write(tmp_path / "init", ["lm_0 1", "w_0 0.1"])
    r = cli("rerank", "--kbest", nbest, "--weights", init, "--refs", ref, "--tokenize", "none")
    assert r.returncode == 0, r.stderr
    assert f"BLEU = {want:.4f} on 2 sentences of 2 reference lines" in r.stderr
    r = cli("tune", "kbmira", "--kbest", nbest, "--refs", ref, "--init", init, "--out", tmp_path / "w",
            "--tokenize", "none", "--set", "epochs=2")
    assert r.returncode == 0, r.stderr
    assert f"pool BLEU {want:.2f} -> " in r.stderr


def test_a_lattice_sentence_beyond_the_lattice_tuners_limit_is_one_line_naming_it(cli, tmp_path):
    from smtlib.lattice.format import Lattice, lattice_header, write_lattice

    words = [f"t{i}" for i in range(N_TYPES)]
    ref = _write(tmp_path / "ref", ["a b c", " ".join(words)])
    lattices = tmp_path / "lat"
    with open(lattices, "w", encoding="utf-8") as out:
        out.write(lattice_header(["lm_0"]))
        for s in range(2):
            write_lattice(out, Lattice(s, 2, np.array([0]), np.array([1]), [("a", "b")], np.array([[-1.0]]), [{}],
                                       ["lm_0"]))
    init = _write(tmp_path / "init", ["lm_0 1"])
    for method in ("lbmert", "lbmira"):
        r = cli("tune", method, "--lattice", lattices, "--refs", ref, "--init", init, "--out", tmp_path / "w",
                "--tokenize", "none")
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "sentence 1 (reference line 2)" in r.stderr and "70000 distinct words" in r.stderr
