"""Hopkins & May (2011), Figures 5 and 6 on real systems: how stable PRO is across seed-only replicas.

The paper's two claims (§5.5):

Figure 6
    "We quantified PRO's stability as compared to MERT by repeating the Urdu-English baseline PBMT
    experiment five times with each configuration. [...] The standard deviation of the final test BLEU
    of MERT was 0.13 across the five experiment instances, while PRO had a standard deviation of just
    0.05." (caption: "PRO is more stable than MERT.")
Figure 5
    "In Figure 5 we show the tune and test BLEU using the weights learned at every iteration [...] we
    can clearly see that PRO appears to proceed more monotonically than the other methods" (MERT and
    MIRA, on Urdu-English SBMT).

Our replicas (the workflow's ``stability:``, :func:`smtlib.workflow.runs.stability_runs`) tune each
method on the full dev set once per optimizer seed and nothing else; every iteration's weights decode
the test sets. A replica is then one *test curve* (:func:`curve_with_tests`): dev and test BLEU of the
weights 0..N (0 = the initial weights), Test being the mean over the pair's test sets as in the
tables. Per replica (:func:`replica_measures`):

final test BLEU
    Test of the last weights, N (the paper's "final test BLEU": its runs ended when the k-best list
    stopped changing, ours after ``tuning.iterations``); beside it, Test of the weights the loop keeps
    (best dev BLEU, Cherry & Foster's rule), described but not tested.
descent
    The test BLEU lost along the way, D = sum_i max(0, t_{i-1} - t_i) over the curve t_0..t_N: the
    steadiness measure. A curve that rises monotonically has D = 0 whatever its rise, and every drop
    counts by its size. Total variation (sum |t_i - t_{i-1}|) would count the rise itself and so call a
    method that improves more less steady; the number of drops by more than ``drop`` BLEU (default 0.3,
    above the SD across runs of most cells of our Tables 4-6, so not ordinary run-to-run noise) takes
    few values, which leaves a rank or permutation test with many ties. Both are reported beside D.

The tests (each against PRO, the claims' subject, for every other method of a feature set):

SD: an F-test, not a bootstrap
    Replicas of different methods are independent (seed s of PRO and seed s of MERT share nothing but
    the first decode), so the ratio of the two sample variances is F-distributed with (n_a - 1, n_b - 1)
    degrees of freedom under equal variances of normal test BLEU: an exact test for 5 runs each, whose
    price is the normality assumption (5 runs cannot check it). A bootstrap of the SD is no alternative
    at 5 runs: a resample of 5 values takes at most 126 distinct forms and 29% of the resamples repeat
    one run three or more times, the resampled SD is biased low (by sqrt((n-1)/n) in the plug-in form)
    and percentile intervals of a variance from 5 values under-cover badly, so a bootstrap test would
    be anti-conservative exactly where the claim lives. With 5 runs each the F-test is weak: the
    paper's own SDs (0.05 vs 0.13) give p = 0.09 (one side doubled, as below), so they could not
    establish the claim on their own either; the findings file shows that test beside ours.
Steadiness: an exact permutation test
    Δ = mean descent of PRO's replicas minus the rival's; the claim is Δ < 0. Under the null the
    replicas are exchangeable between the two methods; with 5 + 5 replicas all C(10, 5) = 252
    splits are enumerated (exact; smallest attainable p 2/252 = 0.008 with both sides doubled), and
    when there are more splits than ``permutations``, that many random splits are drawn with ``seed``
    (p = (count + 1) / (permutations + 1)). No distributional assumption; descents of 0 tie freely.

Verdicts are three-way as in :mod:`smtlib.report.claims` (:class:`~smtlib.report.claims.RunTest`,
:func:`~smtlib.report.claims.verdict`): each side a one-sided test at alpha / 2, both p-values
doubled; **holds** if the claimed side is significant after Holm's correction over every test of the
file, **does not hold** if the other side is, **inconclusive** otherwise.

The paper's own numbers stand beside ours: its SDs (0.05, 0.13; MIRA not measured there) and, for
Figure 5, its words (it gives no number). Where our setup differs from theirs: Urdu-English with
four references, MERT with k = 1500 and 20 starting points, up to 30 iterations stopped when the
k-best list stops changing, Chiang et al.'s online MIRA; ours Multi30k fr-en and ja-en with one
reference, k = 100, a fixed number of iterations, batch k-best MIRA (Cherry & Foster) as the MIRA, PRO
with Hopkins & May's Ψ = 0.1 (``stability.method_settings``; the tables' PRO runs without it).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import statistics
from collections.abc import Mapping, Sequence

import numpy as np

from smtlib.errors import InputError
from smtlib.report.claims import FAILS, HOLDS, NOT_RUN, RunTest, aggregate, decide_family
from smtlib.report.curves import method_styles
from smtlib.report.figures import pyplot
from smtlib.report.runs import META_KEYS, read_rows
from smtlib.report.significance import ALPHA, format_p
from smtlib.report.tables import FEATURE_SET_TITLES, paper_name

#: the method the paper's claims are about
REFERENCE = "pro"
#: a test curve's columns after :data:`~smtlib.report.runs.META_KEYS`; then one ``test_<set>`` per test set
CURVE_COLUMNS = ("iteration", "dev_bleu", "best", "test_bleu", "signature")
#: the per-replica TSV's columns
REPLICA_COLUMNS = ("pair", "fs", "method", "setting", "iterations", "final_test", "final_dev", "kept_iteration",
                   "kept_test", "drops", "descent", "total_variation")
#: Hopkins & May (2011), §5.5 (Figure 6): SD of the final test BLEU over five runs, Urdu-English PBMT baseline
PAPER_SD = {"mert": 0.13, "pro": 0.05}
#: the runs behind :data:`PAPER_SD`
PAPER_RUNS = 5
#: the paper's names of the methods it compares (its MIRA is Chiang et al.'s online MIRA)
PAPER_RIVALS = {"mert": "MERT", "kbmira": "MIRA (theirs: online MIRA)", "mira": "MIRA"}

SD_QUOTE = ('§5.5: "We quantified PRO\'s stability as compared to MERT by repeating the Urdu-English baseline '
            'PBMT experiment five times with each configuration. [...] The standard deviation of the final test '
            'BLEU of MERT was 0.13 across the five experiment instances, while PRO had a standard deviation of '
            'just 0.05." Figure 6: "PRO is more stable than MERT."')
STEADY_QUOTE = ('§5.5: "In Figure 5 we show the tune and test BLEU using the weights learned at every iteration for '
                'each Urdu-English SBMT experiment. Typical of the rest of the experiments, we can clearly see that '
                'PRO appears to proceed more monotonically than the other methods."')


# ------------------------------------------------------------------ one replica's test curve
def curve_with_tests(curve: Sequence[dict], tests: Mapping[str, Sequence[dict]]) -> tuple[list[dict], list[str]]:
    """A run's learning curve with its test BLEU at every iteration.

    Parameters
    ----------
    curve
        The run's learning curve (:func:`smtlib.report.runs.read_curve`): dev BLEU of the weights 0..N.
    tests
        Test-set name -> ``smtlib bleu`` results of decoding it with the weights 0..N, in order.

    Returns
    -------
    rows, names
        One row per weights: the curve's row with ``test_bleu`` (the mean over the test sets, the
        tables' Test), ``test_<set>`` per set and the test scores' BLEU ``signature``; the test-set names.

    Raises
    ------
    InputError
        Without test sets, with another number of scores than weights, or scores of different BLEU
        settings.
    """
    if not tests:
        raise InputError("a test curve needs the BLEU of at least one test set")
    for name, results in tests.items():
        if len(results) != len(curve):
            raise InputError(f"{len(results)} BLEU scores of test set {name} for a learning curve of {len(curve)} "
                             "weights (give the BLEU of each test set decoded with the weights 0..N, in order)")
    signatures = {r.get("signature", "") for results in tests.values() for r in results}
    if len(signatures) > 1:
        raise InputError(f"test scores of different BLEU settings: {', '.join(sorted(signatures))}")
    signature = signatures.pop()
    rows = []
    for i, row in enumerate(curve):
        per_set = {name: float(results[i]["score"]) for name, results in tests.items()}
        rows.append({**{k: row[k] for k in META_KEYS}, "iteration": row["iteration"], "dev_bleu": row["dev_bleu"],
                     "best": row["best"], "test_bleu": statistics.fmean(per_set.values()), "signature": signature,
                     **{f"test_{name}": value for name, value in per_set.items()}})
    return rows, list(tests)


def format_test_curve(rows: Sequence[dict], names: Sequence[str]) -> str:
    """The test curve TSV: :data:`~smtlib.report.runs.META_KEYS`, :data:`CURVE_COLUMNS`, ``test_<set>``..."""
    columns = [*META_KEYS, *CURVE_COLUMNS, *(f"test_{n}" for n in names)]
    lines = ["\t".join(columns) + "\n"]
    for r in rows:
        values = [str(r[k]) for k in META_KEYS]
        values += [str(r["iteration"]), f"{r['dev_bleu']:.4f}", "1" if r["best"] else "0", f"{r['test_bleu']:.4f}",
                   r["signature"]]
        values += [f"{r[f'test_{n}']:.4f}" for n in names]
        lines.append("\t".join(values) + "\n")
    return "".join(lines)


def read_test_curve(path: str | os.PathLike) -> list[dict]:
    """The rows of a test curve (:func:`format_test_curve`), checked: iterations 0..N in order, one kept."""
    header, table = read_rows(path, "test curve", (*META_KEYS, *CURVE_COLUMNS))
    if not any(c.startswith("test_") and c != "test_bleu" for c in header):
        raise InputError("not a test curve: no test_<set> column (smtlib report test-curve writes one per test set)",
                         path, 1)
    rows = []
    for n, row in table:
        try:
            row["iteration"] = int(row["iteration"])
            for key in header:
                if key == "dev_bleu" or key.startswith("test_"):
                    row[key] = float(row[key])
        except ValueError:
            raise InputError("malformed number", path, n) from None
        if row["best"] not in ("0", "1"):
            raise InputError(f"best is {row['best']!r}, not 0 or 1", path, n)
        row["best"] = row["best"] == "1"
        if not all(math.isfinite(row[k]) for k in ("dev_bleu", "test_bleu")):
            raise InputError("a BLEU score that is not a number", path, n)
        rows.append(row)
    if len(rows) < 2:
        raise InputError("a test curve needs the weights of at least two iterations", path)
    if [r["iteration"] for r in rows] != list(range(len(rows))):
        raise InputError("the iterations of a test curve are 0..N in order", path)
    if sum(r["best"] for r in rows) != 1:
        raise InputError("a test curve marks exactly one kept iteration", path)
    if len({tuple(r[k] for k in META_KEYS) for r in rows}) != 1:
        raise InputError("a test curve is one run's (its pair, fs, method, setting and sample differ)", path)
    for r in rows:
        r["_path"] = os.fspath(path)
    return rows


# ------------------------------------------------------------------ per replica
def descent(values: Sequence[float]) -> float:
    """The BLEU lost in drops along a curve: sum_i max(0, v_{i-1} - v_i) (0 for a monotone rise)."""
    return float(sum(max(0.0, a - b) for a, b in itertools.pairwise(values)))


def total_variation(values: Sequence[float]) -> float:
    """sum_i |v_i - v_{i-1}|."""
    return float(sum(abs(b - a) for a, b in itertools.pairwise(values)))


def drops(values: Sequence[float], threshold: float) -> int:
    """How many steps of a curve fall by more than ``threshold``."""
    return sum(1 for a, b in itertools.pairwise(values) if a - b > threshold)


@dataclasses.dataclass(frozen=True)
class Replica:
    """One seed-only replica: its identity and the measures of its test curve (see the module docstring)."""

    pair: str
    fs: str
    method: str
    setting: str
    iterations: int
    final_test: float
    final_dev: float
    kept_iteration: int
    kept_test: float
    drops: int
    descent: float
    total_variation: float
    test: tuple[float, ...]
    dev: tuple[float, ...]


def replica_measures(rows: Sequence[dict], threshold: float) -> Replica:
    """The measures of one test curve (:func:`read_test_curve`); ``threshold`` is the counted drop."""
    test = tuple(r["test_bleu"] for r in rows)
    dev = tuple(r["dev_bleu"] for r in rows)
    kept = next(r for r in rows if r["best"])
    first = rows[0]
    return Replica(first["pair"], first["fs"], first["method"], first["setting"], len(rows) - 1, test[-1], dev[-1],
                   kept["iteration"], kept["test_bleu"], drops(test, threshold), descent(test),
                   total_variation(test), test, dev)


def group_replicas(replicas: Sequence[Replica], methods: Sequence[str]) -> dict[tuple[str, str], list[Replica]]:
    """(feature set, method) -> its replicas, in ``methods`` order within each feature set.

    Raises
    ------
    InputError
        For curves of several pairs, a method not in ``methods``, a replica given twice, replicas of one
        feature set with different numbers of iterations, or a method of ``methods`` without replicas in a
        feature set that has some.
    """
    pairs = {r.pair for r in replicas}
    if len(pairs) > 1:
        raise InputError(f"test curves of several pairs ({', '.join(sorted(pairs))}): one findings file is one pair's")
    unknown = sorted({r.method for r in replicas} - set(methods))
    if unknown:
        raise InputError(f"test curves of {', '.join(unknown)}, not among --methods {' '.join(methods)}")
    seen = set()
    for r in replicas:
        key = (r.fs, r.method, r.setting)
        if key in seen:
            raise InputError(f"two test curves of {r.fs} {r.method} {r.setting} (a curve given twice)")
        seen.add(key)
    groups: dict[tuple[str, str], list[Replica]] = {}
    for fs in dict.fromkeys(r.fs for r in replicas):
        lengths = {r.iterations for r in replicas if r.fs == fs}
        if len(lengths) > 1:
            raise InputError(f"{fs}: test curves of different lengths ({sorted(lengths)} iterations)")
        for m in methods:
            mine = [r for r in replicas if r.fs == fs and r.method == m]
            if not mine:
                raise InputError(f"{fs}: no test curve of {m}")
            groups[(fs, m)] = mine
    return groups


# ------------------------------------------------------------------ the tests
def f_test(sd_a: float, n_a: int, sd_b: float, n_b: int, alpha: float = ALPHA) -> RunTest:
    """F-test of var(a) < var(b) from two independent samples' SDs (n - 1 in each).

    ``p_holds`` = 2 P(F <= f) and ``p_fails`` = 2 P(F >= f) with f = sd_a^2 / sd_b^2, F ~ F(n_a - 1,
    n_b - 1); ``estimate`` is the SD ratio sd_a / sd_b with its (1 - alpha) interval
    [sqrt(f / F_{1-alpha/2}), sqrt(f / F_{alpha/2})]. Two SDs of 0 give p = 1 on both sides.
    """
    from scipy.stats import f as fisher

    if n_a < 2 or n_b < 2:
        raise ValueError("an F-test needs at least 2 values per sample")
    d1, d2 = n_a - 1, n_b - 1
    if sd_a == 0 and sd_b == 0:
        return RunTest("F", math.nan, None, n_a + n_b, 1.0, 1.0)
    if sd_b == 0:
        return RunTest("F", math.inf, None, n_a + n_b, 1.0, 0.0)
    ratio = (sd_a / sd_b) ** 2
    ci = (math.sqrt(ratio / fisher.ppf(1 - alpha / 2, d1, d2)), math.sqrt(ratio / fisher.ppf(alpha / 2, d1, d2)))
    return RunTest("F", sd_a / sd_b, ci, n_a + n_b, min(1.0, 2 * float(fisher.cdf(ratio, d1, d2))),
                   min(1.0, 2 * float(fisher.sf(ratio, d1, d2))))


def permutation_test(a: Sequence[float], b: Sequence[float], permutations: int, seed: int) -> RunTest:
    """Permutation test of mean(a) < mean(b) for independent samples (see the module docstring).

    Every split of the pooled values into groups of len(a) and len(b) when there are at most
    ``permutations`` of them (exact), else ``permutations`` random splits drawn with ``seed``.
    ``p_holds`` = 2 P(Δ* <= Δ), ``p_fails`` = 2 P(Δ* >= Δ) over the splits' Δ* (the observed split
    included; a Monte-Carlo p is (count + 1) / (permutations + 1)); ``estimate`` is Δ = mean(a) - mean(b).
    """
    if len(a) < 1 or len(b) < 1:
        raise ValueError("a permutation test needs values in both samples")
    pooled = np.asarray([*a, *b], dtype=np.float64)
    n, k = len(pooled), len(a)
    total = pooled.sum()
    observed = statistics.fmean(a) - statistics.fmean(b)
    # splits within rounding of the observed one count as equal to it
    tol = 1e-9 * max(1.0, float(np.abs(pooled).max()))

    def delta(sums: np.ndarray) -> np.ndarray:
        return sums / k - (total - sums) / (n - k)

    if math.comb(n, k) <= permutations:
        sums = np.array([pooled[list(c)].sum() for c in itertools.combinations(range(n), k)])
        d = delta(sums)
        low, high = float(np.mean(d <= observed + tol)), float(np.mean(d >= observed - tol))
    else:
        rng = np.random.default_rng(seed)
        sums = np.array([pooled[rng.permutation(n)[:k]].sum() for _ in range(permutations)])
        d = delta(sums)
        low = (int(np.sum(d <= observed + tol)) + 1) / (permutations + 1)
        high = (int(np.sum(d >= observed - tol)) + 1) / (permutations + 1)
    return RunTest("permutation", observed, None, n, min(1.0, 2 * low), min(1.0, 2 * high))


@dataclasses.dataclass
class Comparison:
    """One test of a claim: PRO against ``rival`` in feature set ``fs`` (``kind`` "sd" or "steady")."""

    kind: str
    fs: str
    rival: str
    ours: str
    test: RunTest | None
    paper: str
    paper_verdict: str
    p_holm: float | None = None
    verdict: str = NOT_RUN


def _sd(values: Sequence[float]) -> float:
    return statistics.stdev(values)


def _paper_sd(rival: str) -> tuple[str, str]:
    """The paper's SDs of PRO and ``rival`` (:data:`PAPER_SD`), their F-test, its point verdict."""
    if rival not in PAPER_SD:
        return "-", "-"
    pro, other = PAPER_SD[REFERENCE], PAPER_SD[rival]
    test = f_test(pro, PAPER_RUNS, other, PAPER_RUNS)
    text = (f"SD {pro:.2f} vs {other:.2f} ({PAPER_RUNS} runs each); the same F-test on these: ratio "
            f"{test.estimate:.2f}, p {format_p(test.p_holds)}")
    return text, HOLDS if pro < other else FAILS


