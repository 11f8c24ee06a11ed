"""The findings of Cherry & Foster (2012), §5, as data, decided on our tables with run-level tests.

Each :class:`Claim` quotes the sentence of §5 it tests, names the methods with the paper's names, the
columns (feature sets) it covers, how it is decided (``kind``) and over how many of its comparisons
(``quantifier``); :data:`CLAIMS` holds them once, in the order of §5. :func:`evaluate` decides every
claim on a table's tests (:func:`smtlib.report.paper.read_tests`: each cell's runs, one per dev
sub-sample, and the sentence-level approximate randomization p-values of its column's pairs,
:mod:`smtlib.report.significance`) and on the paper's own numbers; :func:`format_findings` writes
``results/<table>_findings.md``. §5 sentences that a table's tests cannot decide are
:data:`NOT_EVALUATED`, each with the reason, and the findings file lists them.

The test the verdicts use
    A paired t-test over the dev sub-samples (§4.3: every cell is tuned on the full dev set and four
    fixed sub-samples, so run *s* of one method is paired with run *s* of another, in any column).
    Its unit is the tuning run, so its variance is the optimizer's instability that §4.3's replicas
    measure: Clark et al. (2011), "Better hypothesis testing for statistical machine translation:
    controlling for optimizer instability", show that a difference between two tuned systems must be
    judged against the variance across optimizer replicas, not only across test sentences. The
    approximate randomization (AR) test of the table's marks pools the runs' outputs and shuffles
    sentences: its unit is the sentence, so with 5 runs it asks whether these runs' outputs differ, and
    a difference smaller than the runs' spread can be significant. Its p is shown beside every
    within-column comparison, as sentence-level evidence; it decides nothing here. Of the run-level
    tests Dror et al. (2018), "The hitchhiker's guide to testing statistical significance in NLP",
    weigh, the paired t-test is the one with power at 5 pairs: the exact sign-flip permutation test
    and the Wilcoxon signed-rank test have a smallest two-sided p of 2/32 = 0.0625 at n = 5, so
    they can never reach 0.05. The t-test's price is its assumption of normal paired differences,
    which 5 runs cannot check; the table's SDs and the companion's runs let a reader judge it.
Three-way verdicts
    Every comparison is a claim about a quantity Δ (a mean paired difference, or a statistic below)
    lying in a region: *above a bound* (A better than B, or A not worse than B by more than a margin:
    Δ > -margin) or *inside an interval* (equivalence: -margin < Δ < +margin). It **holds** if the test
    puts Δ in the region significantly, **does not hold** if it puts Δ outside significantly, and is
    **inconclusive** otherwise; a point estimate on the claimed side decides nothing by itself. Each
    side is a one-sided test at ``alpha`` / 2 (0.025), so that confirming a claim and refuting it
    are equally hard and, for a difference against zero, the decisive p is the ordinary two-sided
    paired t p (:func:`scipy.stats.ttest_rel`) at the table marks' alpha = 0.05. In confidence-interval
    terms: a claim holds if the 95% interval of Δ lies inside the region, does not hold if it lies
    outside, and is inconclusive if it straddles the boundary. For equivalence this is the two
    one-sided tests procedure (TOST), each test at 0.025 (the 95% interval inside the margins; the
    textbook TOST at 0.05 per side reads a 90% interval, a looser rule than the one used to refute).
"At least as good" and its margin
    §5's sentences about one method against another say "outperforms", "top scoring", "improvement":
    claims of superiority, and the paper gives no margin for them. So "at least as good" is tested
    with a non-inferiority margin of 0: A holds against B if A is significantly better, does not hold
    if significantly worse. A positive margin would be a tolerance of our own invention; the only
    tolerance the paper states is MR's "within 0.2 of batch lattice MIRA" (margin 0.2).
Equivalence margin
    "Mostly indistinguishable" and "perform similarly" name no tolerance. Their margin is 0.2 BLEU,
    the paper's own scale of a negligible gap (the same section calls MR "always within 0.2" as a
    mark of closeness, and a Big gain of 0.4 an improvement).
Holm's correction
    The p-values of every comparison of a table's findings form one family (a comparison that two
    claims share, the same cells, kind and margin, counts once). Each comparison's decisive p is the
    smaller of its two sides; Holm's step-down procedure adjusts them, and a verdict other than
    inconclusive needs a Holm-adjusted p < alpha. The findings give both the unadjusted and the
    adjusted p.
The column's best
    The method with the highest mean of its runs' Test (the statistic the paired test is about; it is
    the table's Test, which averages the runs), not the pooled BLEU the AR test scores.
SD claims
    A cell's runs and another cell's are paired by sub-sample, so their variances are not independent
    and an F-test does not apply; the Pitman-Morgan test does (var A = var B exactly when A + B and
    A - B are uncorrelated: a t-test of that correlation with n - 2 degrees of freedom). The claimed
    side is that A's variance is the larger; each side at alpha / 2, as above.
A claim's verdict
    ``quantifier`` "all" (the paper says "all", "always", "consistently", or names one comparison):
    holds if every evaluated comparison holds, does not hold if any does not hold, inconclusive
    otherwise. "most" (the paper says "most", "mostly", "generally"): holds if more than half hold,
    does not hold if at least half do not hold (then "most" cannot be true), inconclusive otherwise.
    Comparisons whose cells are not in our table, or that have fewer than 2 paired runs (no run-level
    test), are "not run" and do not count; a claim with none evaluated is "not run".
The paper's verdict
    The same comparisons on the paper's numbers (its Tables 4-6, :func:`smtlib.report.paper.paper_table`)
    by their point estimates, to the paper's two decimals: the paper reports no test, so its verdict is
    holds / does not hold, aggregated with the same quantifier.

Kinds (:data:`KINDS`)
    ``at_least``: each of ``methods`` (default: every method of the column but ``other``) against
    ``other`` (in ``other_column``, default the same column): Δ = A - B > -``margin``.
    ``best``: the one method of ``methods`` against every other method of the column, Δ > 0.
    ``equivalent``: |Δ| < ``margin`` for every pair of ``methods``, or, with ``other`` =
    :data:`COLUMN_BEST`, each method of the column against the column's best.
    ``mean_gain``: the mean, run by run, of the column's methods (default: all) minus ``other`` in
    ``other_column``: |Δ - ``target``| < ``margin``.
    ``bulk``: each method with a Medium and a Big cell (``columns``) has more than half its Big gain over
    ``other`` in ``other_column`` on Medium already: Δ = A_medium - (A_big + B) / 2 > 0, run by run.
    ``consistency``: A's gap to ``other`` changes less across the feature sets than each rival's:
    per sub-sample, the SD across the columns of (method - ``other``); Δ = rival's - A's > 0.
    ``sd_largest``: A's runs vary more than every other method's of the column (Pitman-Morgan).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence

from smtlib.report.paper import BASELINE, Cell, CellTest, TableTests, compare
from smtlib.report.significance import format_p, holm

HOLDS, FAILS, INCONCLUSIVE, NOT_RUN = "holds", "does not hold", "inconclusive", "not run"
ALL_COLUMNS = ("small", "medium", "big")
KINDS = ("at_least", "best", "equivalent", "mean_gain", "bulk", "consistency", "sd_largest")
QUANTIFIERS = ("all", "most")
#: ``Claim.other`` for "the column's best" (the highest mean of the runs' Test)
COLUMN_BEST = "the column's best"
#: the tolerance the paper gives for "within" (MR "always within 0.2 of batch lattice MIRA", §5),
#: used as the margin of its unquantified "indistinguishable" and "similarly"
PAPER_MARGIN = 0.2


@dataclasses.dataclass(frozen=True)
class Claim:
    """One finding of the paper's §5 (see the module docstring for ``kind`` and ``quantifier``).

    Attributes
    ----------
    key
        Short identifier.
    text
        The claim, in our words, as it is tested.
    quote
        Where the paper says it (its words).
    kind
        How each comparison is decided: one of :data:`KINDS`.
    methods
        The methods the claim is about (A), with the paper's names; empty: every method of the column.
    other
        The method they are set against (B), :data:`COLUMN_BEST`, or None.
    columns
        The feature sets it covers.
    other_column
        The feature set of ``other`` when it is not the comparison's own column.
    margin
        The tolerance of ``at_least`` (Δ > -margin), ``equivalent`` and ``mean_gain`` (|Δ - target| < margin).
    target
        The claimed size of ``mean_gain``.
    rivals
        The methods ``consistency`` sets A against.
    quantifier
        Over the comparisons: "all" or "most".
    note
        What the reader should know (where the paper's own numbers differ from its words, what a
        verdict presupposes).
    """

    key: str
    text: str
    quote: str
    kind: str
    methods: tuple[str, ...] = ()
    other: str | None = None
    columns: tuple[str, ...] = ALL_COLUMNS
    other_column: str | None = None
    margin: float = 0.0
    target: float = 0.0
    rivals: tuple[str, ...] = ()
    quantifier: str = "all"
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown claim kind {self.kind!r}")
        if self.quantifier not in QUANTIFIERS:
            raise ValueError(f"unknown quantifier {self.quantifier!r}")


_BASELINE_QUOTE = ('§5: "The important baseline when assessing the utility of a method is Medium k-best MERT. In all '
                   'language pairs, our Big systems generally outperform this baseline by 0.4 BLEU points"')
_MR_QUOTE = ('§5: "Though these systems [PRO, MR, SVM] all tend to show a fair amount of variance across language '
             'and feature sets ..., MR performs the most consistently, and is always within 0.2 of batch lattice MIRA"')
_NON_MERT = ("mira", "kb-mira", "lb-mira", "pro", "mr", "svm")

#: Cherry & Foster (2012), §5's findings that a table's tests decide, in the order of the text.
CLAIMS: tuple[Claim, ...] = (
    Claim(
        "big-beats-baseline", "The Big systems generally outperform Medium kb-mert (each Big method against it)",
        _BASELINE_QUOTE, "at_least", (), BASELINE[0], ("big",), other_column=BASELINE[1], quantifier="most",
    ),
    Claim(
        "big-gain-0.4", "The Big systems' mean gain over Medium kb-mert is about 0.4 BLEU (0.4 ± 0.2)",
        _BASELINE_QUOTE, "mean_gain", (), BASELINE[0], ("big",), other_column=BASELINE[1], margin=PAPER_MARGIN,
        target=0.4,
        note='"About" is read with the paper\'s tolerance of 0.2. The paper\'s own Table 6 (Zh-En) gains 1.08.',
    ),
    Claim(
        "bulk-on-medium", "Most methods achieve more than half of their Big gain over Medium kb-mert on Medium",
        '§5: "It is interesting to note that most methods achieve the bulk of this improvement on the Medium '
        'feature set"',
        "bulk", _NON_MERT, BASELINE[0], ("medium", "big"), other_column=BASELINE[1], quantifier="most",
        note="The comparison is A's Medium Test against the midpoint of Medium kb-mert and A's Big Test. It "
             "presupposes the Big improvement (claim 1): where the Big cell is not above Medium kb-mert there is "
             "no improvement to divide, and a verdict only places the Medium cell against that midpoint.",
    ),
    Claim(
        "mert-medium-problems", "Most of the other methods outperform kb-mert on Medium (MERT's problems at 18 "
        "features)",
        '§5: "This indicates that MERT begins to show some problems even in an 18-feature setting"',
        "at_least", _NON_MERT, "kb-mert", ("medium",), quantifier="most",
    ),
    Claim(
        "lattice-mert-mitigates", "Lattice MERT outperforms k-best MERT on Medium",
        '§5: "MERT begins to show some problems even in an 18-feature setting, which can be mitigated through the '
        'use of Lattice MERT"',
        "at_least", ("lb-mert",), "kb-mert", ("medium",),
    ),
    Claim(
        "small-indistinguishable", "On Small, the methods are mostly indistinguishable: each within 0.2 BLEU of "
        "the column's best (equivalence)",
        '§5: "Using Small features, all of the tested methods are mostly indistinguishable"',
        "equivalent", (), COLUMN_BEST, ("small",), margin=PAPER_MARGIN, quantifier="most",
        note="The column's best is ours (the highest mean of the runs' Test); the paper's verdict sets the same "
             "pairs of methods against each other on its numbers.",
    ),
    Claim(
        "lb-mira-best", "Batch lattice MIRA (lb-mira) is the top scoring method on Medium and Big: better than "
        "every other method of the column",
        '§5: "as we move to Medium and Big, Batch Lattice MIRA emerges as our method of choice. It is the top '
        'scoring system in all Medium settings, and in two of three Big settings (in Big Zh-En, the SVM comes '
        'first, with batch lattice MIRA placing second)"',
        "best", ("lb-mira",), None, ("medium", "big"),
        note="In the paper's Table 6 (Zh-En) Big, the SVM is ahead of lb-mira, as its text says.",
    ),
    Claim(
        "mira-variants-similar", "The MIRA variants (mira, kb-mira, lb-mira) perform similarly: each pair within "
        "0.2 BLEU in every column (equivalence)",
        '§5: "However, all of the MIRA variants perform similarly"',
        "equivalent", ("mira", "kb-mira", "lb-mira"), None, margin=PAPER_MARGIN,
    ),
    Claim(
        "lb-mira-beats-online-mira", "Batch lattice MIRA (lb-mira) outperforms online MIRA in every column",
        '§5: "It is interesting that our batch lattice variant consistently outperforms online MIRA"',
        "at_least", ("lb-mira",), "mira",
    ),
    Claim(
        "mr-within-0.2", "MR is within 0.2 BLEU of batch lattice MIRA (not below it by more than 0.2; "
        "non-inferiority)",
        _MR_QUOTE, "at_least", ("mr",), "lb-mira", margin=PAPER_MARGIN,
        note="In the paper's Table 6 (Zh-En) Medium, MR is 0.25 below lb-mira.",
    ),
    Claim(
        "mr-most-consistent", "MR is the most consistent direct optimizer: its gap to lb-mira changes less "
        "across the feature sets than PRO's and the SVM's",
        _MR_QUOTE, "consistency", ("mr",), "lb-mira", rivals=("pro", "svm"),
        note="One table has one language pair, so only the feature sets vary here. Per dev sub-sample, a "
             "method's gap to lb-mira (the paper's reference in the same sentence) in each column, and the SD "
             "of those gaps across the columns; the paired test is over the sub-samples.",
    ),
    Claim(
        "pro-sd-largest", "PRO is the least stable on Big: its runs vary more than every other method's",
        '§4.3: "The resulting standard deviations provide an indication of stability"',
        "sd_largest", ("pro",), None, ("big",),
        note="The text names no least stable method: PRO's Big SD is the largest of each of the paper's Big "
             "columns (0.24, 0.17, 0.40), a pattern of its tables, tested here as such.",
    ),
)

#: §5 sentences and earlier readings of them that a table's tests do not decide, each with the reason.
NOT_EVALUATED: tuple[tuple[str, str], ...] = (
    ('§5: "Though these systems all tend to show a fair amount of variance across language and feature sets"',
     "Not a claim about run-to-run SD: it says that the direct optimizers' standing changes between the "
     "paper's nine columns (three language pairs by three feature sets), and it names no size and no "
     "comparison to test. One table has one language pair. What a table can test of the sentence is its "
     "comparative part, MR the most consistent (claim 11), and MR within 0.2 of lb-mira (claim 10)."),
    ("Every cell's SD at most the largest SD of the paper's table",
     'Not a claim of the paper: §4.3 says only that the SDs "provide an indication of stability" and sets no '
     "bound, and SDs on our corpora are no more comparable to the paper's than its BLEU is. Each cell's SD "
     "stands beside the paper's in the last section."),
    ('§5: "our implementation of online MIRA is an order of magnitude slower"',
     "A claim about cost: the runs' costs are in the table's costs.tsv, not in its tests."),
    ('§5: "The SVM\'s performance on Big Zh-En is an intriguing outlier ... it ... also achieves the best tuning '
     'score by a large margin"',
     "The tests hold each cell's mean Tune only, not its runs' (each run is tuned on its own dev sub-sample), "
     "so there is no run-level test; and the remark is about the paper's Zh-En Big column."),
    ('§5.1: "λ affords much greater control over tuning performance than MIRA\'s C" (Figure 1)',
     "Needs the regularization sweep's runs (Figure 1), not a table's."),
)


# ------------------------------------------------------------------ run-level tests
@dataclasses.dataclass(frozen=True)
class RunTest:
    """A run-level test of one comparison (see the module docstring).

    ``p_holds``: the p of the side that puts the quantity in the claimed region, ``p_fails`` of the
    side that puts it outside, each twice a one-sided p (a one-sided test at alpha / 2 is p < alpha).
    """

    name: str
    estimate: float
    ci: tuple[float, float] | None
    n: int
    p_holds: float
    p_fails: float

    @property
    def p(self) -> float:
        """The decisive p: the smaller side's."""
        return min(self.p_holds, self.p_fails)

    @property
    def side(self) -> str:
        """The verdict the decisive p argues for."""
        return HOLDS if self.p_holds <= self.p_fails else FAILS


