"""sacrebleu's options that change a score: BLEU's ``max_ngram_order``, chrF's ``eps_smoothing`` and
``whitespace``, against the installed sacrebleu (the reference), through the library and the CLI.

The cases are of the kinds sacrebleu's own tests use for these options, written here: degenerate
segments (empty hypothesis, one character, a hypothesis shorter than the n-gram order, no match at
all, identical segments, words glued together, runs of spaces), a few real sentences, several
references, each smoothing method and effective order for BLEU, word n-grams (chrF++) and another
beta for chrF, and sentence-level scores. Every one must equal sacrebleu's score to 1e-9 (BLEU's
statistics exactly), and each signature sacrebleu's, with the entries it names.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF

from smtlib.bleu.chrf import ChrfSettings, chrf_from_rows, chrf_from_stats, compute_chrf_stats
from smtlib.bleu.corpus import bleu_from_stats
from smtlib.bleu.metrics import MetricOptions, get_metric
from smtlib.bleu.signature import BleuSignature
from smtlib.bleu.stats import BleuSettings, compute_stats
from smtlib.bleu.variants import get_variant
from smtlib.errors import InputError

TOL = 1e-9

SENTENCES = [
    "the committee adopted the report without a vote on tuesday .",
    "we must , however , look closely at the figures before we decide .",
    "this is a rather short one",
    "a",
    "",
    "words words words words words words words",
]
REFERENCES = [
    ["the committee adopted the report on tuesday without a vote .",
     "however , we have to look at the figures closely before deciding .",
     "this is a short one",
     "a",
     "nothing matches here",
     "words words words"],
    ["on tuesday the committee adopted the report without any vote .",
     "we must look closely at the numbers before we decide , however .",
     "this one is rather short",
     "b",
     "an empty output",
     "words"],
]

#: (hypotheses, references (one list per reference set)) of the BLEU cases
BLEU_CASES = [
    (SENTENCES, REFERENCES[:1]),
    (SENTENCES, REFERENCES),
    (["a b c d e f"], [["a b c d e f"]]),  # identical: BLEU 100 at every order
    (["a b"], [["a b c d e f"]]),  # shorter than orders 3-6: no n-grams of those orders
    (["x y z"], [["a b c"]]),  # no match at all
    ([""], [["a reference"]]),  # an empty hypothesis
    (["the cat the cat the cat"], [["the cat"], ["the cat the"]]),  # clipping by the best reference
]


def _sacrebleu_bleu(order: int, **kwargs) -> BLEU:
    return BLEU(max_ngram_order=order, tokenize=kwargs.pop("tokenize", "13a"), **kwargs)


@pytest.mark.parametrize("order", range(1, 7))
@pytest.mark.parametrize("case", range(len(BLEU_CASES)))
def test_bleu_max_ngram_order_equals_sacrebleu(order, case):
    hyps, refs = BLEU_CASES[case]
    settings = BleuSettings(max_ngram_order=order)
    stats = compute_stats(hyps, np.arange(len(hyps)), refs, settings)
    assert stats.shape == (len(hyps), 2 + 2 * order) == (len(hyps), settings.width)
    total = stats.sum(axis=0)
    theirs = _sacrebleu_bleu(order).corpus_score(hyps, refs)  # (add-k's score object holds the smoothed counts)
    assert [int(x) for x in total[2 : 2 + order]] == theirs.counts
    assert [int(x) for x in total[2 + order :]] == theirs.totals
    assert (total[0], total[1]) == (theirs.sys_len, theirs.ref_len)
    for smooth in ("exp", "none", "floor", "add-k"):
        theirs = _sacrebleu_bleu(order, smooth_method=smooth).corpus_score(hyps, refs)
        assert 100 * bleu_from_stats(total, smooth_method=smooth) == pytest.approx(theirs.score, abs=TOL, rel=0)
    # sentence BLEU: sacrebleu's sentence_score (exp smoothing, effective order) and the other methods
    for method in ("exp", "none", "floor", "add-k"):
        scorer = _sacrebleu_bleu(order, smooth_method=method, effective_order=True)
        want = [scorer.sentence_score(h, [r[i] for r in refs]).score for i, h in enumerate(hyps)]
        np.testing.assert_allclose(100 * get_variant(method).score(stats), want, rtol=0, atol=TOL)


def test_bleu_max_ngram_order_through_the_metric_and_its_signature():
    bleu = get_metric("bleu", MetricOptions(bleu=BleuSettings(max_ngram_order=2)))
    stats = bleu.stats(SENTENCES, np.arange(6), REFERENCES)
    assert bleu.width == stats.shape[1] == 6
    assert 100 * bleu.corpus(stats) == pytest.approx(_sacrebleu_bleu(2).corpus_score(SENTENCES, REFERENCES).score,
                                                      abs=TOL, rel=0)
    # sacrebleu's signature has no entry for the order: ours adds ngram:N when it is not 4, nothing when it is
    two = str(BleuSignature(BleuSettings(max_ngram_order=2), 2))
    four = str(BleuSignature(BleuSettings(), 2))
    assert "|reflen:closest|ngram:2|version:" in two and "ngram:" not in four
    scorer = _sacrebleu_bleu(2)
    scorer.corpus_score(SENTENCES, REFERENCES)  # (sacrebleu's signature needs a scored corpus)
    theirs = str(scorer.get_signature()).split("|version:")[0]
    assert two.split("|reflen:")[0] == four.split("|reflen:")[0] == theirs
    for bad in (0, 7, 2.0, True):
        with pytest.raises(InputError, match="n-gram order"):
            BleuSettings(max_ngram_order=bad)


#: (hypotheses, references) of the chrF cases
CHRF_CASES = [
    (["abcdefg"], [["hijklmnop"]]),  # nothing in common
    (["a"], [["b"]]),
    ([""], [["b"]]),  # an empty hypothesis
    ([""], [["a longer reference"]]),
    (["aa"], [["ab"]]),
    (["a", "b"], [["a", "c"]]),
    (["a"], [["a"]]),  # one character: orders 2-6 have no n-grams
    (["a b c"], [["a b c"]]),
    (["a b c"], [["abc"]]),  # the same characters, spaces apart
    (["abc"], [["a b c"]]),
    (["  the   committee  adopted the report .  "], [["the committee adopted the report ."]]),  # runs of spaces
    (SENTENCES, REFERENCES[:1]),
    (SENTENCES, REFERENCES),
]
CHRF_SETTINGS = [
    dict(eps_smoothing=True),
    dict(eps_smoothing=True, beta=3),
    dict(eps_smoothing=True, word_order=2),
    dict(whitespace=True),
    dict(whitespace=True, beta=3),
    dict(whitespace=True, word_order=2),
    dict(whitespace=True, eps_smoothing=True),
]


@pytest.mark.parametrize("options", CHRF_SETTINGS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("case", range(len(CHRF_CASES)))
def test_chrf_options_equal_sacrebleu(options, case):
    hyps, refs = CHRF_CASES[case]
    settings = ChrfSettings(**options)
    stats = compute_chrf_stats(hyps, np.arange(len(hyps)), refs, settings)
    scorer = CHRF(**options)
    assert 100 * chrf_from_stats(stats, settings.beta, settings.eps_smoothing) == pytest.approx(
        scorer.corpus_score(hyps, refs).score, abs=TOL, rel=0)
    want = [scorer.sentence_score(h, [r[i] for r in refs]).score for i, h in enumerate(hyps)]
    np.testing.assert_allclose(100 * chrf_from_rows(stats, settings.beta, settings.eps_smoothing), want, rtol=0, atol=TOL)
    metric = get_metric("chrf++" if options.get("word_order") == 2 else "chrf", MetricOptions(
        chrf_beta=options.get("beta", 2), chrf_whitespace=options.get("whitespace", False),
        chrf_eps_smoothing=options.get("eps_smoothing", False)))
    assert metric.settings == settings
    assert 100 * metric.corpus(stats) == pytest.approx(scorer.corpus_score(hyps, refs).score, abs=TOL, rel=0)
    assert metric.signature(len(refs)).split("|version:")[0] == str(scorer.get_signature()).split("|version:")[0]


def test_chrf_pool_headers_name_only_the_options_that_are_on():
    assert "whitespace" not in ChrfSettings().to_dict() and "eps_smoothing" not in ChrfSettings().to_dict()
    assert ChrfSettings(whitespace=True).to_dict()["whitespace"] is True
    assert ChrfSettings(**ChrfSettings(eps_smoothing=True).to_dict()) == ChrfSettings(eps_smoothing=True)
    assert "max_ngram_order" not in BleuSettings().to_dict()
    assert BleuSettings(**BleuSettings(max_ngram_order=5).to_dict()) == BleuSettings(max_ngram_order=5)


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_options_on_the_command_line(cli, tmp_path):
    """smtlib bleu / score take the options with sacrebleu's names; the numbers and signatures are sacrebleu's."""
    hyps = _write(tmp_path / "hyps", SENTENCES)
    ref1, ref2 = _write(tmp_path / "ref1", REFERENCES[0]), _write(tmp_path / "ref2", REFERENCES[1])
    for order in (1, 3, 6):
        theirs = _sacrebleu_bleu(order).corpus_score(SENTENCES, REFERENCES)
        got = json.loads(cli("bleu", "--refs", ref1, ref2, "--hyps", hyps, "--bleu-max-ngram-order", str(order)).stdout)
        assert got["score"] == pytest.approx(theirs.score, abs=1e-8)
        assert (got["counts"], got["totals"]) == (theirs.counts, theirs.totals)
        assert f"ngram:{order}" in got["signature"]
        got = json.loads(cli("score", "--metric", "bleu", "--refs", ref1, ref2, "--hyps", hyps,
                             "--bleu-max-ngram-order", str(order)).stdout)
        assert got["score"] == pytest.approx(theirs.score, abs=1e-8)
        sentence = cli("bleu", "--refs", ref1, ref2, "--hyps", hyps, "--bleu-max-ngram-order", str(order),
                       "--sentence", "--variant", "exp")
        scorer = _sacrebleu_bleu(order, effective_order=True)
        want = [scorer.sentence_score(h, [r[i] for r in REFERENCES]).score for i, h in enumerate(SENTENCES)]
        np.testing.assert_allclose([float(x) for x in sentence.stdout.split()], want, atol=1e-6)
    r = cli("bleu", "--refs", ref1, "--hyps", hyps, "--bleu-max-ngram-order", "7")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "n-gram order" in r.stderr
    r = cli("bleu", "--refs", ref1, "--hyps", hyps, "--bleu-max-ngram-order", "3", "--sentence", "--variant",
            "moses-smoothed")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "4-gram" in r.stderr
    for flags, kwargs in ((["--chrf-eps-smoothing"], dict(eps_smoothing=True)),
                          (["--chrf-keep-whitespace"], dict(whitespace=True)),
                          (["--chrf-keep-whitespace", "--chrf-eps-smoothing", "--chrf-beta", "3"],
                           dict(whitespace=True, eps_smoothing=True, beta=3))):
        for name, word_order in (("chrf", 0), ("chrf++", 2)):
            scorer = CHRF(word_order=word_order, **kwargs)
            got = json.loads(cli("score", "--metric", name, "--refs", ref1, ref2, "--hyps", hyps, *flags).stdout)
            assert got["score"] == pytest.approx(scorer.corpus_score(SENTENCES, REFERENCES).score, abs=1e-8)
            assert got["signature"].split("|version:")[0] == str(scorer.get_signature()).split("|version:")[0]
    # the tuners optimise chrF with effective-order averaging: eps smoothing is refused there, in one line
    nbest = _write(tmp_path / "k.nbest", ["0 ||| a b ||| lm= -1 w= -2 ||| -3", "0 ||| a c ||| lm= -2 w= -2 ||| -4"])
    ref = _write(tmp_path / "ref", ["a b"])
    init = _write(tmp_path / "init", ["lm_0 1"])
    r = cli("tune", "kbmira", "--kbest", nbest, "--refs", ref, "--init", init, "--out", tmp_path / "w",
            "--metric", "chrf", "--chrf-eps-smoothing")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "--chrf-eps-smoothing" in r.stderr
