"""The headline claims of Cherry & Foster (2012), §5, as data, evaluated on our tables.

Each :class:`Claim` names the methods it is about with the paper's names, the columns (feature sets)
it covers and how it is decided (``kind``); :data:`CLAIMS` holds them once, next to the paper's own
numbers (:func:`smtlib.report.paper.paper_table`). :func:`evaluate` decides every claim on a table's
tests (:func:`smtlib.report.paper.read_tests`: the table's cells with their runs, and the p-values of
the stratified approximate randomization test over the runs, :mod:`smtlib.report.significance`), and
on the paper's numbers (point estimates only: the paper reports no test). :func:`format_findings`
writes the Markdown of ``results/<table>_findings.md``.

Verdicts (``alpha`` = 0.05, the table's marks' level):

``at_least`` (A is at least as good as B in each column)
    **holds** if our A's Test >= B's; **not significant** if A is below B but not significantly
    (p >= alpha: tied by the test); **does not hold** if A is significantly below B.
``best`` (A is the best method of the column, or tied with it)
    **holds** if A has the column's highest Test (the line gives p against the runner-up);
    otherwise ``at_least`` against the column's best.
``within`` (A is not below B by more than ``margin`` BLEU)
    **holds** if A - B >= -margin; otherwise **does not hold** if the difference is significant,
    **not significant** if it is not. (The test is of a zero difference: a significant difference
    larger than the margin is taken to be one that exceeds it.)
``sd_largest`` (A's SD is the largest of the column)
    **holds** if it is; otherwise, against the method with the largest SD, **not significant** if a
    two-sided F-test of the two variances (the runs' Test, n - 1 each) gives p >= alpha, **does not
    hold** if p < alpha.
``sd_greater`` (the methods A vary more than B)
    The runs' variance pooled over the cells (sum of squared deviations from each cell's mean over the
    sum of n - 1), A's methods against B, with a two-sided F-test: **holds** if A's is larger and
    p < alpha, **does not hold** if smaller and p < alpha, **not significant** otherwise.
``sd_at_most`` (no cell's SD exceeds the largest SD of the paper's table)
    **holds** if none does; otherwise, for the cell least likely under sigma <= bound (a one-sided
    chi-square test of (n - 1) s^2 / bound^2), **does not hold** if p < alpha, else **not significant**.

A claim's verdict is that of its worst comparison (does not hold > not significant > holds); a
comparison whose cells are not in our table is "not run". With fewer than 2 runs per cell the
p-values are across test sentences only and the SDs undefined: the file says so on every line
that uses such cells, and the SD claims are not evaluated.
"""

from __future__ import annotations

import dataclasses
import math
import statistics

from smtlib.report.paper import BASELINE, Cell, TableTests, compare
from smtlib.report.significance import format_p

HOLDS, FAILS, NOT_SIGNIFICANT, NOT_RUN = "holds", "does not hold", "not significant", "not run"
ALL_COLUMNS = ("small", "medium", "big")
KINDS = ("at_least", "best", "within", "sd_largest", "sd_greater", "sd_at_most")


@dataclasses.dataclass(frozen=True)
class Claim:
    """One headline claim of the paper (see the module docstring for ``kind``).

    Attributes
    ----------
    key
        Short identifier.
    text
        The claim, in our words, as it is tested.
    quote
        Where the paper says it (its words).
    kind
        How it is decided: one of :data:`KINDS`.
    methods
        The methods the claim is about (A), with the paper's names.
    other
        The method they are set against (B), if any.
    columns
        The feature sets it covers.
    margin
        BLEU margin of ``within``.
    note
        What the reader should know (where the paper's own numbers differ from its words).
    """

    key: str
    text: str
    quote: str
    kind: str
    methods: tuple[str, ...] = ()
    other: str | None = None
    columns: tuple[str, ...] = ALL_COLUMNS
    margin: float = 0.0
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown claim kind {self.kind!r}")