def paired_t(diffs: Sequence[float], lo: float, hi: float | None = None, alpha: float = 0.05) -> RunTest:
    """Paired t-test of the mean of ``diffs`` against the region (lo, hi) (hi None: above ``lo``).

    Above a bound: ``p_holds`` = 2 P(T >= t_lo), ``p_fails`` = 2 P(T <= t_lo) with t_lo = (mean - lo) / se
    (at lo = 0 the smaller is :func:`scipy.stats.ttest_rel`'s two-sided p). An interval (TOST):
    ``p_holds`` = 2 max(P(T >= t_lo), P(T <= t_hi)), ``p_fails`` = 2 min(P(T <= t_lo), P(T >= t_hi)).
    Differences that do not vary (se = 0) give p = 0 on the side of the mean, 1 on the other and at a bound.
    """
    from scipy.stats import t

    n = len(diffs)
    if n < 2:
        raise ValueError("a paired t-test needs at least 2 pairs")
    mean, df = statistics.fmean(diffs), n - 1
    se = statistics.stdev(diffs) / math.sqrt(n)

    def above(bound: float) -> float:  # one-sided p of H0: mean <= bound
        return (0.0 if mean > bound else 1.0) if se == 0 else float(t.sf((mean - bound) / se, df))

    def below(bound: float) -> float:  # one-sided p of H0: mean >= bound
        return (0.0 if mean < bound else 1.0) if se == 0 else float(t.cdf((mean - bound) / se, df))

    if hi is None:
        p_holds, p_fails = 2 * above(lo), 2 * below(lo)
    else:
        p_holds, p_fails = 2 * max(above(lo), below(hi)), 2 * min(below(lo), above(hi))
    half = float(t.ppf(1 - alpha / 2, df)) * se
    return RunTest("paired t", mean, (mean - half, mean + half), n, min(1.0, p_holds), min(1.0, p_fails))


