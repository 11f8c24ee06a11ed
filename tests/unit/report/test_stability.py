"""Seed-only replicas against PRO (smtlib.report.stability) and `smtlib report test-curve` / `stability`.

The statistics are checked against definitions computed here by hand (the F-test from scipy's F
distribution, the exact permutation test by enumerating every split with itertools, the curve
measures on curves whose answers are known), the verdicts on replicas built to establish a claim,
refute it, or leave it open, and the files on replicas whose numbers are recomputed from them.
"""

from __future__ import annotations

import itertools
import json
import math
import statistics

import pytest
from scipy import stats

from smtlib.errors import InputError
from smtlib.report.claims import FAILS, HOLDS, INCONCLUSIVE
from smtlib.report.stability import (
    PAPER_SD,
    Replica,
    compare,
    curve_with_tests,
    descent,
    drops,
    f_test,
    format_findings,
    format_replicas,
    format_test_curve,
    group_replicas,
    permutation_test,
    read_test_curve,
    replica_measures,
    total_variation,
)


# ------------------------------------------------------------------ curve measures
def test_descent_counts_only_what_is_lost_and_a_monotone_rise_loses_nothing():
    assert descent([20.0, 21.0, 22.5, 22.5, 30.0]) == 0.0
    assert descent([20.0, 22.0, 21.0, 23.0, 22.5]) == pytest.approx(1.5)
    assert total_variation([20.0, 22.0, 21.0, 23.0, 22.5]) == pytest.approx(2.0 + 1.0 + 2.0 + 0.5)
    # a rise costs total variation but no descent: the reason descent is the steadiness measure
    assert total_variation([20.0, 30.0]) == 10.0 and descent([20.0, 30.0]) == 0.0
    assert drops([20.0, 19.8, 19.0, 19.5, 19.1], 0.3) == 2  # -0.2 is not a drop, -0.8 and -0.4 are


# ------------------------------------------------------------------ the F-test
def test_the_f_test_is_the_variance_ratio_against_the_f_distribution():
    a, b = [50.1, 50.3, 50.2, 50.25, 50.15], [49.0, 50.5, 51.2, 50.0, 49.6]
    sa, sb = statistics.stdev(a), statistics.stdev(b)
    test = f_test(sa, len(a), sb, len(b))
    ratio = sa**2 / sb**2
    assert test.estimate == pytest.approx(sa / sb)
    assert test.p_holds == pytest.approx(2 * stats.f.cdf(ratio, 4, 4))
    assert test.p_fails == pytest.approx(min(1.0, 2 * stats.f.sf(ratio, 4, 4)))
    lo, hi = test.ci
    assert lo < test.estimate < hi
    assert hi == pytest.approx(math.sqrt(ratio / stats.f.ppf(0.025, 4, 4)))
    # the same test with the roles swapped is the mirror image
    swapped = f_test(sb, len(b), sa, len(a))
    assert swapped.p_holds == pytest.approx(test.p_fails) and swapped.p_fails == pytest.approx(test.p_holds)


def test_the_papers_own_sds_under_the_f_test_give_the_p_the_docstring_states():
    """Hopkins & May's 0.05 against 0.13 over 5 runs each: p = 0.09, not significant at 0.05."""
    test = f_test(PAPER_SD["pro"], 5, PAPER_SD["mert"], 5)
    assert round(test.p_holds, 2) == 0.09 and test.side == HOLDS


def test_the_f_test_of_constant_samples():
    assert f_test(0.0, 5, 0.0, 5).p == 1.0
    assert f_test(0.2, 5, 0.0, 5).p_fails == 0.0


# ------------------------------------------------------------------ the permutation test
def _by_hand(a, b):
    """2 P(Δ* <= Δ) and 2 P(Δ* >= Δ) over every split of the pooled values, counted here."""
    pooled, k = a + b, len(a)
    observed = statistics.fmean(a) - statistics.fmean(b)
    splits = list(itertools.combinations(range(len(pooled)), k))
    deltas = []
    for idx in splits:
        x = [pooled[i] for i in idx]
        y = [pooled[i] for i in range(len(pooled)) if i not in idx]
        deltas.append(statistics.fmean(x) - statistics.fmean(y))
    low = sum(d <= observed + 1e-9 for d in deltas) / len(splits)
    high = sum(d >= observed - 1e-9 for d in deltas) / len(splits)
    return min(1.0, 2 * low), min(1.0, 2 * high)