def compare(groups: Mapping[tuple[str, str], list[Replica]], permutations: int, seed: int,
            alpha: float = ALPHA) -> list[Comparison]:
    """PRO against every other method of each feature set: SD of the final test BLEU (F-test) and the
    descent of the test curves (permutation test), Holm-adjusted together, with three-way verdicts."""
    out = []
    for fs in dict.fromkeys(f for f, _ in groups):
        pro = groups.get((fs, REFERENCE))
        for (f, rival), theirs in groups.items():
            if f != fs or rival == REFERENCE:
                continue
            paper_sd, paper_sd_verdict = _paper_sd(rival)
            steady_paper = "Figure 5: PRO proceeds more monotonically (no number)" if rival in PAPER_RIVALS else "-"
            steady_verdict = HOLDS if rival in PAPER_RIVALS else "-"
            if pro is None:
                why = f"no {REFERENCE} replicas in {fs}"
                out += [Comparison("sd", fs, rival, why, None, paper_sd, paper_sd_verdict),
                        Comparison("steady", fs, rival, why, None, steady_paper, steady_verdict)]
                continue
            a, b = [r.final_test for r in pro], [r.final_test for r in theirs]
            if len(a) < 2 or len(b) < 2:
                out.append(Comparison("sd", fs, rival, "fewer than 2 replicas: no SD", None, paper_sd,
                                      paper_sd_verdict))
            else:
                test = f_test(_sd(a), len(a), _sd(b), len(b), alpha)
                ci = "" if test.ci is None else f" [{test.ci[0]:.2f}, {test.ci[1]:.2f}]"
                ours = f"SD {_sd(a):.2f} vs {_sd(b):.2f}: ratio {test.estimate:.2f}{ci}"
                out.append(Comparison("sd", fs, rival, ours, test, paper_sd, paper_sd_verdict))
            da, db = [r.descent for r in pro], [r.descent for r in theirs]
            test = permutation_test(da, db, permutations, seed)
            ours = f"descent {statistics.fmean(da):.2f} vs {statistics.fmean(db):.2f}: Δ {test.estimate:+.2f}"
            out.append(Comparison("steady", fs, rival, ours, test, steady_paper, steady_verdict))
    decide_family(out, alpha)
    return out