#: Cherry & Foster (2012), §5's headline claims, in the order of the text.
CLAIMS: tuple[Claim, ...] = (
    Claim(
        "mira-vs-kb-mert", "The MIRA variants (mira, kb-mira, lb-mira) are at least as good as kb-mert on Medium",
        '§5: "The important baseline when assessing the utility of a method is Medium k-best MERT ... most '
        'methods achieve the bulk of this improvement on the Medium feature set. This indicates that MERT '
        'begins to show some problems even in an 18-feature setting"',
        "at_least", ("mira", "kb-mira", "lb-mira"), "kb-mert", ("medium",),
    ),
    Claim(
        "lb-mira-best", "Batch lattice MIRA (lb-mira) is the best method, or tied with the best, on Medium and Big",
        '§5: "as we move to Medium and Big, Batch Lattice MIRA emerges as our method of choice. It is the top '
        'scoring system in all Medium settings, and in two of three Big settings"',
        "best", ("lb-mira",), None, ("medium", "big"),
        note="In the paper's Table 6 (Zh-En) Big, the SVM is ahead of lb-mira.",
    ),
    Claim(
        "batch-vs-online-mira", "Batch MIRA (kb-mira, lb-mira) is at least as good as online MIRA",
        '§5: "all of the MIRA variants perform similarly ... It is interesting that our batch lattice '
        'variant consistently outperforms online MIRA"',
        "at_least", ("kb-mira", "lb-mira"), "mira",
        note="The paper says this of lb-mira; its own Tables 5 and 6 put kb-mira below online MIRA in three "
             "columns (En-Fr Medium, Zh-En Small and Medium).",
    ),
    Claim(
        "mr-within-0.2", "MR is within 0.2 BLEU of batch lattice MIRA (not below it by more than 0.2)",
        '§5: "MR performs the most consistently, and is always within 0.2 of batch lattice MIRA"',
        "within", ("mr",), "lb-mira", margin=0.2,
        note="In the paper's Table 6 (Zh-En) Medium, MR is 0.25 below lb-mira.",
    ),
    Claim(
        "pro-sd-largest", "PRO is the least stable: its SD is the largest of the Big column",
        '§5: "Though these systems [PRO, MR, SVM] all tend to show a fair amount of variance"; PRO\'s Big SD '
        "in Tables 4-6 (0.24, 0.17, 0.40) is the largest of each Big column",
        "sd_largest", ("pro",), None, ("big",),
    ),
    Claim(
        "direct-optimizers-vary", "The direct optimizers (PRO, MR, SVM) vary more than batch lattice MIRA "
        "(runs' variance pooled over the columns)",
        '§5: "Though these systems all tend to show a fair amount of variance across language and feature sets '
        '(likely due to their use of sentence-level BLEU)"',
        "sd_greater", ("pro", "mr", "svm"), "lb-mira",
    ),
    Claim(
        "sds-small", "Tuning is stable across dev sub-samples: no cell's SD exceeds the largest SD of the "
        "paper's table",
        '§4.3: "The resulting standard deviations provide an indication of stability"; §5: "The SD column '
        'reports the standard deviation of the average test score across the 5 sub-samples"',
        "sd_at_most",
    ),
)


@dataclasses.dataclass
class Comparison:
    """One comparison of a claim: ours (text, p, runs, verdict) and the paper's (text, verdict)."""

    column: str
    ours: str
    p: float | None
    runs: int | None
    verdict: str
    paper: str
    paper_verdict: str


@dataclasses.dataclass
class Finding:
    claim: Claim
    comparisons: list[Comparison]
    verdict: str
    paper_verdict: str
    few_runs: bool  # a comparison uses cells with fewer than 2 runs


# ------------------------------------------------------------------ statistics of the SD claims
def f_test(var_a: float, df_a: int, var_b: float, df_b: int) -> float:
    """Two-sided p of the F-test that two normal samples' variances are equal."""
    from scipy.stats import f

    if var_a == var_b:
        return 1.0
    if var_b == 0 or var_a == 0:
        return 0.0
    ratio = var_a / var_b
    return float(min(1.0, 2 * min(f.sf(ratio, df_a, df_b), f.cdf(ratio, df_a, df_b))))


def chi2_exceeds(sd: float, runs: int, bound: float) -> float:
    """One-sided p of the chi-square test of sigma <= bound against sigma > bound, from ``runs`` runs' SD."""
    from scipy.stats import chi2

    return float(chi2.sf((runs - 1) * sd * sd / (bound * bound), runs - 1))


# ------------------------------------------------------------------ verdicts
def _at_least(diff: float, p: float | None, alpha: float, margin: float = 0.0) -> str:
    if diff >= -margin:
        return HOLDS
    return NOT_SIGNIFICANT if p is None or p >= alpha else FAILS