@pytest.mark.parametrize("a, b", [
    ([0.0, 0.1, 0.0, 0.2, 0.0], [1.5, 0.8, 2.1, 0.0, 1.2]),
    ([0.4, 0.0, 0.9], [0.3, 0.35, 0.0, 0.7]),
    ([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]),
])
def test_the_permutation_test_enumerates_every_split(a, b):
    test = permutation_test(a, b, permutations=10_000, seed=1)
    assert (test.p_holds, test.p_fails) == pytest.approx(_by_hand(a, b))
    assert test.estimate == pytest.approx(statistics.fmean(a) - statistics.fmean(b))
    reference = stats.permutation_test((a, b), lambda x, y: x.mean() - y.mean(), permutation_type="independent",
                                       alternative="less", n_resamples=10_000)
    assert test.p_holds == pytest.approx(min(1.0, 2 * reference.pvalue))


def test_five_against_five_reaches_its_smallest_p_when_every_value_is_below_every_other():
    test = permutation_test([0.0, 0.1, 0.2, 0.3, 0.4], [1.0, 1.1, 1.2, 1.3, 1.4], permutations=252, seed=1)
    assert test.p_holds == pytest.approx(2 / 252) and test.p_fails == 1.0


def test_the_drawn_permutation_test_follows_its_seed():
    a, b = [0.1 * i for i in range(9)], [0.1 * i + 0.35 for i in range(9)]  # C(18, 9) = 48620 splits
    one, again = (permutation_test(a, b, permutations=500, seed=3) for _ in range(2))
    assert one == again
    other = permutation_test(a, b, permutations=500, seed=4)
    exact = permutation_test(a, b, permutations=50_000, seed=0)
    for drawn in (one, other):
        assert abs(drawn.p_holds - exact.p_holds) < 0.1  # 500 draws: Monte-Carlo error about 0.02
        assert drawn.p_holds >= 2 / 501  # (count + 1) / (draws + 1), never 0


# ------------------------------------------------------------------ verdicts
def _replica(method, seed, test, fs="medium", kept=None):
    dev = tuple(30.0 + 0.1 * i for i in range(len(test)))
    kept = len(test) - 1 if kept is None else kept
    return Replica("fr-en", fs, method, f"seed={seed}", len(test) - 1, test[-1], dev[-1], kept, test[kept],
                   drops(test, 0.3), descent(test), total_variation(test), tuple(test), dev)


def _steady(v):
    return (v - 2.0, v - 1.5, v - 0.5, v - 0.2, v)  # rises all the way: descent 0


def _jumpy(v):
    return (v - 2.0, v + 1.0, v - 1.5, v + 0.5, v)  # falls by 2.5 and 0.5: descent 3


def _groups(finals, shapes=None):
    """(fs, method) -> replicas whose final Test are ``finals[method]``, each curve of the method's shape
    (default: steady) ending there."""
    replicas = []
    for m, values in finals.items():
        shape = (shapes or {}).get(m, _steady)
        replicas += [_replica(m, s, shape(v)) for s, v in enumerate(values, 1)]
    return group_replicas(replicas, list(finals))


def test_a_clearly_smaller_sd_and_steadier_curves_hold_and_the_reverse_does_not():
    groups = _groups({"pro": [50.0, 50.01, 50.02, 49.99, 50.0], "mert": [48.0, 51.0, 49.5, 52.0, 47.5]},
                     {"mert": _jumpy})
    by_kind = {c.kind: c for c in compare(groups, permutations=10_000, seed=1)}
    assert by_kind["sd"].verdict == HOLDS and by_kind["sd"].test.estimate < 0.05
    assert by_kind["steady"].verdict == HOLDS and by_kind["steady"].test.p == pytest.approx(2 / 252)
    # the paper's numbers beside ours, with the same test on them
    assert "0.05 vs 0.13" in by_kind["sd"].paper and by_kind["sd"].paper_verdict == HOLDS
    reverse = _groups({"pro": [48.0, 51.0, 49.5, 52.0, 47.5], "mert": [50.0, 50.01, 50.02, 49.99, 50.0]},
                      {"pro": _jumpy})
    assert {c.verdict for c in compare(reverse, permutations=10_000, seed=1)} == {FAILS}


