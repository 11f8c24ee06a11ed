"""Tan, Xia, Wang & Zhou (2013), corpus-level MIRA: their claims decided on a table's runs, and its costs.

The paper compares c-MIRA (:mod:`smtlib.tuners.cmira`) with MERT and two MIRAs in the batch tuning loop
(§4.1, Tables 1, 2 and 4): MIRA2 is Cherry & Foster's batch MIRA (Moses ``kbmira``), our ``kbmira``;
MIRA1 is Chiang et al.'s MIRA in batch mode with several constraints, which we do not have. Its two
feature settings are 8 dense features and all 228 (8 dense and 220 group features); ours are the
tables' Small (7 dense) and Big (18 dense and the sparse templates), :data:`PAPER_SETTINGS`. The
paper's numbers are :data:`PAPER_TSV`, read by :func:`paper_numbers`.

Claims (:data:`CLAIMS`; each one comparison of two cells of one feature set, Test or Tune)
    With all features (§4.1: "c-MIRA can moderately improve BLEU by 0.2∼0.4 from MIRA1 and 0.2∼0.6
    from MIRA2"; §4.3: "c-MIRA gets a higher training BLEU with such few parameter updates"):
    c-MIRA above kb-mira on test and on dev. With 8 features (§4.1: "due to the small feature size,
    MERT can get a better BLEU of the dev set, and all MIRA algorithms fails to generally beat MERT on
    the test set"): MERT above c-MIRA on dev, c-MIRA above MERT on test (which the paper says does not
    happen), and c-MIRA against kb-mira on test, where the paper's Table 1 has numbers but its text
    makes no claim.
The tests
    As the tables' findings (:mod:`smtlib.report.claims`): a paired t-test over the runs, run *s* of
    one method paired with the run of the other tuned on the same dev sub-sample (Clark et al. 2011:
    the unit is the tuning run), three-way verdicts with each side at alpha / 2, Holm's correction over
    the file's tests. Beside each Test comparison, the sentence-level p of the tables' approximate
    randomization test over the pooled runs (:func:`smtlib.bleu.replicas.compare_systems` with the
    tables' settings, :mod:`smtlib.report.significance`), which decides nothing. The paper's numbers
    are its Table 1's (Test: the mean over its test sets, as our Test), judged on their point estimates
    (it marks significance against MIRA2 per test set only).
Costs (the paper's Tables 2 and 4)
    Per method and feature set, from the runs' own files: each tuning step's ``smtlib tune --info``
    JSON for the parameter updates (:func:`step_updates`: c-MIRA's ``updates``, the epochs whose η > 0;
    kb-mira's ``epochs[].updates`` summed, the sentences whose hinge loss was positive; MERT's updates
    are not counted, its ``line_searches`` are shown instead) and the paper's count, which is every
    update opportunity (c-MIRA: one per epoch, "400 times"; MIRA2: every sentence of every epoch, "40
    × 878 = 35120"); and each step's Snakemake benchmark file for CPU and wall seconds
    (:func:`smtlib.report.publish.read_benchmark`, CPU with Snakemake's unsampled tail extrapolated).
    The first step (rule ``tune_first``) is the optimizer alone; each later one (rule ``tune``) merges
    the iteration's k-best list into the pool first, a cost every method pays alike, so both are
    shown. The paper's running times are set beside ours as ratios to MIRA2's (kb-mira's), which do
    not depend on the machine: c-MIRA ran its hope/fear search on 8 threads there, on one here.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import math
import os
import statistics
from collections.abc import Mapping, Sequence

import numpy as np

from smtlib.bleu.replicas import Layout, compare_systems
from smtlib.errors import InputError
from smtlib.report.claims import FAILS, HOLDS, Comparison, decide_family, paired_t
from smtlib.report.significance import ALPHA, TIES, TestOptions, format_p
from smtlib.report.tables import FEATURE_SET_TITLES, paper_name

#: the paper's numbers (Tables 1, 2 and 4)
PAPER_TSV = "tan_2013.tsv"
#: the paper's methods that are ours
PAPER_METHODS = {"MERT": "mert", "MIRA2": "kbmira", "c-MIRA": "cmira"}
#: our methods compared, in the order of the costs table
METHODS = ("cmira", "kbmira", "mert")
#: our feature sets that stand for the paper's settings: 8 dense features, all 228
PAPER_SETTINGS = {"small": "8", "big": "all"}
#: the costs table's columns
COST_COLUMNS = ("feature_set", "method", "runs", "steps", "updates_per_step", "paper_count_per_step",
                "line_searches_per_step", "first_step_cpu_s", "later_step_cpu_s", "step_wall_s", "run_cpu_s")


@dataclasses.dataclass(frozen=True)
class Claim:
    """One statement of the paper: ``a`` above ``b`` in ``score`` ("test" or "tune") on ``feature_set``."""

    key: str
    text: str
    quote: str
    feature_set: str
    score: str
    a: str
    b: str
    paper_note: str = ""


_ALL_QUOTE = ('§4.1: "c-MIRA can moderately improve BLEU by 0.2∼0.4 from MIRA1 and 0.2∼0.6 from MIRA2. This might '
              'indicate that a loss defined on corpus is more accurate than the one defined on sentence."')
_EIGHT_QUOTE = ('§4.1: "In the first case, due to the small feature size, MERT can get a better BLEU of the dev set, '
                'and all MIRA algorithms fails to generally beat MERT on the test set."')

CLAIMS: tuple[Claim, ...] = (
    Claim("big-test", "With many features, c-MIRA outperforms kb-mira (MIRA2) on test", _ALL_QUOTE, "big", "test",
          "cmira", "kbmira"),
    Claim("big-tune", "With many features, c-MIRA reaches a higher dev BLEU than kb-mira (MIRA2)",
          '§4.3: "We are surprised to find c-MIRA gets a higher training BLEU with such few parameter updates."',
          "big", "tune", "cmira", "kbmira"),
    Claim("small-test", "With few features, c-MIRA outperforms kb-mira (MIRA2) on test",
          "Table 1, 8 features (the text makes no claim about these two).", "small", "test", "cmira", "kbmira"),
    Claim("small-tune-mert", "With few features, MERT reaches a higher dev BLEU than c-MIRA", _EIGHT_QUOTE, "small",
          "tune", "mert", "cmira"),
    Claim("small-test-mert", "With few features, c-MIRA outperforms MERT on test (the paper: it does not)",
          _EIGHT_QUOTE, "small", "test", "cmira", "mert",
          paper_note="The paper's verdict is that of its numbers; its words, \"fails to generally beat\", are "
                     "also met by an inconclusive verdict here."),
)


def method_name(method: str) -> str:
    """How this file names a method: the paper's c-MIRA, the tables' names of the others."""
    return "c-MIRA" if method == "cmira" else paper_name(method)


# ------------------------------------------------------------------ the paper's numbers
def paper_numbers() -> list[dict[str, str]]:
    """The rows of :data:`PAPER_TSV` (table, features, method, set, value, mark)."""
    text = importlib.resources.files("smtlib.report").joinpath(PAPER_TSV).read_text(encoding="utf-8")
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    return [dict(zip(rows[0], row)) for row in rows[1:]]


def paper_score(numbers: Sequence[dict], features: str, method: str, score: str) -> float | None:
    """The paper's Table 1 Tune (``dev``) or Test (the mean over its test sets) of a method."""
    values = [float(r["value"]) for r in numbers if r["table"] == "table1" and r["features"] == features
              and r["method"] == method and r["set"] != "C" and (r["set"] == "dev") == (score == "tune")]
    return statistics.fmean(values) if values else None


