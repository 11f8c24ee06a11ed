"""``smtlib compare``'s additions: the paired-bootstrap 95 % interval (sacrebleu's ``--paired-bs``
``μ ± CI``), Holm's correction of the p-values and the all-pairs matrix
(:mod:`smtlib.bleu.replicas`)."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.bleu.randomization import paired_randomization
from smtlib.bleu.replicas import (
    Layout,
    SystemResult,
    all_pairs,
    bootstrap_scores,
    compare_systems,
    confidence_interval,
    correct_p_values,
    format_latex,
    format_pairs_text,
    format_text,
    format_tsv,
    selection_sd,
)
from smtlib.bleu.stats import BleuSettings
from smtlib.errors import InputError
from smtlib.io import read_lines
from tests.support.bleu_reference import random_stats_rows

EXAMPLE = "multeval-example"
LAYOUT = Layout.of(["bleu", "length"])
NONE = BleuSettings(tokenize="none")


_stats = random_stats_rows


def _result(name, p):
    z = np.zeros(len(p) if p is not None else 2)
    return SystemResult(name, np.zeros((3, len(z))), z, z, z, None if p is None else np.array(p, dtype=float))


# -- the interval ----------------------------------------------------------------------------------------
def test_interval_is_sacrebleus_definition():
    """Same scores in, same (mean, half-width) out as sacrebleu's estimate_ci, for sizes around the
    multiples of 40 where the index K // 40 steps."""
    from sacrebleu.significance import estimate_ci

    rng = np.random.default_rng(0)
    for k in (39, 40, 41, 79, 80, 1000, 1001):
        scores = rng.normal(20, 1, size=(k, 2))
        mean, half = confidence_interval(scores)
        for j in range(2):
            theirs = estimate_ci(scores[:, j])
            assert mean[j] == pytest.approx(theirs[0], rel=1e-12)
            assert half[j] == pytest.approx(theirs[1], rel=1e-12)


def test_interval_is_of_the_replica_mean_on_shared_resamples():
    """By hand: the R replicas scored on the same resamples, averaged, then sorted; K = 200 puts the
    interval between the 6th smallest and 6th largest (indices 5 and 194)."""
    stats = _stats(np.random.default_rng(1), 3, 50)
    rows = compare_systems(stats, {}, LAYOUT, boot_samples=200, seed=3)
    boot = bootstrap_scores(stats, LAYOUT.score, samples=200, seed=3)
    assert boot.shape == (3, 200, 2)
    means = np.sort(boot.mean(axis=0), axis=0)
    np.testing.assert_allclose(rows[0].ci_half, 0.5 * (means[194] - means[5]), rtol=1e-12)
    np.testing.assert_allclose(rows[0].boot_mean, means.mean(axis=0), rtol=1e-12)
    # s_sel is unchanged by sharing the bootstrap scores with the interval
    np.testing.assert_array_equal(rows[0].s_sel, selection_sd(stats, LAYOUT.score, samples=200, seed=3))


def test_same_seed_same_interval():
    stats, other = _stats(np.random.default_rng(6), 3, 80), _stats(np.random.default_rng(7), 3, 80)
    runs = [compare_systems(stats, {"x": other}, LAYOUT, ar_shuffles=50, boot_samples=100, seed=s) for s in (4, 4, 5)]
    for x, y in zip(runs[0], runs[1], strict=True):
        np.testing.assert_array_equal(x.boot_mean, y.boot_mean)
        np.testing.assert_array_equal(x.ci_half, y.ci_half)
    assert not np.array_equal(runs[0][1].ci_half, runs[2][1].ci_half)