def test_five_runs_that_differ_little_are_inconclusive_whatever_the_point_estimate():
    groups = _groups({"pro": [50.0, 50.2, 49.9, 50.1, 50.05], "kbmira": [50.0, 50.3, 49.8, 50.2, 50.05]})
    sd = next(c for c in compare(groups, permutations=10_000, seed=1) if c.kind == "sd")
    assert sd.test.estimate < 1 and sd.verdict == INCONCLUSIVE
    assert sd.paper == "-"  # the paper measured no MIRA's SD


def test_holm_adjusts_over_every_test_of_the_file():
    groups = _groups({"mert": [48.0, 51.0, 49.5, 52.0, 47.5], "pro": [50.0, 50.01, 50.02, 49.99, 50.0],
                      "kbmira": [49.0, 50.5, 51.0, 48.8, 50.1]})
    comparisons = compare(groups, permutations=10_000, seed=1)
    assert len(comparisons) == 4  # (sd, steady) x (mert, kb-mira), PRO the reference
    ps = sorted(c.test.p for c in comparisons)
    smallest = min(comparisons, key=lambda c: c.test.p)
    assert smallest.p_holm == pytest.approx(min(1.0, 4 * ps[0]))
    assert all(c.p_holm >= c.test.p for c in comparisons)


# ------------------------------------------------------------------ files
def _bleu(score, sig="nrefs:1|case:lc|eff:no|tok:none|smooth:exp|version:2.6.0"):
    return {"name": "BLEU", "score": score, "signature": sig}


def _curve(method="pro", setting="seed=1", dev=(20.0, 22.0, 21.5), best=1):
    return [{"pair": "fr-en", "fs": "medium", "method": method, "setting": setting, "sample": "0", "iteration": i,
             "dev_bleu": d, "best": i == best, "signature": "sig"} for i, d in enumerate(dev)]


def test_a_test_curve_round_trips_with_the_mean_over_the_test_sets(tmp_path):
    tests = {"test2016": [_bleu(30.0), _bleu(31.0), _bleu(30.5)], "test2017": [_bleu(28.0), _bleu(29.4), _bleu(29.0)]}
    rows, names = curve_with_tests(_curve(), tests)
    path = tmp_path / "test_curve.tsv"
    path.write_text(format_test_curve(rows, names))
    back = read_test_curve(path)
    assert [r["test_bleu"] for r in back] == pytest.approx([29.0, 30.2, 29.75])
    assert [r["test_test2017"] for r in back] == [28.0, 29.4, 29.0] and [r["best"] for r in back] == [0, 1, 0]
    r = replica_measures(back, 0.3)
    assert (r.final_test, r.kept_iteration, r.kept_test, r.drops) == pytest.approx((29.75, 1, 30.2, 1))
    assert r.descent == pytest.approx(0.45)


def test_a_test_curve_refuses_scores_that_do_not_fit():
    with pytest.raises(InputError, match="2 BLEU scores of test set t for a learning curve of 3"):
        curve_with_tests(_curve(), {"t": [_bleu(1.0), _bleu(2.0)]})
    with pytest.raises(InputError, match="different BLEU settings"):
        curve_with_tests(_curve(), {"t": [_bleu(1.0), _bleu(2.0), _bleu(3.0, "other")]})
    with pytest.raises(InputError, match="at least one test set"):
        curve_with_tests(_curve(), {})


def test_grouping_refuses_curves_that_are_not_one_pairs_replicas():
    good = [_replica("pro", 1, (1.0, 2.0)), _replica("mert", 1, (1.0, 2.0))]
    with pytest.raises(InputError, match="given twice"):
        group_replicas(good + [_replica("pro", 1, (1.0, 3.0))], ["pro", "mert"])
    with pytest.raises(InputError, match="not among --methods"):
        group_replicas(good, ["pro"])
    with pytest.raises(InputError, match="no test curve of kbmira"):
        group_replicas(good, ["pro", "mert", "kbmira"])
    with pytest.raises(InputError, match="different lengths"):
        group_replicas(good + [_replica("pro", 2, (1.0, 2.0, 3.0))], ["pro", "mert"])