def paper_value(numbers: Sequence[dict], table: str, method: str) -> float:
    """The paper's one number of ``method`` in Table 2 (minutes) or Table 4 (updates)."""
    return next(float(r["value"]) for r in numbers if r["table"] == table and r["method"] == method)


# ------------------------------------------------------------------ the runs
def cells(runs: Sequence[dict]) -> dict[tuple[str, str], dict[str, dict]]:
    """(method, feature set) -> sub-sample -> run summary.

    Raises
    ------
    InputError
        For a run of a method this comparison does not have, or two runs of one cell and sub-sample.
    """
    out: dict[tuple[str, str], dict[str, dict]] = {}
    for r in runs:
        if r["method"] not in METHODS:
            raise InputError(f"a run of {r['method']}: the comparison is of {', '.join(METHODS)}", r.get("_path"))
        cell = out.setdefault((r["method"], r["fs"]), {})
        if str(r["sample"]) in cell:
            raise InputError(f"two runs of {r['method']} {r['fs']} on sub-sample {r['sample']}", r.get("_path"))
        cell[str(r["sample"])] = r
    return out


def _paper(claim: Claim, numbers: Sequence[dict]) -> tuple[str, str]:
    features = PAPER_SETTINGS[claim.feature_set]
    names = {v: k for k, v in PAPER_METHODS.items()}
    a, b = (paper_score(numbers, features, names[m], claim.score) for m in (claim.a, claim.b))
    what = "dev" if claim.score == "tune" else "test (mean of its test sets)"
    label = "8 features" if features == "8" else "all 228 features"
    return (f"{names[claim.a]} {a:.2f} vs {names[claim.b]} {b:.2f} ({a - b:+.2f}), {what}, {label}",
            HOLDS if round(a - b, 2) > 0 else FAILS)


