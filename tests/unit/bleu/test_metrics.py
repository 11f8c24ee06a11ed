"""chrF, chrF++ and TER statistics (issue 25) against sacrebleu, and ``smtlib score``.

Equality with sacrebleu 2.6: corpus scores from summed statistics to 1e-9 and sentence scores to
1e-9 (in practice bit for bit), with one and several references, on hand cases, on random
sentences over a tiny vocabulary (many repeated words: shifts, ties, every shift case), and on
Multi30k test2016/test2017 and MultEval's example (``data``: skipped without ../shared/data).
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from sacrebleu.metrics import CHRF, TER
from sacrebleu.metrics.lib_ter import translation_edit_rate

from smtlib.bleu.chrf import ChrfSettings, chrf_from_rows, chrf_from_stats, compute_chrf_stats, split_punctuation
from smtlib.bleu.metrics import Mixture, get_metric, parse_mixture
from smtlib.bleu.ter import TerSettings, compute_ter_stats, ter_from_rows, ter_from_stats
from smtlib.errors import InputError

TOL = 1e-9


def _ours(metric: str, hyps, refs) -> tuple[float, np.ndarray]:
    """Corpus score and sentence scores (0-100) from our statistics."""
    ids = np.arange(len(hyps))
    if metric == "ter":
        stats = compute_ter_stats(hyps, ids, refs)
        return 100 * ter_from_stats(stats), 100 * ter_from_rows(stats)
    settings = ChrfSettings(word_order=2 if metric == "chrf++" else 0)
    stats = compute_chrf_stats(hyps, ids, refs, settings)
    return 100 * chrf_from_stats(stats), 100 * chrf_from_rows(stats)


def _theirs(metric: str):
    return TER() if metric == "ter" else CHRF(word_order=2 if metric == "chrf++" else 0)


def assert_equal_to_sacrebleu(metric: str, hyps, refs, sentences: int | None = None) -> None:
    corpus, sentence = _ours(metric, hyps, refs)
    scorer = _theirs(metric)
    assert corpus == pytest.approx(scorer.corpus_score(hyps, refs).score, abs=TOL, rel=0)
    n = len(hyps) if sentences is None else min(sentences, len(hyps))
    want = [scorer.sentence_score(hyps[i], [r[i] for r in refs]).score for i in range(n)]
    np.testing.assert_allclose(sentence[:n], want, rtol=0, atol=TOL)


# ------------------------------------------------------------------------------------ hand cases
HAND_HYPS = [
    "the cat sat on the mat",
    "on the mat the cat sat",  # a shift
    "",  # empty hypothesis
    "a b c d e f g h i j k l m n o p",  # long against short
    "Hello, world! (hi) x.",  # punctuation for chrF++
    "sat",
    "the the the the",
]
HAND_REFS = [
    "the cat sat on the mat",
    "the cat sat on the mat",
    "something here",
    "p o",
    "hello , world ! hi x .",
    "the cat sat on the mat today in the sun",
    "the",
]


@pytest.mark.parametrize("metric", ["chrf", "chrf++", "ter"])
def test_hand_cases_equal_sacrebleu(metric):
    assert_equal_to_sacrebleu(metric, HAND_HYPS, [HAND_REFS])
    second = [r[::-1] for r in HAND_REFS]
    assert_equal_to_sacrebleu(metric, HAND_HYPS, [HAND_REFS, second])


def test_known_values():
    # a shift of a 3-word span costs one edit: TER 1/6
    stats = compute_ter_stats(["on the mat the cat sat"], [0], [["the cat sat on the mat"]])
    assert stats.tolist() == [[1.0, 6.0]]
    # identical: chrF 1, TER 0
    assert chrf_from_stats(compute_chrf_stats(["abc def"], [0], [["abc def"]])) == 1.0
    assert ter_from_stats(compute_ter_stats(["abc def"], [0], [["ABC def"]])) == 0.0  # TER lowercases
    # several references: TER takes the fewest edits and the average length
    stats = compute_ter_stats(["a b c"], [0], [["a b c d"], ["x"]])
    assert stats.tolist() == [[1.0, 2.5]]


def test_chrf_picks_the_best_reference_per_sentence():
    settings = ChrfSettings()
    one = compute_chrf_stats(["the cat"], [0], [["a dog"]], settings)
    two = compute_chrf_stats(["the cat"], [0], [["the cat"]], settings)
    both = compute_chrf_stats(["the cat"], [0], [["a dog"], ["the cat"]], settings)
    assert both.tolist() == two.tolist() != one.tolist()


def test_split_punctuation_is_chrfpp():
    assert split_punctuation("(hi) hello, x . ,a") == ["(hi", ")", "hello", ",", "x", ".", ",", "a"]


def test_statistics_follow_sentence_ids_and_pool_order():
    refs = [["the cat sat", "a dog ran"]]
    hyps = ["a dog", "the cat", "dog a ran", "cat the sat"]
    ids = [1, 0, 1, 0]
    for compute in (compute_chrf_stats, compute_ter_stats):
        pool = compute(hyps, ids, refs)
        for k, (h, s) in enumerate(zip(hyps, ids, strict=True)):
            np.testing.assert_array_equal(pool[k], compute([h], [0], [[refs[0][s]]])[0])


def test_bad_inputs_are_errors():
    with pytest.raises(InputError):
        compute_ter_stats(["a"], [1], [["a"]])
    with pytest.raises(InputError):
        compute_chrf_stats(["a"], [0], [["a"], ["a", "b"]])
    with pytest.raises(InputError):
        compute_chrf_stats(["a", "b"], [0], [["a"]])


@pytest.mark.parametrize("seed", range(3))
def test_random_sentences_equal_sacrebleu(seed):
    """Tiny vocabularies make many equal spans: every shift rule, ties, the candidate cap."""
    rng = np.random.default_rng(seed)
    vocab = ["a", "b", "c", "d", "e", "f,", "(g", "h."]
    hyps, refs1, refs2 = [], [], []
    for _ in range(120):
        hyps.append(" ".join(rng.choice(vocab, size=rng.integers(0, 30))))
        refs1.append(" ".join(rng.choice(vocab[:5], size=rng.integers(1, 30))))
        refs2.append(" ".join(rng.choice(vocab, size=rng.integers(1, 12))))
    for metric in ("chrf", "chrf++", "ter"):
        assert_equal_to_sacrebleu(metric, hyps, [refs1])
        assert_equal_to_sacrebleu(metric, hyps, [refs1, refs2], sentences=40)


def test_ter_edits_of_very_unequal_lengths_and_long_sentences():
    """The widened beam (reference much longer than the hypothesis) and long sentences with many candidates."""
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(6)]
    cases = [(rng.choice(vocab, size=2), rng.choice(vocab, size=120)),
             (rng.choice(vocab, size=80), rng.choice(vocab, size=75)),
             (rng.choice(vocab, size=60), rng.choice(vocab, size=3))]
    for h, r in cases:
        stats = compute_ter_stats([" ".join(h)], [0], [[" ".join(r)]])
        assert stats[0, 0] == translation_edit_rate(list(h), list(r))[0]


def test_mixtures():
    mix = parse_mixture("bleu:0.5,ter:-0.5")
    assert isinstance(mix, Mixture) and mix.names == ("bleu", "ter")
    assert parse_mixture("ter").parts[0][1] == -1.0 and parse_mixture("chrf").parts[0][1] == 1.0
    assert parse_mixture("bleu").is_bleu and not mix.is_bleu
    for bad in ("ter:0.5", "bleu:-1", "bleu:1,bleu:2", "bleu:0", "meteor", "bleu:x", "bleu:0.5,ter"):
        with pytest.raises(InputError):
            parse_mixture(bad)
    hyps, refs = ["the cat sat on the mat", "a dog"], [["the cat sat on a mat", "a dog ran"]]
    stats = mix.stats(hyps, [0, 1], refs)
    bleu, ter = get_metric("bleu"), get_metric("ter")
    want = 0.5 * bleu.corpus(bleu.stats(hyps, [0, 1], refs)) - 0.5 * ter.corpus(ter.stats(hyps, [0, 1], refs))
    assert mix.corpus(stats) == pytest.approx(want, abs=1e-15)


def test_ter_settings_reach_the_tokenizer():
    hyps, refs = ["Hello, World."], [["hello world"]]
    for settings in (TerSettings(), TerSettings(case_sensitive=True), TerSettings(no_punct=True),
                     TerSettings(normalized=True)):
        ours = 100 * ter_from_stats(compute_ter_stats(hyps, [0], refs, settings))
        theirs = TER(case_sensitive=settings.case_sensitive, no_punct=settings.no_punct,
                     normalized=settings.normalized).corpus_score(hyps, refs).score
        assert ours == pytest.approx(theirs, abs=TOL)


# ---------------------------------------------------------------------------------- shared data
def _lines(path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [line.rstrip("\n") for line in fh]


def _perturbed(refs: list[str], seed: int) -> list[str]:
    """Hypotheses: each reference with words dropped, swapped and moved (deterministic)."""
    rng = np.random.default_rng(seed)
    out = []
    for ref in refs:
        words = [w for w in ref.split() if rng.random() > 0.15]
        if len(words) > 3 and rng.random() < 0.5:
            i = int(rng.integers(0, len(words) - 2))
            span = words[i:i + 2]
            del words[i:i + 2]
            j = int(rng.integers(0, len(words) + 1))
            words[j:j] = span
        if words and rng.random() < 0.3:
            words[int(rng.integers(0, len(words)))] = "zebra"
        out.append(" ".join(words))
    return out


@pytest.mark.data
@pytest.mark.parametrize("test_set", ["test_2016_flickr", "test_2017_flickr"])
@pytest.mark.parametrize("metric", ["chrf", "chrf++", "ter"])
def test_multi30k_equal_sacrebleu(shared_data, test_set, metric):
    raw = _lines(shared_data / "multi30k" / "raw" / f"{test_set}.en.gz")
    tok = _lines(shared_data / "multi30k" / "tok" / f"{test_set}.lc.norm.tok.en.gz")
    hyps = _perturbed(raw, 1)
    n = 300 if metric == "ter" else len(hyps)  # sacrebleu's TER takes a few ms a sentence
    assert_equal_to_sacrebleu(metric, hyps[:n], [raw[:n]], sentences=100)
    assert_equal_to_sacrebleu(metric, hyps[:n], [raw[:n], tok[:n], _perturbed(raw, 2)[:n]], sentences=100)


@pytest.mark.data
@pytest.mark.parametrize("metric", ["chrf", "chrf++", "ter"])
def test_multeval_example_equal_sacrebleu(shared_data, metric):
    base = shared_data / "multeval-example"
    ref = _lines(base / "refs.test2010.lc.tok.en.0.gz")
    hyps = _lines(base / "hyps.lc.tok.en.baseline.opt0.gz")
    other = _lines(base / "hyps.lc.tok.en.sys1.opt1.gz")  # a second "reference": another system's output
    n = 400 if metric == "ter" else len(hyps)
    assert_equal_to_sacrebleu(metric, hyps[:n], [ref[:n]], sentences=100)
    assert_equal_to_sacrebleu(metric, hyps[:n], [ref[:n], other[:n]], sentences=100)


# ------------------------------------------------------------------------------- smtlib score CLI
def test_score_cli_equals_sacrebleu(cli, tmp_path):
    import json

    import sacrebleu

    hyp = tmp_path / "hyp"
    ref = tmp_path / "ref"
    ref2 = tmp_path / "ref2"
    hyp.write_text("\n".join(HAND_HYPS) + "\n")
    ref.write_text("\n".join(HAND_REFS) + "\n")
    ref2.write_text("\n".join(r[::-1] for r in HAND_REFS) + "\n")
    r = cli("score", "--metric", "bleu", "chrf", "chrf++", "ter", "--refs", ref, ref2, "--hyps", hyp)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    refs = [HAND_REFS, [x[::-1] for x in HAND_REFS]]
    for obj, scorer in zip(got, [sacrebleu.BLEU(), CHRF(), CHRF(word_order=2), TER()], strict=True):
        score = scorer.corpus_score(HAND_HYPS, refs)
        assert obj["name"] == score.name
        assert obj["score"] == pytest.approx(score.score, abs=1e-8)
        version = "|version:"
        ours = obj["signature"].replace("|reflen:closest", "")  # BLEU's signature names its reference-length rule
        assert ours.split(version)[0] == str(scorer.get_signature()).split(version)[0]
    r = cli("score", "--metric", "ter", "--refs", ref, "--hyps", hyp, "--sentence")
    assert r.returncode == 0, r.stderr
    values = [float(x) for x in r.stdout.split()]
    want = [TER().sentence_score(h, [x]).score for h, x in zip(HAND_HYPS, HAND_REFS, strict=True)]
    np.testing.assert_allclose(values, want, atol=1e-6)


def test_score_cli_bad_inputs(cli, tmp_path):
    hyp = tmp_path / "hyp"
    hyp.write_text("a\nb\n")
    short = tmp_path / "short"
    short.write_text("a\n")
    empty_line = tmp_path / "empty_line"
    empty_line.write_text("a\n\n")
    empty = tmp_path / "empty"
    empty.write_text("")
    for args, message in [
        (("--metric", "chrf", "--hyps", hyp), "--refs is required"),
        (("--metric", "ter", "--refs", short, "--hyps", hyp), "has 2 lines but the references have 1"),
        (("--metric", "ter", "--refs", empty_line, "--hyps", hyp), "empty reference line"),
        (("--metric", "chrf", "--refs", empty, "--hyps", hyp), "empty"),
        (("--metric", "chrf", "--refs", tmp_path / "missing", "--hyps", hyp), "not found"),
        (("--metric", "chrf", "chrf", "--refs", hyp, "--hyps", hyp), "twice"),
        (("--metric", "meteor", "--refs", hyp, "--hyps", hyp), "invalid choice"),
    ]:
        r = cli("score", *args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert message in r.stderr and len(r.stderr.strip().splitlines()) >= 1


@pytest.mark.data
def test_compare_ter_column_is_multevals(cli, shared_data):
    """``smtlib compare --metrics ter``: MultEval's README table's TER column (tercom, Java) on its
    example data, to its rounding: baseline 65.7 (0.4/0.2/-), system 1 64.8 (0.4/0.6/0.00)."""
    base = shared_data / "multeval-example"
    hyps = {s: [str(base / f"hyps.lc.tok.en.{s}.opt{r}.gz") for r in range(3)] for s in ("baseline", "sys1")}
    r = cli("compare", "--refs", base / "refs.test2010.lc.tok.en.0.gz", "--tokenize", "none", "--baseline",
            *hyps["baseline"], "--system", "system 1=" + ",".join(hyps["sys1"]), "--metrics", "ter", "chrf",
            "--ar-shuffles", "1000", "--boot-samples", "1000")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1].split()[1:3] == ["65.7", "(0.4/0.2/-)"]
    assert lines[2].split()[2:4] == ["64.8", "(0.4/0.6/0.00)"]
    assert "signature TER: nrefs:1|case:lc|tok:tercom" in r.stdout and "signature chrF2:" in r.stdout


# ------------------------------------------------------------------- chrF's orders and beta (issue 25)
#: a chrF setting other than sacrebleu's default in every option: character order, word order, beta
CHRF_OTHER = ("--chrf-char-order", "4", "--chrf-word-order", "1", "--chrf-beta", "3")


def test_chrf_option_defaults_are_sacrebleus():
    settings = ChrfSettings()
    assert (settings.char_order, settings.word_order, settings.beta) == (CHRF.CHAR_ORDER, CHRF.WORD_ORDER, CHRF.BETA)


def test_score_cli_chrf_settings_equal_sacrebleu(cli, tmp_path):
    """``--chrf-char-order/--chrf-word-order/--chrf-beta``: corpus and sentence scores equal sacrebleu's
    CHRF with the same settings (two references), the name carries beta and the word order, the
    signature the orders; chrf++ with another word order is one line, exit 2."""
    import json

    hyp, ref, ref2 = tmp_path / "hyp", tmp_path / "ref", tmp_path / "ref2"
    hyp.write_text("\n".join(HAND_HYPS) + "\n")
    ref.write_text("\n".join(HAND_REFS) + "\n")
    ref2.write_text("\n".join(r[::-1] for r in HAND_REFS) + "\n")
    refs = [HAND_REFS, [x[::-1] for x in HAND_REFS]]
    scorer = CHRF(char_order=4, word_order=1, beta=3)
    r = cli("score", "--metric", "chrf", *CHRF_OTHER, "--refs", ref, ref2, "--hyps", hyp)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    want = scorer.corpus_score(HAND_HYPS, refs)
    assert got["name"] == want.name == "chrF3+"
    assert got["score"] == pytest.approx(want.score, abs=TOL, rel=0)
    assert got["signature"].split("|version:")[0] == str(scorer.get_signature()).split("|version:")[0]
    assert "|nc:4|nw:1|" in got["signature"]
    r = cli("score", "--metric", "chrf", "chrf++", "--chrf-beta", "1", "--refs", ref, "--hyps", hyp, "--sentence")
    assert r.returncode == 0, r.stderr
    rows = [[float(x) for x in line.split("\t")] for line in r.stdout.splitlines()]
    for column, word_order in ((0, 0), (1, 2)):
        theirs = CHRF(word_order=word_order, beta=1)
        want = [theirs.sentence_score(h, [x]).score for h, x in zip(HAND_HYPS, HAND_REFS, strict=True)]
        np.testing.assert_allclose([row[column] for row in rows], want, atol=1e-6)
    assert "chrF1: " in r.stderr and "chrF1++: " in r.stderr
    bad = cli("score", "--metric", "chrf++", "--chrf-word-order", "1", "--refs", ref, "--hyps", hyp)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "chrf++ is chrF with word order 2" in bad.stderr


def test_chrf_settings_reach_rerank_kbest_and_tune(cli, tmp_path):
    """The same options with ``--metric`` of rerank, kbest stats/add and tune: rerank prints ``smtlib
    score``'s number and name; a pool keeps chrF statistics of two settings side by side."""
    from smtlib.bleu.metrics import MetricOptions
    from smtlib.bleu.references import read_references
    from smtlib.kbest.store import load_pool
    from tests.support.tuner_fixtures import write_small_files

    kbest, ref, init = write_small_files(tmp_path, sparse=False)
    out = tmp_path / "1best"
    r = cli("rerank", "--kbest", kbest, "--weights", init, "--refs", ref, "--out", out, "--metric", "chrf", *CHRF_OTHER)
    assert r.returncode == 0, r.stderr
    score = cli("score", "--metric", "chrf", *CHRF_OTHER, "--refs", ref, "--hyps", out, "--score-only")
    assert f"chrF3+ = {score.stdout.strip()} on 3 sentences of 3 reference lines (" in r.stderr
    assert "|nc:4|nw:1|" in r.stderr
    r = cli("kbest", "add", "--kbest", kbest, "--refs", ref, "--out", tmp_path / "p1", "--metric", "chrf")
    assert r.returncode == 0, r.stderr
    r = cli("kbest", "add", "--pool", tmp_path / "p1", "--kbest", kbest, "--refs", ref, "--out", tmp_path / "p2",
            "--metric", "chrf", *CHRF_OTHER)
    assert r.returncode == 0, r.stderr
    refs = read_references([ref])
    pool = load_pool(tmp_path / "p2", refs)
    default = get_metric("chrf")
    other = get_metric("chrf", MetricOptions(chrf_char_order=4, chrf_word_order=1, chrf_beta=3))
    for metric in (default, other):
        np.testing.assert_array_equal(pool.other_stats[metric], metric.stats(pool.texts, pool.sentence_index, refs))
    assert pool.other_stats[other].shape[1] == 3 * 5
    r = cli("tune", "kbmira", "--pool", tmp_path / "p2", "--refs", ref, "--init", init, "--out", tmp_path / "w",
            "--metric", "chrf", *CHRF_OTHER, "--quiet")
    assert r.returncode == 0 and "pool chrF3+ " in r.stderr and "|nc:4|nw:1|" in r.stderr, r.stderr
    r = cli("kbest", "stats", kbest, "--refs", ref, "--metric", "chrf", *CHRF_OTHER)
    assert r.returncode == 0 and "|nc:4|nw:1|" in r.stdout, r.stderr
