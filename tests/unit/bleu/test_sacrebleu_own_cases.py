"""sacrebleu's own test cases for the options it shares with smtlib: BLEU's ``max_ngram_order`` and
chrF's ``eps_smoothing`` and whitespace, with the numbers sacrebleu's tests expect.

The inputs and expected scores are those of sacrebleu's ``test/test_bleu.py`` (``max_ngram_order``
1-6 on its README example: 6 cases) and ``test/test_chrf.py`` (13 corpus cases with
``eps_smoothing=True``, 2 with whitespace kept, 3 sentence-level cases with ``eps_smoothing``: 18
cases), at sacrebleu's own tolerances (BLEU: two decimals, chrF: 1e-4). Each is also checked
against the installed sacrebleu, to 1e-9.
"""

from __future__ import annotations

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF

from smtlib.bleu.chrf import ChrfSettings, chrf_from_rows, compute_chrf_stats, corpus_chrf
from smtlib.bleu.corpus import corpus_bleu
from smtlib.bleu.stats import BleuSettings

README_REFS = [
    ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
    ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
]
README_HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]

#: test_bleu.py, test_max_ngram_order: (order, expected BLEU to two decimals)
BLEU_MAX_ORDER = [(1, "77.65"), (2, "60.50"), (3, "53.93"), (4, "48.53"), (5, "46.14"), (6, "43.28")]


@pytest.mark.parametrize("order, expected", BLEU_MAX_ORDER)
def test_bleu_max_ngram_order(order, expected):
    score = 100 * corpus_bleu(README_HYPS, README_REFS, BleuSettings(max_ngram_order=order))
    assert f"{score:.2f}" == expected
    assert score == pytest.approx(BLEU(max_ngram_order=order).corpus_score(README_HYPS, README_REFS).score, abs=1e-9)


#: test_chrf.py, test_chrf: char order 6, no words, beta 3, eps_smoothing=True
CHRF_EPS = [
    (["abcdefg"], ["hijklmnop"], 0.0),
    (["a"], ["b"], 0.0),
    ([""], ["b"], 0.0),
    ([""], ["ref"], 0.0),
    ([""], ["reference"], 0.0),
    (["aa"], ["ab"], 8.3333),
    (["a", "b"], ["a", "c"], 8.3333),
    (["a"], ["a"], 16.6667),
    (["a b c"], ["a b c"], 50.0),
    (["a b c"], ["abc"], 50.0),
    ([" risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists ."],
     ["risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists ."],
     63.361730),
    ([" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "],
     ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."], 64.1302698),
    (["Niemand hat die Absicht, eine Mauer zu errichten"], ["Niemand hat die Absicht, eine Mauer zu errichten"], 100.0),
]

#: test_chrf.py, test_chrf_keep_whitespace: beta 3, remove_whitespace=False
CHRF_WHITESPACE = [
    (["Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."],
     ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."], 67.3481606),
    (["risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists ."],
     ["risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists ."],
     65.2414427),
]

#: test_chrf.py, test_chrf_sentence_level: sentence chrF with eps_smoothing=True (beta 2)
CHRF_SENTENCE_EPS = [
    ("Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
     ["Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."], 39.14078509),
    ("Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.",
     ["A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři."], 31.22557079),
    ("Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
     ["Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."], 57.15704367),
]

CHRF_TOL = 1e-4  # sacrebleu's EPSILON in test_chrf.py


@pytest.mark.parametrize("hyps, refs, expected", CHRF_EPS)
def test_chrf_eps_smoothing(hyps, refs, expected):
    settings = ChrfSettings(beta=3, eps_smoothing=True)
    score = 100 * corpus_chrf(hyps, [refs], settings)
    assert abs(score - expected) < CHRF_TOL
    assert score == pytest.approx(CHRF(beta=3, eps_smoothing=True).corpus_score(hyps, [refs]).score, abs=1e-9)


@pytest.mark.parametrize("hyps, refs, expected", CHRF_WHITESPACE)
def test_chrf_keep_whitespace(hyps, refs, expected):
    score = 100 * corpus_chrf(hyps, [refs], ChrfSettings(beta=3, whitespace=True))
    assert abs(score - expected) < CHRF_TOL
    assert score == pytest.approx(CHRF(beta=3, whitespace=True).corpus_score(hyps, [refs]).score, abs=1e-9)


@pytest.mark.parametrize("hyp, refs, expected", CHRF_SENTENCE_EPS)
def test_sentence_chrf_eps_smoothing(hyp, refs, expected):
    settings = ChrfSettings(eps_smoothing=True)
    stats = compute_chrf_stats([hyp], np.arange(1), [[r] for r in refs], settings)
    score = 100 * float(chrf_from_rows(stats, settings.beta, settings.eps_smoothing)[0])
    assert abs(score - expected) < CHRF_TOL
    assert score == pytest.approx(CHRF(eps_smoothing=True).sentence_score(hyp, refs).score, abs=1e-9)