def decide(by_cell: Mapping[tuple[str, str], Mapping[str, dict]], stats: Mapping[tuple[str, str], np.ndarray],
           layout: Layout, options: TestOptions, alpha: float = ALPHA) -> list[Comparison]:
    """Every claim of :data:`CLAIMS` on our runs (see the module docstring), in their order: each one
    :class:`~smtlib.report.claims.Comparison` (its ``label`` the claim's key, its ``column`` the claim's
    feature set and score).

    Parameters
    ----------
    by_cell
        :func:`cells` of the runs.
    stats
        (method, feature set) -> the cell's runs' statistics of their concatenated test outputs, (R, N, W)
        in the order of the sub-samples of ``by_cell`` (:func:`smtlib.report.significance.run_statistics`).
    """
    numbers = paper_numbers()
    out = []
    for claim in CLAIMS:
        paper, paper_verdict = _paper(claim, numbers)
        column = f"{claim.feature_set} ({claim.score})"
        a, b = (by_cell.get((m, claim.feature_set)) for m in (claim.a, claim.b))
        if a is None or b is None:
            missing = [f"{method_name(m)} {claim.feature_set}" for m, c in ((claim.a, a), (claim.b, b)) if c is None]
            out.append(Comparison(column, claim.key, f"{', '.join(missing)} not in our runs", None, None, None,
                                  paper, paper_verdict))
            continue
        shared = [s for s in a if s in b]
        ra = [a[s][claim.score] for s in shared]
        rb = [b[s][claim.score] for s in shared]
        ar_p = None
        if claim.score == "test" and shared:
            sa = stats[(claim.a, claim.feature_set)][[list(a).index(s) for s in shared]]
            sb = stats[(claim.b, claim.feature_set)][[list(b).index(s) for s in shared]]
            _, result = compare_systems(sb, {claim.a: sa}, layout, baseline_name=claim.b,
                                        ar_shuffles=options.ar_shuffles, boot_samples=options.boot_samples,
                                        seed=options.seed, ties=TIES)
            ar_p = None if result.p_value is None else float(result.p_value[0])
        if len(shared) < 2:
            out.append(Comparison(column, claim.key, f"{len(shared)} paired run(s): no run-level test", None, ar_p,
                                  len(shared), paper, paper_verdict))
            continue
        test = paired_t([x - y for x, y in zip(ra, rb)], 0.0, None, alpha)
        ours = (f"{method_name(claim.a)} {statistics.fmean(ra):.2f} vs {method_name(claim.b)} "
                f"{statistics.fmean(rb):.2f}: {test.estimate:+.2f} [{test.ci[0]:+.2f}, {test.ci[1]:+.2f}]")
        out.append(Comparison(column, claim.key, ours, test, ar_p, len(shared), paper, paper_verdict))
    decide_family(out, alpha)
    return out