def pitman_morgan(x: Sequence[float], y: Sequence[float]) -> RunTest:
    """Pitman-Morgan test that paired samples ``x`` and ``y`` differ in variance, the claimed side being
    var(x) > var(y): the t-test (n - 2 df) of the correlation of x + y with x - y, each side doubled.
    ``estimate``: the ratio of the SDs, x's over y's."""
    from scipy.stats import t

    n = len(x)
    if n < 3 or len(y) != n:
        raise ValueError("the Pitman-Morgan test needs at least 3 pairs")
    s = [a + b for a, b in zip(x, y)]
    d = [a - b for a, b in zip(x, y)]
    sx, sy = statistics.stdev(x), statistics.stdev(y)
    ratio = math.inf if sy == 0 else sx / sy
    ss, sd = statistics.stdev(s), statistics.stdev(d)
    if ss == 0 or sd == 0:  # x - y or x + y constant: equal variances
        return RunTest("Pitman-Morgan", ratio, None, n, 1.0, 1.0)
    r = statistics.covariance(s, d) / (ss * sd)
    if abs(r) >= 1:
        p_up, p_down = (0.0, 1.0) if r > 0 else (1.0, 0.0)
    else:
        stat = r * math.sqrt((n - 2) / (1 - r * r))
        p_up, p_down = float(t.sf(stat, n - 2)), float(t.cdf(stat, n - 2))
    return RunTest("Pitman-Morgan", ratio, None, n, min(1.0, 2 * p_up), min(1.0, 2 * p_down))