def _point(ok: bool) -> str:
    return HOLDS if ok else FAILS


def _p(p: float | None, alpha: float) -> str:
    if p is None:
        return "-"
    text = format_p(p, alpha)
    return f"p {text[0]} {text[1:]}" if text.startswith("<") else f"p = {text}"


def _worst(verdicts: list[str]) -> str:
    for v in (FAILS, NOT_SIGNIFICANT, HOLDS):
        if v in verdicts:
            return v
    return NOT_RUN


class _Context:
    """What the evaluation reads: our tested cells, the paper's cells."""

    def __init__(self, tests: TableTests, paper: dict[tuple[str, str], Cell]):
        self.tests, self.paper, self.alpha = tests, paper, tests.alpha

    def ours(self, m: str, fs: str):
        return self.tests.cells.get((m, fs))

    def column(self, fs: str) -> dict:
        return {m: c for (m, f), c in self.tests.cells.items() if f == fs}

    def paper_column(self, fs: str) -> dict:
        return {m: c for (m, f), c in self.paper.items() if f == fs}

    def missing(self, fs: str, *methods: str) -> str | None:
        """What our table lacks for a comparison in column ``fs`` (None: nothing)."""
        absent = [m for m in methods if self.ours(m, fs) is None]
        return f"{', '.join(absent)} not in our {fs} column" if absent else None

    def paper_pair(self, fs: str, a: str, b: str | None = None) -> str:
        pa = self.paper.get((a, fs))
        pb = self.paper.get((b, fs)) if b else None
        if pa is None or (b and pb is None):
            return "-"
        if pb is None:
            return f"{a} {pa.test:.2f}"
        return f"{a} {pa.test:.2f} vs {b} {pb.test:.2f} ({pa.test - pb.test:+.2f})"


def _pair_comparisons(claim: Claim, ctx: _Context) -> list[Comparison]:
    """``at_least`` and ``within``: each method against ``other`` in each column."""
    out = []
    for fs in claim.columns:
        for a in claim.methods:
            pa, pb = ctx.paper.get((a, fs)), ctx.paper.get((claim.other, fs))
            paper = ctx.paper_pair(fs, a, claim.other)
            paper_verdict = "-" if pa is None or pb is None else _point(round(pa.test - pb.test, 2) >= -claim.margin)
            missing = ctx.missing(fs, a, claim.other)
            if missing:
                out.append(Comparison(fs, missing, None, None, NOT_RUN, paper, paper_verdict))
                continue
            ca, cb = ctx.ours(a, fs), ctx.ours(claim.other, fs)
            diff, p = ca.test - cb.test, ctx.tests.p(fs, a, claim.other)
            out.append(Comparison(
                fs, f"{a} {ca.test:.2f} vs {claim.other} {cb.test:.2f} ({diff:+.2f}, {_p(p, ctx.alpha)})", p, ca.runs,
                _at_least(diff, p, ctx.alpha, claim.margin), paper, paper_verdict))
    return out


def _best_comparisons(claim: Claim, ctx: _Context) -> list[Comparison]:
    out = []
    for fs in claim.columns:
        (a,) = claim.methods
        col, ca = ctx.column(fs), ctx.ours(a, fs)
        pcol = ctx.paper_column(fs)
        if pcol and a in pcol:
            pbest = max(pcol, key=lambda m: pcol[m].test)
            paper = (f"{a} {pcol[a].test:.2f} is the best" if pcol[a].test >= pcol[pbest].test
                     else f"{a} {pcol[a].test:.2f} vs best {pbest} {pcol[pbest].test:.2f} "
                          f"({pcol[a].test - pcol[pbest].test:+.2f})")
            paper_verdict = _point(pcol[a].test >= pcol[pbest].test)
        else:
            paper, paper_verdict = "-", "-"
        missing = ctx.missing(fs, a)
        if missing:
            out.append(Comparison(fs, missing, None, None, NOT_RUN, paper, paper_verdict))
            continue
        if ca.best:
            others = sorted((m for m in col if m != a), key=lambda m: -col[m].test)
            if others:
                p = ctx.tests.p(fs, a, others[0])
                text = (f"{a} {ca.test:.2f} is the best (runner-up {others[0]} {col[others[0]].test:.2f}, "
                        f"{ca.test - col[others[0]].test:+.2f}, {_p(p, ctx.alpha)})")
            else:
                p, text = None, f"{a} {ca.test:.2f} is the only method"
            out.append(Comparison(fs, text, p, ca.runs, HOLDS, paper, paper_verdict))
            continue
        best = next(m for m, c in col.items() if c.best)
        diff, p = ca.test - col[best].test, ca.p_vs_best
        text = f"{a} {ca.test:.2f} vs best {best} {col[best].test:.2f} ({diff:+.2f}, {_p(p, ctx.alpha)})"
        out.append(Comparison(fs, text, p, ca.runs, _at_least(diff, p, ctx.alpha), paper, paper_verdict))
    return out