# ------------------------------------------------------------------ costs
def step_updates(info: Mapping, path: str | os.PathLike | None = None) -> tuple[int | None, int | None, int | None]:
    """(updates made, the paper's count of updates, line searches) of one tuning step's ``--info`` JSON.

    c-MIRA: ``updates`` (epochs with a step, η > 0) and its epochs (Tan et al. count one update per
    epoch); kb-mira: the sum of its epochs' ``updates`` (sentences with a positive hinge loss) and epochs ×
    sentences (Tan et al. count every sentence of every epoch); MERT: no updates, its ``line_searches``.

    Raises
    ------
    InputError
        When the JSON lacks what its method records.
    """
    method = info.get("method")
    try:
        if method == "cmira":
            return int(info["updates"]), int(info["params"]["epochs"]), None
        if method == "kbmira":
            return (int(sum(e["updates"] for e in info["epochs"])), int(info["params"]["epochs"]) * int(info["sentences"]),
                    None)
        if method == "mert":
            return None, None, int(info["line_searches"])
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"a {method} step's --info without {e} (written by smtlib tune {method} --info)", path) from None
    raise InputError(f"a step of {method!r}: the costs are of {', '.join(METHODS)}", path)


def read_step_benchmark(path: str | os.PathLike) -> dict[str, float]:
    """A tuning step's Snakemake benchmark file (:func:`smtlib.report.publish.read_benchmark`), checked:
    it exists and has the wall (``s``) and CPU (``cpu_time``) columns."""
    from smtlib.io import read_lines
    from smtlib.report.publish import read_benchmark

    header = read_lines(path, what="benchmark file")[0].split("\t")
    missing = [c for c in ("s", "cpu_time") if c not in header]
    if missing:
        raise InputError(f"not a Snakemake benchmark file: no column {', '.join(missing)}", path, 1)
    return read_benchmark(path)


@dataclasses.dataclass(frozen=True)
class Step:
    """One tuning step of one run: what it updated and what it cost."""

    method: str
    fs: str
    sample: str
    iteration: int
    updates: int | None
    paper_count: int | None
    line_searches: int | None
    cpu_s: float
    wall_s: float
    #: the CPU that measured it (:func:`smtlib.report.publish.this_machine`): this machine's for a step
    #: tuned here, its record's for a restored run's, None where the record names none
    machine: str | None = None


def _mean(values: Sequence[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


def cost_rows(steps: Sequence[Step]) -> list[dict]:
    """Per (feature set, method): runs, steps per run and the means per step (:data:`COST_COLUMNS`), the
    feature sets in their registry's order (small, medium, big), whatever order the steps came in."""
    from smtlib.system.feature_sets import FEATURE_SETS

    rank = {name: i for i, name in enumerate(FEATURE_SETS)}
    rows = []
    for fs in sorted({s.fs for s in steps}, key=lambda f: (rank.get(f, len(rank)), f)):
        for m in METHODS:
            mine = [s for s in steps if s.fs == fs and s.method == m]
            if not mine:
                continue
            samples = list(dict.fromkeys(s.sample for s in mine))
            rows.append({
                "feature_set": fs, "method": m, "runs": len(samples), "steps": len(mine),
                "updates_per_step": _mean([s.updates for s in mine]),
                "paper_count_per_step": _mean([s.paper_count for s in mine]),
                "line_searches_per_step": _mean([s.line_searches for s in mine]),
                "first_step_cpu_s": _mean([s.cpu_s for s in mine if s.iteration == 1]),
                "later_step_cpu_s": _mean([s.cpu_s for s in mine if s.iteration > 1]),
                "step_wall_s": _mean([s.wall_s for s in mine]),
                "run_cpu_s": statistics.fmean(sum(s.cpu_s for s in mine if s.sample == k) for k in samples),
                "machines": {machine: len({s.sample for s in mine if (s.machine or NOT_RECORDED) == machine})
                             for machine in sorted({s.machine or NOT_RECORDED for s in mine})},
            })
    return rows


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:,.{digits}f}"


def format_costs(rows: Sequence[dict]) -> str:
    """The costs as TSV (:data:`COST_COLUMNS`; ``-`` where a method has no such number)."""
    lines = ["\t".join(COST_COLUMNS) + "\n"]
    for r in rows:
        lines.append("\t".join(str(r[k]) if k in ("feature_set", "method", "runs", "steps") else
                               ("-" if r[k] is None else f"{r[k]:.4f}") for k in COST_COLUMNS) + "\n")
    return "".join(lines)


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.3g}"