def verdict(test: RunTest | None, p_adjusted: float | None, alpha: float) -> str:
    """A comparison's verdict: its side if the (adjusted) decisive p is below ``alpha``, else inconclusive."""
    if test is None:
        return NOT_RUN
    return test.side if p_adjusted < alpha else INCONCLUSIVE


def decide_family(comparisons: Sequence, alpha: float) -> None:
    """Holm's correction over the run-level tests of ``comparisons`` (those with a ``test``; each is
    its own hypothesis), then each one's :func:`verdict`: sets their ``p_holm`` and ``verdict``."""
    tested = [c for c in comparisons if c.test is not None]
    for c, p in zip(tested, holm([c.test.p for c in tested])):
        c.p_holm = p
    for c in comparisons:
        c.verdict = verdict(c.test, c.p_holm, alpha)


def aggregate(verdicts: Sequence[str], quantifier: str) -> str:
    """A claim's verdict from its comparisons' (see the module docstring); "not run" ones do not count."""
    v = [x for x in verdicts if x in (HOLDS, FAILS, INCONCLUSIVE)]
    if not v:
        return NOT_RUN
    n, h, f = len(v), v.count(HOLDS), v.count(FAILS)
    if quantifier == "all":
        return FAILS if f else HOLDS if h == n else INCONCLUSIVE
    return HOLDS if 2 * h > n else FAILS if 2 * f >= n else INCONCLUSIVE


def _inside(x: float, lo: float, hi: float | None) -> bool:
    """A point estimate in the claimed region: a margin's bounds are included, a bound of 0 is not
    (the paper's "outperforms" is strict)."""
    x = round(x, 2)
    low = x > lo if lo == 0 else x >= round(lo, 2)
    return low and (hi is None or x <= round(hi, 2))


def _point(ok: bool) -> str:
    return HOLDS if ok else FAILS


# ------------------------------------------------------------------ the comparisons of a claim
@dataclasses.dataclass
class Comparison:
    """One comparison of a claim: ours (text, run-level test, AR p, verdict) and the paper's (text, verdict).

    ``key`` identifies the hypothesis (the same cells, kind and region are one test of the family);
    ``p_holm`` and ``verdict`` are set by :func:`evaluate`.
    """

    column: str
    label: str
    ours: str
    test: RunTest | None
    ar_p: float | None
    runs: int | None
    paper: str
    paper_verdict: str
    key: tuple | None = None
    p_holm: float | None = None
    verdict: str = NOT_RUN


@dataclasses.dataclass
class Finding:
    claim: Claim
    comparisons: list[Comparison]
    verdict: str
    paper_verdict: str
    few_runs: bool  # a comparison has fewer than 2 paired runs


def _mean(cell: CellTest) -> float:
    """A cell's score as the run-level test sees it: the mean of its runs' Test."""
    return statistics.fmean(cell.run_tests)