@pytest.mark.data
@pytest.mark.slow
def test_interval_matches_sacrebleus_paired_bootstrap(shared_data):
    """One replica per system (sacrebleu has no replicas): our interval against sacrebleu's
    ``--paired-bs`` on MultEval's example, both from K = 2000 resamples, but different random draws.

    Tolerance from the resample count: a quantile q_p estimated from K draws has standard error
    sqrt(p (1 - p) / K) / f(q_p); for a near-normal bootstrap distribution of spread s, f(q_0.025) =
    φ(1.96) / s, so each end of the interval is off by 0.0845 s sqrt(1000 / K) and the half-width, half
    the difference of two nearly uncorrelated ends, by 0.0597 s sqrt(1000 / K) = 0.042 s at K = 2000.
    Two independent estimates differ with standard error sqrt(2) of that, 0.060 s; we allow 4 of them
    (0.24 s, about 0.06 BLEU here). The bootstrap means differ with standard error s sqrt(2 / K)."""
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    k = 2000
    d = shared_data / EXAMPLE
    refs = read_lines(d / "refs.test2010.lc.tok.en.0.gz")
    files = {"base": d / "hyps.lc.tok.en.baseline.opt0.gz", "sys": d / "hyps.lc.tok.en.sys1.opt1.gz"}
    hyps = {name: read_lines(path) for name, path in files.items()}
    bleu = Layout.of(["bleu"])
    stats = {name: bleu.rows(h, [refs], NONE)[None] for name, h in hyps.items()}
    ours = compare_systems(stats["base"], {"sys": stats["sys"]}, bleu, ar_shuffles=10, boot_samples=k, seed=0)
    _, scores = PairedTest(list(hyps.items()), {"BLEU": BLEU(tokenize="none")}, [refs], test_type="bs", n_samples=k)()
    for row, theirs in zip(ours, scores["BLEU"], strict=True):
        print(f"{row.name}: ours {100 * row.boot_mean[0]:.3f} ± {100 * row.ci_half[0]:.3f}, "
              f"sacrebleu {theirs.mean:.3f} ± {theirs.ci:.3f} (score {theirs.score:.3f}, s {100 * row.s_sel[0]:.3f})")
        s = 100 * row.s_sel[0]  # the bootstrap distribution's spread
        mean, half = 100 * row.boot_mean[0], 100 * row.ci_half[0]
        assert row.replicas[0, 0] * 100 == pytest.approx(theirs.score, abs=1e-9)
        assert abs(half - theirs.ci) < 4 * np.sqrt(2) * 0.0597 * s * np.sqrt(1000 / k), (row.name, half, theirs.ci)
        assert abs(mean - theirs.mean) < 4 * s * np.sqrt(2 / k), (row.name, mean, theirs.mean)
        assert half == pytest.approx(1.96 * s, rel=0.1)  # near-normal: the half-width is about 1.96 s


# -- Holm ------------------------------------------------------------------------------------------------
def test_holm_by_hand_including_the_monotonicity_step():
    """m = 3, p = (0.01, 0.04, 0.03): sorted 0.01, 0.03, 0.04 get 3 x 0.01 = 0.03, 2 x 0.03 = 0.06 and
    1 x 0.04 = 0.04, raised to the running maximum 0.06, and go back to their systems' places. A
    correction in the given order (3 x 0.01, 2 x 0.04, 1 x 0.03) would give (0.03, 0.08, 0.08); no
    monotonicity step would leave the third system 0.04. The second metric's order is another one
    (p = 0.3, 0.1, 0.35: 3 x 0.1 = 0.3, 2 x 0.3 = 0.6, 1 x 0.35 raised to 0.6): the family is a
    metric's column."""
    results = [_result("base", None), _result("a", [0.01, 0.3]), _result("b", [0.04, 0.1]), _result("c", [0.03, 0.35])]
    corrected = correct_p_values(results, "holm")
    got = np.array([r.p_value for r in corrected[1:]])
    np.testing.assert_allclose(got[:, 0], [0.03, 0.06, 0.06], rtol=1e-12)
    np.testing.assert_allclose(got[:, 1], [0.6, 0.3, 0.6], rtol=1e-12)
    np.testing.assert_array_equal(corrected[2].p_uncorrected, [0.04, 0.1])
    assert corrected[0].p_value is None
    assert correct_p_values(results, "none") == results
    with pytest.raises(InputError, match="unknown correction"):
        correct_p_values(results, "bonferroni")