def test_the_findings_and_table_are_the_replicas_numbers():
    finals = {"mert": [48.0, 51.0, 49.5, 52.0, 47.5], "pro": [50.0, 50.01, 50.02, 49.99, 50.0]}
    groups = _groups(finals)
    comparisons = compare(groups, permutations=10_000, seed=1)
    text = format_findings(groups, comparisons, 0.3, 10_000, 1)
    assert text.startswith("# Stability across optimizer seeds, fr-en")
    assert f"| medium | kb-mert | 5 | {statistics.fmean(finals['mert']):.2f} | {statistics.stdev(finals['mert']):.2f} |" \
        in text
    sd = next(c for c in comparisons if c.kind == "sd")
    assert f"**{sd.verdict}**" in text and "0.05 vs 0.13 (5 runs each)" in text
    rows = [ln.split("\t") for ln in format_replicas(groups).splitlines()]
    assert rows[0][:6] == ["pair", "fs", "method", "setting", "iterations", "final_test"] and len(rows) == 11
    assert statistics.stdev(float(r[5]) for r in rows[1:] if r[2] == "pro") == pytest.approx(
        statistics.stdev(finals["pro"]), abs=1e-4)


def test_the_commands_write_the_curve_findings_table_and_figure(tmp_path, cli):
    curves = []
    for method, finals in (("pro", (50.0, 50.1)), ("mert", (48.0, 52.0))):
        for seed, final in enumerate(finals, 1):
            curve = tmp_path / f"{method}{seed}.curve.tsv"
            head = "pair\tfs\tmethod\tsetting\tsample\titeration\tdev_bleu\tbest\tsignature\n"
            curve.write_text(head + "".join(
                f"fr-en\tmedium\t{method}\tseed={seed}\t0\t{i}\t{30 + i}\t{int(i == 2)}\tsig\n" for i in range(3)))
            args = []
            for i, score in enumerate((final - 2, final - 1, final)):
                path = tmp_path / f"{method}{seed}.it{i}.json"
                path.write_text(json.dumps(_bleu(score)))
                args.append(f"t={path}")
            out = tmp_path / f"{method}{seed}.test_curve.tsv"
            r = cli("report", "test-curve", "--curve", curve, "--test", *args, "--out", out)
            assert r.returncode == 0, r.stderr
            curves.append(out)
    md, tsv, png = tmp_path / "f.md", tmp_path / "f.tsv", tmp_path / "f.png"
    r = cli("report", "stability", "--curves", *curves, "--methods", "mert", "pro", "--out", md, "--tsv", tsv,
            "--figure", png)
    assert r.returncode == 0, r.stderr
    assert png.stat().st_size > 0 and "| medium | pro | 2 | 50.05 | 0.07 |" in md.read_text()
    rows = [ln.split("\t") for ln in tsv.read_text().splitlines()]
    assert [float(r[5]) for r in rows[1:]] == [48.0, 52.0, 50.0, 50.1]
    # bad input: exit 2, one line, nothing written
    for bad_args, message in (
        (["--curves", curve, "--methods", "pro"], "not a test curve"),
        (["--curves", *curves, "--methods", "pro"], "not among --methods"),
        (["--curves", *curves, "--methods", "mert", "pro", "--drop", "0"], "expected a number above 0"),
    ):
        r = cli("report", "stability", *bad_args, "--out", tmp_path / "x.md", "--tsv", tmp_path / "x.tsv",
                "--figure", tmp_path / "x.png")
        assert r.returncode == 2 and message in r.stderr, (bad_args, r.stderr)
        assert "Traceback" not in r.stderr and not (tmp_path / "x.md").exists()
    r = cli("report", "test-curve", "--curve", curve, "--test", f"t={tmp_path / 'pro1.it0.json'}", "--out",
            tmp_path / "x.tsv")
    assert r.returncode == 2 and "1 BLEU scores of test set t for a learning curve of 3" in r.stderr