def _sd_undefined(fs: str, cells) -> Comparison | None:
    few = [m for m, c in cells.items() if c.runs < 2]
    if not few:
        return None
    return Comparison(fs, f"not evaluated: SD undefined with fewer than 2 runs ({', '.join(few)})", None,
                      min(c.runs for c in cells.values()), NOT_RUN, "-", "-")


def _sd_largest_comparisons(claim: Claim, ctx: _Context) -> list[Comparison]:
    out = []
    for fs in claim.columns:
        (a,) = claim.methods
        col = ctx.column(fs)
        missing = ctx.missing(fs, a)
        undefined = (Comparison(fs, missing, None, None, NOT_RUN, "-", "-") if missing
                     else _sd_undefined(fs, col))
        pcol = {m: c for m, c in ctx.paper_column(fs).items() if c.sd is not None}
        if a in pcol and len(pcol) > 1:
            prival = max((m for m in pcol if m != a), key=lambda m: pcol[m].sd)
            paper = f"{a} SD {pcol[a].sd:.2f} vs largest other {prival} {pcol[prival].sd:.2f}"
            paper_verdict = _point(pcol[a].sd >= pcol[prival].sd)
        else:
            paper, paper_verdict = "-", "-"
        if undefined:
            undefined.paper, undefined.paper_verdict = paper, paper_verdict
            out.append(undefined)
            continue
        ca = col[a]
        others = {m: c for m, c in col.items() if m != a}
        if not others:
            out.append(Comparison(fs, f"{a} is the only method", None, ca.runs, NOT_RUN, paper, paper_verdict))
            continue
        rival = max(others, key=lambda m: others[m].sd)
        cr = others[rival]
        p = f_test(ca.sd ** 2, ca.runs - 1, cr.sd ** 2, cr.runs - 1)
        verdict = HOLDS if ca.sd >= cr.sd else (NOT_SIGNIFICANT if p >= ctx.alpha else FAILS)
        text = f"{a} SD {ca.sd:.2f} vs largest other {rival} {cr.sd:.2f} (F-test {_p(p, ctx.alpha)})"
        out.append(Comparison(fs, text, p, ca.runs, verdict, paper, paper_verdict))
    return out


def _pooled(cells) -> tuple[float, int]:
    """Pooled variance and its degrees of freedom of cells' runs (each around its own mean)."""
    ss = sum(statistics.variance(c.run_tests) * (c.runs - 1) for c in cells)
    df = sum(c.runs - 1 for c in cells)
    return ss / df, df