class _Context:
    """What the evaluation reads: our tested cells, the paper's cells."""

    def __init__(self, tests: TableTests, paper: dict[tuple[str, str], Cell]):
        self.tests, self.paper, self.alpha = tests, paper, tests.alpha

    def ours(self, m: str, fs: str) -> CellTest | None:
        return self.tests.cells.get((m, fs))

    def methods(self, fs: str) -> list[str]:
        """Our column's methods, in the table's order."""
        return [m for (m, f) in self.tests.cells if f == fs]

    def best(self, fs: str) -> str | None:
        """Our column's best: the highest mean of the runs' Test (the first of equals in row order)."""
        methods = self.methods(fs)
        return max(methods, key=lambda m: (_mean(self.ours(m, fs)), -methods.index(m))) if methods else None

    def missing(self, *cells: tuple[str, str]) -> str | None:
        """What our table lacks for a comparison (None: nothing)."""
        absent = [f"{m} {fs}" for m, fs in cells if self.ours(m, fs) is None]
        return f"{', '.join(absent)} not in our table" if absent else None

    def runs(self, *cells: tuple[str, str]) -> tuple[list[str], list[list[float]]]:
        """The sub-samples all ``cells`` have, and each cell's runs' Test on them (in that order)."""
        by_sample = [dict(zip(c.samples, c.run_tests)) for c in (self.ours(*k) for k in cells)]
        common = [s for s in by_sample[0] if all(s in b for b in by_sample[1:])]
        return common, [[b[s] for s in common] for b in by_sample]

    def paper_test(self, m: str, fs: str) -> float | None:
        cell = self.paper.get((m, fs))
        return None if cell is None else cell.test


def _name(m: str, fs: str, column: str) -> str:
    return m if fs == column else f"{m} {fs}"


def _ci(test: RunTest) -> str:
    return f"{test.estimate:+.2f} [{test.ci[0]:+.2f}, {test.ci[1]:+.2f}]"


def _few(column: str, label: str, n: int, paper: str, paper_verdict: str, ar_p: float | None) -> Comparison:
    return Comparison(column, label, f"{n} paired run{'s' if n != 1 else ''}: no run-level test", None, ar_p, n,
                      paper, paper_verdict)


def _difference(ctx: _Context, column: str, a: tuple[str, str], b: tuple[str, str], lo: float,
                hi: float | None) -> Comparison:
    """A - B, run by run, against the region (lo, hi): ours, the paper's, the AR p of a within-column pair."""
    label = f"{_name(*a, column)} vs {_name(*b, column)}"
    pa, pb = ctx.paper_test(*a), ctx.paper_test(*b)
    if pa is None or pb is None:
        paper, paper_verdict = "-", "-"
    else:
        paper, paper_verdict = f"{pa:.2f} vs {pb:.2f} ({pa - pb:+.2f})", _point(_inside(pa - pb, lo, hi))
    missing = ctx.missing(a, b)
    if missing:
        return Comparison(column, label, missing, None, None, None, paper, paper_verdict)
    ar_p = ctx.tests.p(a[1], a[0], b[0]) if a[1] == b[1] else None
    samples, (ra, rb) = ctx.runs(a, b)
    if len(samples) < 2:
        return _few(column, label, len(samples), paper, paper_verdict, ar_p)
    test = paired_t([x - y for x, y in zip(ra, rb)], lo, hi, ctx.alpha)
    ours = f"{statistics.fmean(ra):.2f} vs {statistics.fmean(rb):.2f}: {_ci(test)}"
    # an equivalence is symmetric: A against B and B against A are one test
    key = ("difference", *(sorted((a, b)) if hi is not None and hi == -lo else (a, b)), lo, hi)
    return Comparison(column, label, ours, test, ar_p, len(samples), paper, paper_verdict, key)


def _region(claim: Claim) -> tuple[float, float | None]:
    if claim.kind in ("equivalent", "mean_gain"):
        return claim.target - claim.margin, claim.target + claim.margin
    return -claim.margin, None


def _at_least(claim: Claim, ctx: _Context) -> list[Comparison]:
    lo, hi = _region(claim)
    out = []
    for fs in claim.columns:
        b = (claim.other, claim.other_column or fs)
        methods = claim.methods or [m for m in dict.fromkeys(ctx.methods(fs) + [m for m, f in ctx.paper if f == fs])
                                    if (m, fs) != b]
        out += [_difference(ctx, fs, (a, fs), b, lo, hi) for a in methods]
    return out


def _best(claim: Claim, ctx: _Context) -> list[Comparison]:
    (a,) = claim.methods
    out = []
    for fs in claim.columns:
        others = [m for m in dict.fromkeys(ctx.methods(fs) + [m for m, f in ctx.paper if f == fs]) if m != a]
        out += [_difference(ctx, fs, (a, fs), (o, fs), 0.0, None) for o in others]
    return out


def _equivalent(claim: Claim, ctx: _Context) -> list[Comparison]:
    lo, hi = _region(claim)
    out = []
    for fs in claim.columns:
        if claim.other == COLUMN_BEST:
            best = ctx.best(fs)
            if best is None:
                continue
            pairs = [(m, best) for m in ctx.methods(fs) if m != best]
        else:
            pairs = [(x, y) for i, x in enumerate(claim.methods) for y in claim.methods[i + 1:]]
        out += [_difference(ctx, fs, (x, fs), (y, fs), lo, hi) for x, y in pairs]
    return out


def _mean_gain(claim: Claim, ctx: _Context) -> list[Comparison]:
    lo, hi = _region(claim)
    out = []
    for fs in claim.columns:
        b = (claim.other, claim.other_column or fs)
        methods = [m for m in (claim.methods or ctx.methods(fs)) if ctx.ours(m, fs) is not None and (m, fs) != b]
        label = f"mean of {len(methods)} {fs} methods vs {_name(*b, fs)}"
        paper_methods = [m for m in methods if ctx.paper_test(m, fs) is not None]
        if paper_methods and ctx.paper_test(*b) is not None:
            gain = statistics.fmean(ctx.paper_test(m, fs) for m in paper_methods) - ctx.paper_test(*b)
            paper = f"mean gain {gain:+.2f} ({len(paper_methods)} methods)"
            paper_verdict = _point(_inside(gain, lo, hi))
        else:
            paper, paper_verdict = "-", "-"
        missing = ctx.missing(b) or (None if methods else f"no {fs} methods in our table")
        if missing:
            out.append(Comparison(fs, label, missing, None, None, None, paper, paper_verdict))
            continue
        samples, runs = ctx.runs(b, *((m, fs) for m in methods))
        if len(samples) < 2:
            out.append(_few(fs, label, len(samples), paper, paper_verdict, None))
            continue
        gains = [statistics.fmean(r[i] for r in runs[1:]) - runs[0][i] for i in range(len(samples))]
        test = paired_t(gains, lo, hi, ctx.alpha)
        ours = f"mean gain {_ci(test)} ({', '.join(methods)})"
        out.append(Comparison(fs, label, ours, test, None, len(samples), paper, paper_verdict,
                              ("mean_gain", tuple(methods), b, lo, hi)))
    return out