# ------------------------------------------------------------------ outputs
def format_replicas(groups: Mapping[tuple[str, str], list[Replica]]) -> str:
    """One row per replica (:data:`REPLICA_COLUMNS`)."""
    lines = ["\t".join(REPLICA_COLUMNS) + "\n"]
    for replicas in groups.values():
        for r in replicas:
            lines.append("\t".join([r.pair, r.fs, r.method, r.setting, str(r.iterations), f"{r.final_test:.4f}",
                                    f"{r.final_dev:.4f}", str(r.kept_iteration), f"{r.kept_test:.4f}", str(r.drops),
                                    f"{r.descent:.4f}", f"{r.total_variation:.4f}"]) + "\n")
    return "".join(lines)


def _p(p: float | None, alpha: float) -> str:
    return "-" if p is None else format_p(p, alpha)


_CLAIMS = (
    ("sd", "PRO's final test BLEU varies less across seeds than {rival}'s (smaller SD)", SD_QUOTE),
    ("steady", "PRO's test BLEU proceeds more steadily across iterations than {rival}'s (less test BLEU lost in "
               "drops)", STEADY_QUOTE),
)


def format_findings(groups: Mapping[tuple[str, str], list[Replica]], comparisons: Sequence[Comparison],
                    threshold: float, permutations: int, seed: int, alpha: float = ALPHA) -> str:
    """``results/stability/<pair>.md``: the claims with their verdicts beside the paper's, each method's
    spread and steadiness, every replica, and how it is decided."""
    first = next(iter(groups.values()))[0]
    counts = sorted({len(v) for v in groups.values()})
    tested = sum(c.test is not None for c in comparisons)
    text = (f"# Stability across optimizer seeds, {first.pair}: Hopkins & May (2011), Figures 5 and 6\n\n"
            f"Each method tuned on the full dev set once per optimizer seed, nothing else differing "
            f"({', '.join(map(str, counts))} replicas per method, {first.iterations} iterations); the test sets "
            "decoded with every iteration's weights, Test = BLEU averaged over the test sets. Final = the last "
            "iteration's weights (the paper's \"final test BLEU\"); kept = the weights with the best dev BLEU "
            f"(the tables' rule). Descent = the test BLEU lost in drops along the curve; drops = steps down by "
            f"more than {threshold:g} BLEU. Each claim is tested against PRO, each side at alpha / 2 = "
            f"{alpha / 2:g}, Holm-corrected over the {tested} tests of this file: **holds** (the claimed side is "
            "significant), **does not hold** (the other side is), **inconclusive** (neither).\n\n")
    text += "## Claims\n\n| # | claim | column | ours | p | Holm p | verdict | paper | paper's verdict |\n"
    text += "|---|---|---|---|---|---|---|---|---|\n"
    claims = []
    for kind, template, _ in _CLAIMS:
        for c in comparisons:
            if c.kind == kind:
                claims.append(c)
                rival = paper_name(c.rival)
                p = "-" if c.test is None else _p(c.test.p, alpha)
                text += (f"| {len(claims)} | {template.format(rival=rival)} | {c.fs} | {c.ours} | {p} | "
                         f"{_p(c.p_holm, alpha)} | **{c.verdict}** | {c.paper} | {c.paper_verdict} |\n")
    for kind, template, _ in _CLAIMS:
        verdicts = [c.verdict for c in comparisons if c.kind == kind]
        if verdicts:
            text += (f"\nOver every rival and column, \"{template.format(rival='every other method')}\": "
                     f"**{aggregate(verdicts, 'all')}**.\n")
    text += "\n## Each method\n\n"
    text += ("| feature set | method | replicas | final Test | SD | kept Test | SD | kept iteration (mean) | drops "
             "(mean) | descent (mean) | total variation (mean) |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
    for (fs, m), replicas in groups.items():
        final = [r.final_test for r in replicas]
        kept = [r.kept_test for r in replicas]

        def sd(values):
            return f"{_sd(values):.2f}" if len(values) > 1 else "-"

        text += (f"| {fs} | {paper_name(m)} | {len(replicas)} | {statistics.fmean(final):.2f} | {sd(final)} | "
                 f"{statistics.fmean(kept):.2f} | {sd(kept)} | "
                 f"{statistics.fmean(r.kept_iteration for r in replicas):.1f} | "
                 f"{statistics.fmean(r.drops for r in replicas):.1f} | {statistics.fmean(r.descent for r in replicas):.2f} "
                 f"| {statistics.fmean(r.total_variation for r in replicas):.2f} |\n")
    text += "\n## Each replica\n\nTest BLEU of the weights 0..N (0 = the initial weights).\n\n"
    text += "| feature set | method | setting | test BLEU by iteration | final | kept (iteration) | drops | descent |\n"
    text += "|---|---|---|---|---|---|---|---|\n"
    for replicas in groups.values():
        for r in replicas:
            text += (f"| {r.fs} | {paper_name(r.method)} | {r.setting} | {' '.join(f'{v:.2f}' for v in r.test)} | "
                     f"{r.final_test:.2f} | {r.kept_test:.2f} ({r.kept_iteration}) | {r.drops} | {r.descent:.2f} |\n")
    text += "\n## Where the paper says it\n\n"
    text += "".join(f"{i}. {quote}\n" for i, (_, _, quote) in enumerate(_CLAIMS, 1))
    text += "\n## How it is decided\n\n" + _RULES.format(half=alpha / 2, alpha=alpha, permutations=permutations,
                                                        seed=seed, runs=PAPER_RUNS)
    return text


_RULES = """\
- SD: an F-test of PRO's variance of the final Test against the rival's (independent replicas; exact
  under normal test BLEU), each side doubled: holds if PRO's is significantly smaller. A bootstrap of
  the SD is not used: 5 values give at most 126 distinct resamples and a downward-biased SD, so its
  test would be anti-conservative. With {runs} runs each the test is weak: the paper's own SDs under
  the same test are shown in the claims table.
- Steadiness: descent D = sum of max(0, t_(i-1) - t_i) over the test curve; an exact permutation test
  of mean D (PRO's minus the rival's) over every split of the pooled replicas (at most {permutations}
  splits, else {permutations} random ones, seed {seed}), each side doubled: holds if PRO's is
  significantly smaller.
- Each side is a one-sided test at {half:g}; Holm's correction over the file's tests; a verdict other
  than inconclusive needs a Holm-adjusted p < {alpha}. The paper's verdicts are its point estimates
  (SDs) and its words (Figure 5), as it reports no test.
"""


def plot_stability(groups: Mapping[tuple[str, str], list[Replica]], title: str | None = None):
    """Dev and test BLEU by iteration side by side, one row per (feature set, method), one line per
    replica, a marker on each replica's kept weights (cf. Hopkins & May 2011, Figures 5 and 6); the
    y-axes are shared within a column, so the methods' spreads compare at a glance."""
    plt = pyplot()
    from matplotlib.ticker import MaxNLocator

    keys = list(groups)
    styles = method_styles(m for _, m in keys)
    fig, axes = plt.subplots(len(keys), 2, figsize=(10, 2.6 * len(keys)), squeeze=False, sharex=True,
                             sharey="col")
    for row, (fs, m) in zip(axes, keys):
        color = plt.cm.tab10(styles[m][0])
        for r in groups[(fs, m)]:
            for ax, values in zip(row, (r.dev, r.test)):
                ax.plot(range(len(values)), values, color=color, alpha=0.8, linewidth=1.0)
                ax.plot([r.kept_iteration], [values[r.kept_iteration]], styles[m][1], color=color, markersize=4)
        for ax, what in zip(row, ("dev", "test")):
            ax.set_title(f"{paper_name(m)}, {FEATURE_SET_TITLES.get(fs, fs)}: {what} BLEU", fontsize=9)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("iteration (weights; 0 = initial)")
    first = next(iter(groups.values()))[0]
    fig.suptitle(title or f"{first.pair}: one line per optimizer seed, markers on the kept weights "
                          "(cf. Hopkins & May 2011, Figures 5 and 6)", fontsize=10)
    fig.tight_layout()
    return fig