def _sd_greater_comparisons(claim: Claim, ctx: _Context) -> list[Comparison]:
    keys_a = [(m, fs) for m in claim.methods for fs in claim.columns if ctx.ours(m, fs) is not None]
    keys_b = [(claim.other, fs) for fs in claim.columns if ctx.ours(claim.other, fs) is not None]
    # the paper's cells: the same as ours where we have both sides, else all the claim's cells
    paper_a = [k for k in keys_a if k in ctx.paper]
    paper_b = [k for k in keys_b if k in ctx.paper]
    if not (keys_a and keys_b and paper_a and paper_b):
        paper_a = [(m, fs) for m in claim.methods for fs in claim.columns if (m, fs) in ctx.paper]
        paper_b = [(claim.other, fs) for fs in claim.columns if (claim.other, fs) in ctx.paper]

    def rms(keys):
        return math.sqrt(statistics.fmean(ctx.paper[k].sd ** 2 for k in keys))

    names = "/".join(claim.methods)
    if paper_a and paper_b:
        pra, prb = rms(paper_a), rms(paper_b)
        paper = f"{names} pooled SD {pra:.2f} ({len(paper_a)} cells) vs {claim.other} {prb:.2f} ({len(paper_b)})"
        paper_verdict = _point(pra > prb)
    else:
        paper, paper_verdict = "-", "-"
    if not keys_a or not keys_b:
        missing = ", ".join(claim.methods if not keys_a else [claim.other])
        return [Comparison("all", f"{missing} not in our table", None, None, NOT_RUN, paper, paper_verdict)]
    cells = {f"{m} {fs}": ctx.ours(m, fs) for m, fs in keys_a + keys_b}
    undefined = _sd_undefined("all", cells)
    if undefined:
        undefined.paper, undefined.paper_verdict = paper, paper_verdict
        return [undefined]
    (va, dfa), (vb, dfb) = _pooled([ctx.ours(*k) for k in keys_a]), _pooled([ctx.ours(*k) for k in keys_b])
    p = f_test(va, dfa, vb, dfb)
    verdict = NOT_SIGNIFICANT if p >= ctx.alpha else (HOLDS if va > vb else FAILS)
    ours = (f"{'/'.join(sorted({m for m, _ in keys_a}, key=claim.methods.index))} pooled SD {math.sqrt(va):.2f} "
            f"({len(keys_a)} cells, df {dfa}) vs {claim.other} {math.sqrt(vb):.2f} ({len(keys_b)}, df {dfb}); "
            f"F-test {_p(p, ctx.alpha)}")
    return [Comparison("all", ours, p, min(c.runs for c in cells.values()), verdict, paper, paper_verdict)]


def _sd_at_most_comparisons(claim: Claim, ctx: _Context) -> list[Comparison]:
    psds = {k: c.sd for k, c in ctx.paper.items() if c.sd is not None}
    bound_key = max(psds, key=psds.get)
    bound = psds[bound_key]
    paper = (f"largest SD {bound:.2f} ({bound_key[0]} {bound_key[1]}), median {statistics.median(psds.values()):.2f} "
             f"over {len(psds)} cells")
    cells = {f"{m} {fs}": c for (m, fs), c in ctx.tests.cells.items() if fs in claim.columns}
    undefined = _sd_undefined("all", cells)
    if undefined:
        undefined.paper, undefined.paper_verdict = paper, HOLDS
        return [undefined]
    worst = max(cells, key=lambda k: cells[k].sd)
    p = min(chi2_exceeds(c.sd, c.runs, bound) for c in cells.values())
    verdict = HOLDS if cells[worst].sd <= bound else (NOT_SIGNIFICANT if p >= ctx.alpha else FAILS)
    ours = (f"largest SD {cells[worst].sd:.2f} ({worst}), median {statistics.median(c.sd for c in cells.values()):.2f} "
            f"over {len(cells)} cells, bound {bound:.2f} (chi-square test that an SD exceeds it: {_p(p, ctx.alpha)})")
    return [Comparison("all", ours, p, min(c.runs for c in cells.values()), verdict, paper, HOLDS)]


_EVALUATE = {
    "at_least": _pair_comparisons,
    "within": _pair_comparisons,
    "best": _best_comparisons,
    "sd_largest": _sd_largest_comparisons,
    "sd_greater": _sd_greater_comparisons,
    "sd_at_most": _sd_at_most_comparisons,
}


def evaluate(
    tests: TableTests, paper: dict[tuple[str, str], Cell], claims: tuple[Claim, ...] = CLAIMS
) -> list[Finding]:
    """Every claim decided on our tested table and on the paper's numbers (see the module docstring)."""
    ctx = _Context(tests, paper)
    findings = []
    for claim in claims:
        comparisons = _EVALUATE[claim.kind](claim, ctx)
        evaluated = [c for c in comparisons if c.verdict != NOT_RUN]
        findings.append(Finding(
            claim, comparisons, _worst([c.verdict for c in evaluated]),
            _worst([c.paper_verdict for c in comparisons if c.paper_verdict != "-"]),
            any(c.runs is not None and c.runs < 2 for c in comparisons)))
    return findings


# ------------------------------------------------------------------ the Markdown file
FEW_RUNS = ("**fewer than 2 runs per cell: the p-values are across test sentences only and the SDs undefined; "
            "these values are not meaningful**")