def _bulk(claim: Claim, ctx: _Context) -> list[Comparison]:
    medium, big = claim.columns
    b = (claim.other, claim.other_column)
    out = []
    for a in claim.methods:
        label = f"{a}: medium vs midpoint of {_name(*b, '')} and big"
        pm, pg, pb = ctx.paper_test(a, medium), ctx.paper_test(a, big), ctx.paper_test(*b)
        if None in (pm, pg, pb):
            paper, paper_verdict = "-", "-"
        else:
            c = pm - (pg + pb) / 2
            paper = f"medium gain {pm - pb:+.2f} of big gain {pg - pb:+.2f} ({c:+.2f})"
            paper_verdict = _point(_inside(c, 0.0, None))
        missing = ctx.missing((a, medium), (a, big), b)
        if missing:
            out.append(Comparison(medium, label, missing, None, None, None, paper, paper_verdict))
            continue
        samples, (rm, rg, rb) = ctx.runs((a, medium), (a, big), b)
        if len(samples) < 2:
            out.append(_few(medium, label, len(samples), paper, paper_verdict, None))
            continue
        test = paired_t([m - (g + k) / 2 for m, g, k in zip(rm, rg, rb)], 0.0, None, ctx.alpha)
        mm, mg, mb = (statistics.fmean(r) for r in (rm, rg, rb))
        ours = f"medium gain {mm - mb:+.2f} of big gain {mg - mb:+.2f}; Medium - midpoint {_ci(test)}"
        out.append(Comparison(medium, label, ours, test, None, len(samples), paper, paper_verdict,
                              ("bulk", a, medium, big, b)))
    return out


def _spread(gaps: Sequence[float]) -> float:
    return statistics.stdev(gaps)


def _consistency(claim: Claim, ctx: _Context) -> list[Comparison]:
    (a,) = claim.methods
    ref = claim.other
    out = []
    for rival in claim.rivals:
        label = f"{a} vs {rival}: SD of the gap to {ref} across the columns"
        paper_cols = [fs for fs in claim.columns
                      if all(ctx.paper_test(m, fs) is not None for m in (a, rival, ref))]
        if len(paper_cols) >= 2:
            sa, sr = (_spread([ctx.paper_test(m, fs) - ctx.paper_test(ref, fs) for fs in paper_cols])
                      for m in (a, rival))
            paper, paper_verdict = f"{a} {sa:.2f} vs {rival} {sr:.2f} ({len(paper_cols)} columns)", _point(sr > sa)
        else:
            paper, paper_verdict = "-", "-"
        cols = [fs for fs in claim.columns if not ctx.missing((a, fs), (rival, fs), (ref, fs))]
        if len(cols) < 2:
            out.append(Comparison("all", label, f"{a}, {rival} and {ref} in fewer than 2 of our columns", None,
                                  None, None, paper, paper_verdict))
            continue
        cells = [(m, fs) for fs in cols for m in (a, rival, ref)]
        samples, runs = ctx.runs(*cells)
        if len(samples) < 2:
            out.append(_few("all", label, len(samples), paper, paper_verdict, None))
            continue
        run = dict(zip(cells, runs))

        def spread(m: str, i: int) -> float:
            return _spread([run[(m, fs)][i] - run[(ref, fs)][i] for fs in cols])

        sa = [spread(a, i) for i in range(len(samples))]
        sr = [spread(rival, i) for i in range(len(samples))]
        test = paired_t([r - x for r, x in zip(sr, sa)], 0.0, None, ctx.alpha)
        ours = (f"{a} {statistics.fmean(sa):.2f} vs {rival} {statistics.fmean(sr):.2f} (mean over sub-samples, "
                f"{len(cols)} columns); {rival} - {a} {_ci(test)}")
        out.append(Comparison("all", label, ours, test, None, len(samples), paper, paper_verdict,
                              ("consistency", a, rival, ref, tuple(cols))))
    return out


def _sd_largest(claim: Claim, ctx: _Context) -> list[Comparison]:
    (a,) = claim.methods
    out = []
    for fs in claim.columns:
        others = [m for m in dict.fromkeys(ctx.methods(fs) + [m for m, f in ctx.paper if f == fs]) if m != a]
        for o in others:
            label = f"{a} vs {o}"
            pa, po = ctx.paper.get((a, fs)), ctx.paper.get((o, fs))
            if pa is None or po is None or pa.sd is None or po.sd is None:
                paper, paper_verdict = "-", "-"
            else:
                paper, paper_verdict = f"SD {pa.sd:.2f} vs {po.sd:.2f}", _point(pa.sd > po.sd)
            missing = ctx.missing((a, fs), (o, fs))
            if missing:
                out.append(Comparison(fs, label, missing, None, None, None, paper, paper_verdict))
                continue
            samples, (ra, ro) = ctx.runs((a, fs), (o, fs))
            if len(samples) < 3:
                out.append(Comparison(fs, label, f"{len(samples)} paired runs: no run-level test of SDs (needs 3)",
                                      None, None, len(samples), paper, paper_verdict))
                continue
            test = pitman_morgan(ra, ro)
            ours = f"SD {statistics.stdev(ra):.2f} vs {statistics.stdev(ro):.2f} (ratio {test.estimate:.2f})"
            out.append(Comparison(fs, label, ours, test, None, len(samples), paper, paper_verdict,
                                  ("sd", (a, fs), (o, fs))))
    return out