#: a step's machine where its record names none (records published before they did)
NOT_RECORDED = "a machine not recorded"


def _mixed_provenance(rows: Sequence[dict]) -> set[tuple[str, str]]:
    """(feature set, method) whose CPU ratio to kb-mira's is not between steps measured on one known
    machine: the two cells' steps were measured on different machines, or on one their records do not
    name (a ratio of a machine's seconds to another's is not the algorithms')."""
    machines = {(r["feature_set"], r["method"]): set(r["machines"]) for r in rows}
    mixed = set()
    for fs, m in machines:
        if m == "kbmira" or (fs, "kbmira") not in machines:
            continue
        both = machines[fs, m] | machines[fs, "kbmira"]
        if len(both) > 1 or NOT_RECORDED in both:
            mixed.add((fs, m))
    return mixed


def _costs_section(rows: Sequence[dict]) -> str:
    numbers = paper_numbers()
    text = ("\n## Updates and time per tuning step (the paper's Tables 2 and 4)\n\n"
            "Means over every tuning step of the feature set's runs. Updates: the steps of the weights a tuning "
            "step made (c-MIRA: epochs with η > 0; kb-mira: sentences with a positive hinge loss, over all "
            "epochs); the paper's count: every update opportunity, as Tan et al. count them (c-MIRA: its "
            "epochs; MIRA2: epochs × sentences); MERT makes no updates, its line searches are shown. CPU "
            "seconds from each step's benchmark file (its unsampled tail extrapolated); the first step is the "
            "optimizer alone, a later one also merges the k-best list into the pool.\n\n"
            "| feature set | method | runs | steps | updates / step | the paper's count / step | line searches "
            "/ step | CPU s, first step | CPU s, later step | wall s / step | CPU s / run |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        text += (f"| {r['feature_set']} | {method_name(r['method'])} | {r['runs']} | {r['steps']} | "
                 f"{_number(r['updates_per_step'])} | {_number(r['paper_count_per_step'], 0)} | "
                 f"{_number(r['line_searches_per_step'])} | {_number(r['first_step_cpu_s'], 2)} | "
                 f"{_number(r['later_step_cpu_s'], 2)} | {_number(r['step_wall_s'], 2)} | "
                 f"{_number(r['run_cpu_s'], 1)} |\n")
    mixed = _mixed_provenance(rows)
    if mixed:
        sets = {fs for fs, _ in mixed}
        where = "; ".join(f"{method_name(r['method'])} on {r['feature_set']}: " + ", ".join(
            f"{machine} ({n} of {r['runs']} runs)" for machine, n in r["machines"].items())
            for r in rows if r["feature_set"] in sets)
        text += ("\nCPU measured on more than one machine, or on machines not recorded: each step's CPU seconds "
                 "were measured where its run was tuned (a run restored from its published record keeps the "
                 f"record's, and records published before they named the machine name none). {where}. The CPU "
                 "ratios marked † below compare cells not measured on one known machine: the updates are "
                 "comparable, those seconds only as far as the machines are alike.\n")
    text += ("\nAgainst kb-mira (MIRA2) in the same feature set, ours beside the paper's (Table 4: updates in one "
             "execution; Table 2: running time):\n\n"
             "| feature set | ratio | c-MIRA / kb-mira | paper c-MIRA / MIRA2 | kb-mert / kb-mira | paper MERT / MIRA2 "
             "|\n|---|---|---|---|---|---|\n")
    updates = {m: paper_value(numbers, "table4", m) for m in ("c-MIRA", "MIRA2")}
    minutes = {m: paper_value(numbers, "table2", m) for m in ("c-MIRA", "MIRA2", "MERT")}
    for fs in dict.fromkeys(r["feature_set"] for r in rows):
        by = {r["method"]: r for r in rows if r["feature_set"] == fs}
        if "kbmira" not in by:
            continue

        def ratio(m: str, key: str) -> str:
            if m not in by:
                return "-"
            value = _ratio(by[m][key], by["kbmira"][key])
            cpu = key.endswith("cpu_s") and value != "-"
            return value + " †" if cpu and (fs, m) in mixed else value

        text += (f"| {fs} | updates made | {ratio('cmira', 'updates_per_step')} | - | - | - |\n"
                 f"| {fs} | updates counted as the paper does | {ratio('cmira', 'paper_count_per_step')} | "
                 f"{_ratio(updates['c-MIRA'], updates['MIRA2'])} | - | - |\n"
                 f"| {fs} | CPU of the optimizer alone (first step) | {ratio('cmira', 'first_step_cpu_s')} | - | "
                 f"{ratio('mert', 'first_step_cpu_s')} | - |\n"
                 f"| {fs} | CPU of a run's tuning steps (paper: running time) | {ratio('cmira', 'run_cpu_s')} | "
                 f"{_ratio(minutes['c-MIRA'], minutes['MIRA2'])} | {ratio('mert', 'run_cpu_s')} | "
                 f"{_ratio(minutes['MERT'], minutes['MIRA2'])} |\n")
    text += (f"\nThe paper: c-MIRA {paper_value(numbers, 'table4', 'c-MIRA'):,.0f} updates against MIRA2's "
             f"{paper_value(numbers, 'table4', 'MIRA2'):,.0f} (40 epochs × 878 sentences) in one execution; running "
             f"time MERT {minutes['MERT']:g}, MIRA2 {minutes['MIRA2']:g}, c-MIRA {minutes['c-MIRA']:g} minutes "
             "(§4.3: \"Only MIRA2 is fairly faster than c-MIRA because of more epochs in c-MIRA\"; c-MIRA's hope and "
             "fear on 8 threads).\n")
    return text