def _cell_text(text: str) -> str:
    return text.replace("|", "\\|")


def format_findings(
    findings: list[Finding],
    title: str,
    paper: str,
    tests: TableTests,
    ours: dict[tuple[str, str], Cell],
    paper_cells: dict[tuple[str, str], Cell],
) -> str:
    """``results/<table>_findings.md``: one line per claim, each comparison, the rules, each cell vs the paper's."""
    runs = sorted({c.runs for c in tests.cells.values()})
    text = f"# {title}: the findings of Cherry & Foster (2012), §5, evaluated\n\n"
    text += (f"Our numbers are the table's (Test = BLEU averaged over the test sets and the runs; SD across the runs), "
             f"set against the paper's {paper}. p-values: BLEU claims, the stratified approximate randomization test "
             f"over the runs (`{tests.signature}`); SD claims, F- and chi-square tests on the runs' Test. "
             f"Verdicts at alpha = {tests.alpha}: holds / does not hold / not significant (rules below); the paper's "
             "own numbers are judged on their point estimates (it reports no test). "
             f"Runs per cell: {', '.join(map(str, runs))}.\n\n")
    if runs and runs[0] < 2:
        text += f"Some cells have fewer than 2 runs: {FEW_RUNS}.\n\n"
    text += "## Claims\n\n| # | claim | ours | verdict | paper | paper's verdict |\n|---|---|---|---|---|---|\n"
    for i, f in enumerate(findings, 1):
        parts = [f"{c.column}: {c.ours} [{c.verdict}]" if len(f.comparisons) > 1 else c.ours for c in f.comparisons]
        ours_text = "; ".join(dict.fromkeys(parts))  # a method missing from a column is said once
        if f.few_runs:
            ours_text += f" ({FEW_RUNS})"
        paper_text = "; ".join(f"{c.column}: {c.paper}" if len(f.comparisons) > 1 else c.paper for c in f.comparisons)
        text += (f"| {i} | {_cell_text(f.claim.text)} | {_cell_text(ours_text)} | **{f.verdict}** | "
                 f"{_cell_text(paper_text)} | {f.paper_verdict} |\n")
    text += "\n## Where the paper says it\n\n"
    for i, f in enumerate(findings, 1):
        text += f"{i}. {f.claim.quote}." + (f" {f.claim.note}" if f.claim.note else "") + "\n"
    text += ("\n## Each comparison\n\n| # | column | ours | p | runs | verdict | paper | paper's verdict |\n"
             "|---|---|---|---|---|---|---|---|\n")
    for i, f in enumerate(findings, 1):
        for c in f.comparisons:
            p = "-" if c.p is None else format_p(c.p, tests.alpha)
            text += (f"| {i} | {c.column} | {_cell_text(c.ours)} | {p} | {'-' if c.runs is None else c.runs} | "
                     f"{c.verdict} | {_cell_text(c.paper)} | {c.paper_verdict} |\n")
    text += "\n## How the verdicts are decided\n\n" + _RULES
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


_RULES = """\
- *at least as good as* (claims about Test): holds if ours is >= the other method's Test; not
  significant if it is below but the randomization test does not separate them (p >= alpha);
  does not hold if it is significantly below.
- *best or tied*: holds if the method has the column's highest Test (p given against the runner-up);
  otherwise as *at least as good as* against the column's best.
- *within 0.2*: holds if the method is not below the other by more than 0.2; otherwise does not hold
  if the difference is significant, not significant if not (the test is of a zero difference).
- *largest SD*: holds if the method's SD is the largest of the column; otherwise, against the
  largest, a two-sided F-test of the runs' variances: not significant if p >= alpha, else does not hold.
- *vary more* (pooled): the runs' variances pooled over the cells, a two-sided F-test: holds if larger
  and significant, does not hold if smaller and significant, not significant otherwise.
- *SD at most the paper's largest*: holds if no cell's SD exceeds it; otherwise a one-sided
  chi-square test per cell (sigma <= bound): does not hold if some p < alpha, else not significant.
- A claim's verdict is that of its worst comparison (does not hold, then not significant, then
  holds); comparisons of cells not in our table are "not run" and do not count.
- With fewer than 2 runs per cell, the randomization test is across test sentences only (it ignores
  the optimizer's instability) and SDs are undefined: such values are not meaningful here.
"""