_EVALUATE = {
    "at_least": _at_least,
    "best": _best,
    "equivalent": _equivalent,
    "mean_gain": _mean_gain,
    "bulk": _bulk,
    "consistency": _consistency,
    "sd_largest": _sd_largest,
}


def evaluate(
    tests: TableTests, paper: dict[tuple[str, str], Cell], claims: tuple[Claim, ...] = CLAIMS
) -> list[Finding]:
    """Every claim decided on our tested table and on the paper's numbers (see the module docstring).

    The run-level tests of all the claims' comparisons are one family, Holm-adjusted together.
    """
    ctx = _Context(tests, paper)
    per_claim = [(claim, _EVALUATE[claim.kind](claim, ctx)) for claim in claims]
    family: dict[tuple, float] = {}
    for _, comparisons in per_claim:
        for c in comparisons:
            if c.test is not None:
                family.setdefault(c.key, c.test.p)
    adjusted = dict(zip(family, holm(list(family.values()))))
    findings = []
    for claim, comparisons in per_claim:
        for c in comparisons:
            if c.test is not None:
                c.p_holm = adjusted[c.key]
            c.verdict = verdict(c.test, c.p_holm, ctx.alpha)
        findings.append(Finding(
            claim, comparisons, aggregate([c.verdict for c in comparisons], claim.quantifier),
            aggregate([c.paper_verdict for c in comparisons if c.paper_verdict != "-"], claim.quantifier),
            any(c.runs is not None and c.runs < 2 for c in comparisons)))
    return findings


def family_size(findings: list[Finding]) -> int:
    """How many tests Holm's correction is over."""
    return len({c.key for f in findings for c in f.comparisons if c.test is not None})


def marks_against_runs(tests: TableTests) -> list[dict[str, str]]:
    """Each cell against its column's best: the sentence-level AR p beside the run-level paired t p.

    The best here is the table's (the highest Test, which is the mean of the runs' Test); a row per
    cell that is not its column's best and has at least 2 runs paired with the best's.
    """
    ctx = _Context(tests, {})
    rows = []
    for fs in dict.fromkeys(f for _, f in tests.cells):
        best = ctx.best(fs)
        for m in ctx.methods(fs):
            if m == best:
                continue
            samples, (ra, rb) = ctx.runs((m, fs), (best, fs))
            ar = tests.p(fs, m, best)
            if len(samples) < 2 or ar is None:
                continue
            t = paired_t([x - y for x, y in zip(ra, rb)], 0.0, None, tests.alpha)
            rows.append({"feature_set": fs, "method": m, "best": best, "diff": f"{t.estimate:+.2f}",
                         "ar_p": format_p(ar, tests.alpha), "ar_sig": "yes" if ar < tests.alpha else "no",
                         "t_p": format_p(t.p, tests.alpha), "t_sig": "yes" if t.p < tests.alpha else "no"})
    return rows


# ------------------------------------------------------------------ the Markdown file
FEW_RUNS = ("**fewer than 2 paired runs: no run-level test, so no verdict; a sentence-level p (AR) ignores the "
            "optimizer's instability and decides nothing**")


def _cell_text(text: str) -> str:
    return text.replace("|", "\\|")


def _fmt_p(p: float | None, alpha: float) -> str:
    return "-" if p is None else format_p(p, alpha)