# ------------------------------------------------------------------ the Markdown file
def format_findings(title: str, comparisons: Sequence[Comparison], rows: Sequence[dict], signature: str,
                    alpha: float = ALPHA) -> str:
    """``results/<table>_cmira.md``: the claims decided, each beside the paper's numbers, and the costs."""
    tested = sum(c.test is not None for c in comparisons)
    text = (f"# {title}: corpus-level MIRA (Tan, Xia, Wang & Zhou 2013) against kb-mira and kb-mert\n\n"
            f"Our Small stands for the paper's 8 dense features, our Big for its 228 (8 dense and 220 group features). "
            "Test = BLEU averaged over the test sets, Tune = dev BLEU of the kept weights, each run's; a comparison is "
            f"a paired t-test over the runs paired by dev sub-sample, each side at alpha / 2 = {alpha / 2:g}, with "
            f"Holm's correction over the {tested} tests of this file: **holds** (the claimed side is significant), "
            "**does not hold** (the other side is), **inconclusive** (neither); a 95% interval in brackets. AR p: "
            f"the tables' sentence-level test of the two cells' pooled runs (`{signature}`), which decides nothing. "
            "The paper's verdicts are its Table 1's point estimates.\n\n"
            "## Claims\n\n| # | claim | column | ours | runs | p | Holm p | AR p | verdict | paper | paper's verdict |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n")
    claims = {claim.key: claim for claim in CLAIMS}
    for i, c in enumerate(comparisons, 1):
        p = "-" if c.test is None else format_p(c.test.p, alpha)
        text += (f"| {i} | {claims[c.label].text} | {c.column} | {c.ours} | "
                 f"{'-' if c.runs is None else c.runs} | {p} | {'-' if c.p_holm is None else format_p(c.p_holm, alpha)} "
                 f"| {'-' if c.ar_p is None else format_p(c.ar_p, alpha)} | **{c.verdict}** | {c.paper} | "
                 f"{c.paper_verdict} |\n")
    text += "\n## Where the paper says it\n\n"
    text += "".join(f"{i}. {claims[c.label].quote}" + (f" {claims[c.label].paper_note}" if claims[c.label].paper_note
                                                       else "") + "\n" for i, c in enumerate(comparisons, 1))
    text += _costs_section(rows)
    missing = [FEATURE_SET_TITLES.get(fs, fs) for fs in PAPER_SETTINGS if not any(r["feature_set"] == fs for r in rows)]
    if missing:
        text += f"\n(No runs of {', '.join(missing)} in this table: its claims are not run.)\n"
    return text