def test_corrected_outputs_say_so():
    results = correct_p_values([_result("base", None), _result("a", [0.01, 0.5]), _result("b", [0.04, 0.2])], "holm")
    text = format_text(results, LAYOUT, correction="holm")
    assert text.splitlines()[-1].startswith("p: Holm-corrected over the 2 systems' tests")
    tsv = [line.split("\t") for line in format_tsv(results, LAYOUT, correction="holm").splitlines()]
    assert tsv[0][6] == "p_holm" and tsv[0][-1] == "p_uncorrected"
    assert [float(tsv[3][6]), float(tsv[3][-1])] == [0.02, 0.01]
    assert "$p$ (Holm)" in format_latex(results, LAYOUT, correction="holm")


def test_the_interval_columns_come_after_multevals():
    results = compare_systems(_stats(np.random.default_rng(2), 2, 40), {}, LAYOUT, boot_samples=100)
    plain, with_ci = format_text(results, LAYOUT), format_text(results, LAYOUT, ci=True)
    for a, b in zip(plain.splitlines(), with_ci.splitlines(), strict=True):
        assert b.startswith(a)
    assert "BLEU μ ± 95% CI" in with_ci.splitlines()[0]
    tsv = format_tsv(results, LAYOUT, ci=True).splitlines()
    assert tsv[0] == "system\tmetric\tn\tmean\ts_sel\ts_opt\tp\treplicas\tboot_mean\tci_half\tci_low\tci_high"
    mu, half, low, high = map(float, tsv[1].split("\t")[8:])
    assert low == pytest.approx(mu - half, abs=2e-6) and high == pytest.approx(mu + half, abs=2e-6)
    assert format_latex(results, LAYOUT, ci=True).count("$\\pm$") == 2


# -- all pairs -------------------------------------------------------------------------------------------
def test_all_pairs_matrix():
    rng = np.random.default_rng(8)
    systems = {"base": _stats(rng, 2, 60), "x": _stats(rng, 2, 60), "y": _stats(rng, 2, 60)}
    raw = all_pairs(systems, LAYOUT, ar_shuffles=300, seed=2)
    holm = all_pairs(systems, LAYOUT, ar_shuffles=300, seed=2, correction="holm")
    flat = {n: s.reshape(-1, s.shape[-1]) for n, s in systems.items()}
    for a, b in (("base", "x"), ("base", "y"), ("x", "y")):
        _, p = paired_randomization(flat[a], flat[b], LAYOUT.score, trials=300, seed=2)
        i, j = raw.names.index(a), raw.names.index(b)
        np.testing.assert_array_equal(raw.p[:, i, j], p)
        np.testing.assert_array_equal(raw.p[:, j, i], p)
    assert np.isnan(raw.p[:, 0, 0]).all()
    # the pair with the baseline is compare_systems's p
    table = compare_systems(systems["base"], {"x": systems["x"]}, LAYOUT, ar_shuffles=300, boot_samples=20, seed=2)
    np.testing.assert_array_equal(table[1].p_value, raw.p[:, 0, 1])
    # Holm over the 3 pairs, per metric, by the project's holm
    from smtlib.report.significance import holm as project_holm

    for m in range(2):
        pairs = [(0, 1), (0, 2), (1, 2)]
        expected = project_holm([raw.p[m, i, j] for i, j in pairs])
        np.testing.assert_allclose([holm.p[m, i, j] for i, j in pairs], expected, rtol=1e-12)
    text = format_pairs_text(holm, LAYOUT)
    assert "BLEU p-values, all pairs (Holm-corrected over 3 pairs):" in text
    assert text.splitlines()[1].split() == ["base", "x", "y"]