def format_findings(
    findings: list[Finding],
    title: str,
    paper: str,
    tests: TableTests,
    ours: dict[tuple[str, str], Cell],
    paper_cells: dict[tuple[str, str], Cell],
) -> str:
    """``results/<table>_findings.md``: each claim's verdict, where the paper says it, what is not evaluated,
    each comparison with its tests, the table's marks against the run-level test, the rules, each cell vs
    the paper's."""
    runs = sorted({c.runs for c in tests.cells.values()})
    alpha = tests.alpha
    m = family_size(findings)
    text = f"# {title}: the findings of Cherry & Foster (2012), §5, evaluated\n\n"
    text += (f"Our numbers are the table's (Test = BLEU averaged over the test sets and the runs; SD across the runs), "
             f"set against the paper's {paper}. Each comparison is decided by a run-level test over the dev "
             f"sub-samples (runs of two cells paired by sub-sample; a paired t-test, Pitman-Morgan for SDs), each "
             f"side at alpha / 2 = {alpha / 2:g}, with Holm's correction over the {m} tests of this file. "
             "Verdicts: **holds** (the claimed side is significant), **does not hold** (the other side is), "
             "**inconclusive** (neither). Estimates are given with their 95% confidence interval in brackets. "
             f"Beside it, the sentence-level approximate randomization p of the table's marks (`{tests.signature}`), "
             "which decides nothing here. The paper's own numbers are judged on their point estimates (it reports "
             f"no test). Runs per cell: {', '.join(map(str, runs))}.\n\n")
    if runs and runs[0] < 2:
        text += f"Some cells have fewer than 2 runs: {FEW_RUNS}.\n\n"
    text += "## Claims\n\n| # | claim | ours | verdict | paper | paper's verdict |\n|---|---|---|---|---|---|\n"
    for i, f in enumerate(findings, 1):
        parts = []
        for c in f.comparisons:
            if c.test is None:
                parts.append(f"{c.column}: {c.label}: {c.ours} [{c.verdict}]")
            elif c.test.name == "Pitman-Morgan":
                parts.append(f"{c.column}: {c.label} SD ratio {c.test.estimate:.2f} [{c.verdict}]")
            else:
                parts.append(f"{c.column}: {c.label} {c.test.estimate:+.2f} [{c.verdict}]")
        ours_text = "; ".join(dict.fromkeys(parts))
        if f.few_runs:
            ours_text += f" ({FEW_RUNS})"
        counts = _counts(f)
        paper_text = "; ".join(f"{c.column}: {c.label} {c.paper}" for c in f.comparisons if c.paper != "-") or "-"
        text += (f"| {i} | {_cell_text(f.claim.text)} | {_cell_text(counts + ours_text)} | **{f.verdict}** | "
                 f"{_cell_text(paper_text)} | {f.paper_verdict} |\n")
    text += "\n## Where the paper says it\n\n"
    for i, f in enumerate(findings, 1):
        text += f"{i}. {f.claim.quote}." + (f" {f.claim.note}" if f.claim.note else "") + "\n"
    text += "\n## Not evaluated here\n\n"
    text += "".join(f"- {what}: {why}\n" for what, why in NOT_EVALUATED)
    text += ("\n## Each comparison\n\nEstimate: the claim's quantity, ours with its 95% interval (a difference in "
             "BLEU, A minus B, run by run; for SDs, the ratio of the two). t p: the run-level test's decisive p "
             "(the smaller side); Holm p: adjusted over the file's tests; AR p: the table's sentence-level test of "
             "the same two cells (within a column only), of a zero difference.\n\n"
             "| # | column | comparison | ours | runs | test | p | Holm p | AR p | verdict | paper | "
             "paper's verdict |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for i, f in enumerate(findings, 1):
        for c in f.comparisons:
            test = "-" if c.test is None else c.test.name
            text += (f"| {i} | {c.column} | {_cell_text(c.label)} | {_cell_text(c.ours)} | "
                     f"{'-' if c.runs is None else c.runs} | {test} | {_fmt_p(c.test and c.test.p, alpha)} | "
                     f"{_fmt_p(c.p_holm, alpha)} | {_fmt_p(c.ar_p, alpha)} | {c.verdict} | {_cell_text(c.paper)} | "
                     f"{c.paper_verdict} |\n")
    text += _marks_section(tests)
    text += "\n## How the verdicts are decided\n\n" + _RULES.format(alpha=alpha, half=alpha / 2, margin=PAPER_MARGIN)
    text += "\n## Each cell next to the paper's\n\n"
    text += ("Differences are to each table's Medium kb-mert Test (the paper's baseline, §5); rank = place by Test "
             "within the column.\n\n")
    rows = compare(ours, paper_cells)
    header = ["method", "feature set", "Test", "SD", "vs Medium kb-mert", "rank", "paper Test", "paper SD",
              "paper vs Medium kb-mert", "paper rank"]
    keys = ["method", "feature_set", "test", "sd", "test_vs_medium_kb_mert", "rank", "paper_test", "paper_sd",
            "paper_test_vs_medium_kb_mert", "paper_rank"]
    text += "| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n"
    text += "".join("| " + " | ".join(r[k] for k in keys) + " |\n" for r in rows)
    if BASELINE not in ours:
        text += "\n(Our table has no Medium kb-mert: no differences to it.)\n"
    return text


def _counts(f: Finding) -> str:
    v = [c.verdict for c in f.comparisons if c.verdict != NOT_RUN]
    if len(f.comparisons) < 2 or not v:
        return ""
    parts = [f"{v.count(x)} {x}" for x in (HOLDS, FAILS, INCONCLUSIVE) if v.count(x)]
    return f"{len(v)} comparisons: {', '.join(parts)}. "


def _marks_section(tests: TableTests) -> str:
    rows = marks_against_runs(tests)
    if not rows:
        return ""
    agree = sum(r["ar_sig"] == r["t_sig"] for r in rows)
    text = ("\n## The sentence-level test against the run-level test\n\n"
            "Each cell against its column's best (the highest mean of the runs' Test), both unadjusted: the "
            "sentence-level AR p, which pools the runs' test sentences, beside the paired t-test over the "
            "sub-samples (the table's marks use the latter, Holm-adjusted over the table's cells: its companion). "
            f"Significant at alpha by both or by neither on {agree} of {len(rows)} cells.\n\n"
            "| feature set | method | best | Δ | AR p | AR significant | paired t p | t significant |\n"
            "|---|---|---|---|---|---|---|---|\n")
    text += "".join(f"| {r['feature_set']} | {r['method']} | {r['best']} | {r['diff']} | {r['ar_p']} | {r['ar_sig']} | "
                    f"{r['t_p']} | {r['t_sig']} |\n" for r in rows)
    return text


_RULES = """\
- Every comparison tests a quantity Δ against a claimed region, with a test over the dev sub-samples
  (the runs of two cells paired by sub-sample): a paired t-test for differences of Test, the
  Pitman-Morgan test for SDs. Each side is a one-sided test at {half:g}: **holds** if Δ is
  significantly inside the region, **does not hold** if significantly outside, **inconclusive** if
  neither (the 95% interval straddles the boundary). A point estimate on the claimed side with a large
  p is inconclusive, never "holds".
- *Outperforms*, *top scoring* (margin 0): Δ = A - B > 0; the decisive p is the two-sided paired t p.
  The paper gives no margin for these, so "at least as good" is a superiority test.
- *Within {margin:g}* (non-inferiority): Δ > -{margin:g}, the test against -{margin:g}, not against 0.
- *Indistinguishable*, *perform similarly*, *about 0.4* (equivalence, TOST): -{margin:g} < Δ - target < +{margin:g};
  holds if both one-sided tests pass, does not hold if Δ is significantly beyond either bound.
- *Bulk on Medium*: Δ = A's Medium Test minus the midpoint of Medium kb-mert and A's Big Test > 0.
- *Most consistent*: per sub-sample, the SD across the columns of a method's gap to lb-mira; Δ = the
  rival's minus MR's > 0.
- *Least stable*: A's runs' variance larger than B's (Pitman-Morgan: the correlation of A + B with A - B).
- Holm's correction over all the tests of this file (a test shared by two claims counts once): a
  verdict other than inconclusive needs a Holm-adjusted p < {alpha}.
- A claim over *all* its comparisons holds if every one holds and does not hold if any does not; over
  *most*, it holds if more than half hold and does not hold if at least half do not; otherwise it is
  inconclusive. Comparisons of cells not in our table, or with fewer than 2 paired runs, are "not
  run" and do not count.
- The column's best is the highest mean of the runs' Test, the statistic the paired test is about.
"""
