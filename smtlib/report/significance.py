"""Significance in Tables 4-6: every cell tested against its column's best (Clark et al. 2011).

Cherry & Foster (2012, §4.3) tune every cell five times (the full dev set and four sub-samples) and
report the SD across the runs, but test nothing. Here each cell of a column (one feature set) is set
against the column's best method with the stratified approximate randomization test of Clark, Dyer,
Lavie & Smith (2011) over optimizer replicas, as ``smtlib compare`` runs it
(:func:`smtlib.bleu.replicas.compare_systems`, :func:`smtlib.bleu.randomization.paired_randomization`):

replicas
    The cell's runs, one per dev sub-sample. A run's output is the concatenation of its test sets'
    1-best outputs (in the order of the test sets given), scored against the concatenation of their
    references: the test-set concatenation the paper's Test averages over. Run r of one cell is
    paired with the run of the other cell tuned on the same dev sub-sample, so the cells of a column
    must have the same sub-samples.
the column's best
    The method with the highest Test (the table's number: BLEU averaged over the test sets and the
    runs); of equal Tests, the first in the table's row order.
the statistic
    BLEU of all the runs' outputs of a cell concatenated, one cell minus the other (Clark et al.'s and
    MultEval's); it is close to, but not the same as, the difference of the two cells' Test, which
    averages per-test-set BLEU. p is Riezler & Maxwell's (``ties="count"``: two identical cells get
    p = 1). s_sel (bootstrap over test sentences, averaged over runs) and s_opt (SD across runs) are
    those of the runs' BLEU on the concatenated test sets, so s_opt is close to the table's SD
    (which is the SD of the runs' per-test-set average).

The mark of a cell (:func:`mark`, the ``<set> Sig`` column of the table) is decided at the level of
the runs, the unit that carries the optimizer's instability (Clark et al. 2011, §3): a paired t-test
of the cell's runs against the best's, run *s* against the run tuned on the same dev sub-sample,
with Holm's correction over every cell of the table tested against its column's best (the family
of tests the table's marks make at once; Dror et al. 2018, §4). At 5 pairs the paired t-test is the
only run-level test that can reach p < 0.05 (a sign-flip or Wilcoxon test cannot go below 0.0625).
The AR p above pools the runs' test sentences: shown beside it, it decides nothing, because it
treats sentences of different runs as independent draws and ignores that the runs are only five
(it disagreed with the run-level test on 1-5 of the 19 marked cells of each of Tables 4-6). The
column's best is the highest Test, the mean of the runs' Test: the quantity the paired test is about.

``best``
    the column's best;
``*``
    significantly different from the column's best (Holm-adjusted paired-t p < :data:`ALPHA`): as
    the best has the highest Test, significantly worse;
``=``
    not significantly different from it, which is not evidence that the two are equal (with five
    runs, differences of a few tenths often are not significant);
``(*)``, ``(=)``
    a cell with one run (or whose runs do not pair with the best's): no run-level test exists, so
    the mark is the AR test's across test sentences (Koehn 2004's setting, no optimizer replicas).
    It ignores the optimizer's instability, which is what Clark et al. show overstates significance,
    so these marks are not the paper's question; config/reduced.yaml's tables (one run per cell) get
    them.

A column with one method only has its ``best`` and nothing to test. ``n/a`` cells are not tested.

Against a reference method (``TestOptions.against``; the extended tables use kb-mira, the batch MIRA
that Tan et al. 2013 set corpus-level MIRA against), every other cell of a column is also set against
that method's cell, by the same run-level test (paired t over the runs paired by sub-sample, two-sided),
with Holm's correction over the table's cells tested against it (a family of its own), and the AR p
of the pooled sentences beside it (:func:`against_mark`, the ``<set> vs <method>`` column):

``ref``
    the reference's own cell;
``>``, ``<``
    significantly above or below the reference's cell (Holm-adjusted paired-t p < :data:`ALPHA`; the
    side is that of the mean paired difference of Test);
``=``
    not significantly different from it;
``(>)``, ``(<)``, ``(=)``
    no run-level test (fewer than 2 runs that pair): the AR test's across test sentences, as above.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import statistics
from collections.abc import Mapping, Sequence

import numpy as np

from smtlib.bleu.randomization import paired_randomization
from smtlib.bleu.references import read_references
from smtlib.bleu.replicas import Layout, holm, summarize_system  # holm: re-exported for the tables and claims
from smtlib.bleu.signature import BleuSignature
from smtlib.bleu.stats import BleuSettings
from smtlib.errors import InputError
from smtlib.io import read_lines

#: significance level of the marks and of every verdict built on them
ALPHA = 0.05
#: p-value convention (:data:`smtlib.bleu.randomization.TIES`): identical cells get p = 1
TIES = "count"
#: which pairs of a column are tested: every pair, or each cell against the column's best only
PAIRS = ("all", "best")
#: a run's Test BLEU recomputed from its outputs must equal its summary's to this (BLEU points)
BLEU_TOLERANCE = 1e-6


@dataclasses.dataclass(frozen=True)
class TestOptions:
    """How the cells are tested: shuffles and bootstrap resamples (as ``smtlib compare``), their
    seed, and which pairs (:data:`PAIRS`)."""

    ar_shuffles: int = 10_000
    boot_samples: int = 1000
    seed: int = 0
    pairs: str = "all"
    #: a method every other cell of its column is also tested against (None: none)
    against: str | None = None

    def __post_init__(self) -> None:
        if self.ar_shuffles < 1:
            raise InputError(f"--ar-shuffles must be >= 1, got {self.ar_shuffles}")
        if self.boot_samples < 2:
            raise InputError(f"--boot-samples must be >= 2, got {self.boot_samples}")
        if self.pairs not in PAIRS:
            raise InputError(f"--pairs must be one of {', '.join(PAIRS)}, got {self.pairs!r}")


def mark(best: bool, p: float | None, runs: int, p_runs: float | None = None) -> str:
    """A cell's mark (see the module docstring): ``best``; ``*`` or ``=`` by ``p_runs``, the run-level
    test's Holm-adjusted p; without one (one run, or runs that do not pair), ``(*)``/``(=)`` by the
    sentence-level ``p``."""
    if best or (p is None and p_runs is None):
        return "best"
    if p_runs is not None and runs >= 2:
        return "*" if p_runs < ALPHA else "="
    return f"({'*' if p is not None and p < ALPHA else '='})"


def against_mark(reference: bool, diff: float, runs: int, p_runs: float | None, p_ar: float | None) -> str:
    """A cell's mark against the reference method (see the module docstring): ``ref``; ``>``, ``<`` or
    ``=`` by ``p_runs``, the Holm-adjusted run-level p, the side by ``diff`` (the cell's Test minus the
    reference's, over the runs that pair); without one, the same in brackets by the AR p ``p_ar``, the
    side by the pooled BLEU difference ``diff``."""
    if reference:
        return "ref"
    side = ">" if diff > 0 else "<"
    if p_runs is not None and runs >= 2:
        return side if p_runs < ALPHA else "="
    return f"({side if p_ar is not None and p_ar < ALPHA else '='})"


def paired_t_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p of the paired t-test of ``a`` against ``b`` (:func:`scipy.stats.ttest_rel`);
    differences that do not vary give 1 if they are all zero, else 0."""
    from scipy.stats import ttest_rel

    diffs = [x - y for x, y in zip(a, b, strict=True)]
    if len(diffs) < 2:
        raise ValueError("a paired t-test needs at least 2 pairs")
    if max(diffs) == min(diffs):
        return 1.0 if diffs[0] == 0 else 0.0
    return float(ttest_rel(a, b).pvalue)


def format_p(p: float, alpha: float = ALPHA) -> str:
    """A p-value with 4 decimals, or more where 4 would round it across ``alpha`` (0.049975 is 0.04998,
    not 0.0500); below 0.0001, ``<0.0001``."""
    if p < 0.0001:
        return "<0.0001"
    for digits in range(4, 12):
        text = f"{p:.{digits}f}"
        if (float(text) < alpha) == (p < alpha):
            return text
    return repr(p)


def signature(settings: BleuSettings, n_refs: int, options: TestOptions) -> str:
    """The BLEU signature of the tests, with the test's settings (as ``smtlib compare`` prints it)."""
    return (f"{BleuSignature(settings, n_refs)}|ar:{options.ar_shuffles}|ties:{TIES}"
            f"|bs:{options.boot_samples}|seed:{options.seed}")


def run_statistics(
    runs: Sequence[dict],
    outputs: Sequence[Mapping[str, str | os.PathLike]],
    test_refs: Mapping[str, Sequence[str | os.PathLike]],
    settings: BleuSettings,
    layout: Layout,
) -> list[np.ndarray]:
    """Each run's ``(N, W)`` statistics rows of its concatenated test outputs.

    Parameters
    ----------
    runs
        Run summaries (:func:`smtlib.report.runs.read_summaries`).
    outputs
        For each run, test-set name -> its 1-best output file.
    test_refs
        Test-set name -> reference files (one per reference set), in the concatenation's order.
    settings
        Tokenizer and case, as the runs' BLEU was computed with.

    Each run's BLEU on each test set is recomputed from its output and must be the one its summary
    records: a file given for the wrong run, or other BLEU settings than the runs', is an error.
    """
    references = {name: read_references(paths) for name, paths in test_refs.items()}
    if len({len(r) for r in references.values()}) > 1:
        raise InputError("the test sets have different numbers of reference files")
    from smtlib.bleu.corpus import bleu_from_stats

    stats = []
    for run, files in zip(runs, outputs, strict=True):
        if set(files) != set(run["tests"]):
            raise InputError(f"outputs of test sets {sorted(files)} for a run scored on {sorted(run['tests'])}",
                             run["_path"])
        blocks = []
        for name, refs in references.items():
            path = files[name]
            hyps = read_lines(path, what="test output", allow_empty=True)
            if len(hyps) != len(refs[0]):
                raise InputError(f"has {len(hyps)} lines but the references of {name} have {len(refs[0])}", path,
                                 min(len(hyps), len(refs[0])) + 1)
            rows = layout.rows(hyps, refs, settings)
            score = 100 * bleu_from_stats(rows[:, layout.columns["bleu"]].sum(axis=0))
            if abs(score - run["tests"][name]) > BLEU_TOLERANCE:
                raise InputError(f"scores BLEU {score:.4f} on {name}, but the run summary {run['_path']} records "
                                 f"{run['tests'][name]:.4f} (an output given for another run, or other BLEU "
                                 "settings than the runs')", path)
            blocks.append(rows)
        stats.append(np.vstack(blocks))
    return stats


def _column_cells(runs: Sequence[dict], fs: str, methods: Sequence[str], not_applicable) -> dict[str, list[int]]:
    """method -> indices of its runs in this column, in sub-sample order (applicable cells with runs)."""
    cells = {}
    for m in methods:
        if (m, fs) in not_applicable:
            continue
        idx = [i for i, r in enumerate(runs) if r["method"] == m and r["fs"] == fs]
        if idx:
            cells[m] = sorted(idx, key=lambda i: int(runs[i]["sample"]))
    samples = {m: [runs[i]["sample"] for i in idx] for m, idx in cells.items()}
    first = next(iter(cells), None)
    for m in cells:
        if sorted(samples[m], key=int) != sorted(samples[first], key=int):
            raise InputError(f"{fs}: {m} has runs on sub-samples {samples[m]} but {first} on {samples[first]} "
                             "(the test pairs the runs of two methods tuned on the same sub-sample)")
    return cells


def table_tests(
    runs: Sequence[dict],
    stats: Sequence[np.ndarray],
    cells: Mapping[tuple[str, str], dict],
    methods: Sequence[str],
    feature_sets: Sequence[str],
    not_applicable,
    layout: Layout,
    options: TestOptions,
) -> dict:
    """Every cell against its column's best, and the other pairs of each column (``options.pairs``).

    Parameters
    ----------
    runs, stats
        Run summaries and their :func:`run_statistics`.
    cells
        :func:`smtlib.report.tables.aggregate` of ``runs`` (Tune, Test, SD per cell).
    methods, feature_sets, not_applicable
        The table's rows, columns and n/a cells.

    Returns
    -------
    dict
        ``cells``: one record per tested cell (method, feature set, runs, sub-samples, Tune, Test,
        SD, the runs' Test, BLEU of the concatenated test sets (mean over runs), s_sel, s_opt, the
        column's best, the difference of Test to it, the AR p against it, the paired t-test's p over
        the runs and its Holm adjustment over the table's cells, the mark); ``pairs``: one record
        per tested pair of a column (a, b in row order; the difference of Test and of the pooled
        BLEU, a minus b; p). With ``options.against``, also ``against``, ``against_holm_family`` and
        ``against_cells``: one record per cell of a column that has the reference method's cell (Test,
        the reference's Test, their difference, the run-level p and its Holm adjustment over the
        table's cells tested against the reference, the AR p, the mark of :func:`against_mark`).
        Methods are keyed by our names here; scores are BLEU points (0-100).
    """
    records, pairs, against = [], [], []
    for fs in feature_sets:
        col = _column_cells(runs, fs, methods, not_applicable)
        if not col:
            continue
        best = max(col, key=lambda m: (cells[(m, fs)]["test"], -methods.index(m)))
        cell_stats = {m: np.stack([stats[i] for i in idx]) for m, idx in col.items()}
        flat = {m: s.reshape(-1, s.shape[-1]) for m, s in cell_stats.items()}
        tested_pairs = {}  # (a, b) -> (pooled BLEU a minus b, AR p): each cell's test against the best too
        for a, b in itertools.combinations(col, 2):
            if options.pairs == "best" and best not in (a, b):
                continue
            observed, p = paired_randomization(flat[a], flat[b], layout.score, trials=options.ar_shuffles,
                                               seed=options.seed, ties=TIES)
            pairs.append({
                "feature_set": fs, "a": a, "b": b, "runs": len(col[a]),
                "test_diff": cells[(a, fs)]["test"] - cells[(b, fs)]["test"],
                "pooled_bleu_diff": 100 * float(observed[0]), "p": float(p[0]),
            })
            tested_pairs[(a, b)] = (100 * float(observed[0]), float(p[0]))
        for m in sorted(col, key=methods.index):
            # the test is symmetric in its two systems (same shuffles, |difference|), so the pair's p is
            # the p against the best whichever of the two comes first in the column
            p_best = None if m == best else tested_pairs.get((m, best), tested_pairs.get((best, m)))[1]
            summary = summarize_system(m, cell_stats[m], layout, options.boot_samples, options.seed)
            cell, n = cells[(m, fs)], len(col[m])
            records.append({
                "method": m, "feature_set": fs, "runs": n,
                "samples": [runs[i]["sample"] for i in col[m]],
                "tune": cell["tune"], "test": cell["test"], "sd": cell["sd"],
                "run_tests": [runs[i]["test"] for i in col[m]],
                "bleu": 100 * float(summary.mean[0]), "s_sel": 100 * float(summary.s_sel[0]),
                "s_opt": None if np.isnan(summary.s_opt[0]) else 100 * float(summary.s_opt[0]),
                "best": best, "test_diff_to_best": cell["test"] - cells[(best, fs)]["test"],
                "p_vs_best": p_best, "p_runs_vs_best": _runs_p(runs, col, m, best),
            })
        if options.against in col:
            against += _against_column(runs, col, cells, flat, fs, options, layout, tested_pairs)
    tested = [c for c in records if c["p_runs_vs_best"] is not None]
    for c, adjusted in zip(tested, holm([c["p_runs_vs_best"] for c in tested])):
        c["p_runs_holm"] = adjusted
    for c in records:
        c.setdefault("p_runs_holm", None)
        c["mark"] = mark(c["method"] == c["best"], c["p_vs_best"], c["runs"], c["p_runs_holm"])
    result = {"alpha": ALPHA, "ties": TIES, "pairs_tested": options.pairs, "marks": MARKS_TEST,
              "holm_family": len(tested), "cells": records, "pairs": pairs}
    if options.against is not None:
        tested = [c for c in against if c["p_runs"] is not None]
        for c, adjusted in zip(tested, holm([c["p_runs"] for c in tested])):
            c["p_runs_holm"] = adjusted
        for c in against:
            c.setdefault("p_runs_holm", None)
            c["mark"] = against_mark(c["method"] == options.against, c["diff"], c["runs"], c["p_runs_holm"],
                                     c["p_ar"])
        result.update({"against": options.against, "against_holm_family": len(tested), "against_cells": against})
    return result


def _against_column(runs, col, cells, flat, fs, options, layout, tested_pairs) -> list[dict]:
    """One column's cells against the reference method's (``options.against``, which the column has):
    the run-level paired t p (None for the reference itself, or with fewer than 2 runs that pair), the
    AR p of the pooled sentences (the column's pair test where it ran one, ``tested_pairs``), and the
    difference the mark's side is read from."""
    ref = options.against
    out = []
    for m in col:
        record = {"method": m, "feature_set": fs, "runs": len(col[m]), "test": cells[(m, fs)]["test"],
                  "reference_test": cells[(ref, fs)]["test"],
                  "test_diff": cells[(m, fs)]["test"] - cells[(ref, fs)]["test"], "p_runs": None, "p_ar": None,
                  "diff": 0.0}
        if m != ref:
            if (m, ref) in tested_pairs:
                diff, p_ar = tested_pairs[(m, ref)]
            elif (ref, m) in tested_pairs:
                diff, p_ar = tested_pairs[(ref, m)]
                diff = -diff
            else:
                observed, p = paired_randomization(flat[m], flat[ref], layout.score, trials=options.ar_shuffles,
                                                   seed=options.seed, ties=TIES)
                diff, p_ar = 100 * float(observed[0]), float(p[0])
            record.update(p_ar=p_ar, pooled_bleu_diff=diff, diff=diff)
            ours, theirs = _paired_tests(runs, col, m, ref)
            if len(ours) >= 2:
                record["p_runs"] = paired_t_p(ours, theirs)
                record["diff"] = statistics.fmean(a - b for a, b in zip(ours, theirs))
        out.append(record)
    return out


#: how the marks are decided (the tests file says it, the companion too)
MARKS_TEST = "paired t-test over the runs paired by dev sub-sample, Holm-adjusted over the table's cells"


def _paired_tests(runs: Sequence[dict], col: Mapping[str, list[int]], method: str,
                  other: str) -> tuple[list[float], list[float]]:
    """The Test of ``method``'s runs and of ``other``'s, paired by sub-sample (the sub-samples both have)."""
    ours = {runs[i]["sample"]: runs[i]["test"] for i in col[method]}
    theirs = {runs[i]["sample"]: runs[i]["test"] for i in col[other]}
    shared = [s for s in ours if s in theirs]
    return [ours[s] for s in shared], [theirs[s] for s in shared]


def _runs_p(runs: Sequence[dict], col: Mapping[str, list[int]], method: str, best: str) -> float | None:
    """The paired t p of a cell's runs against the best's, paired by sub-sample (None for the best
    itself, or with fewer than 2 pairs)."""
    if method == best:
        return None
    ours, theirs = _paired_tests(runs, col, method, best)
    return paired_t_p(ours, theirs) if len(ours) >= 2 else None


def companion_section(tests: dict, paper_name) -> str:
    """Markdown: per cell, the run-level and the sentence-level p against its column's best, s_sel,
    s_opt and the mark, with the legend."""
    text = (
        "\n## Significance: each cell against its column's best\n\n"
        "The marks (`<set> Sig` in the table) are decided on the runs: a paired t-test of the cell's runs "
        "against the best's, paired by dev sub-sample, with Holm's correction over the "
        f"{tests.get('holm_family', 0)} cells of the table tested against their column's best (`p runs (Holm)`). "
        "Beside it, `p AR`: stratified approximate randomization (Clark et al. 2011; `smtlib compare`) over "
        "the runs' test sentences pooled (each run's output the concatenation of its test sets' 1-best "
        "outputs, the statistic BLEU of all runs' outputs concatenated, ties counted); it treats the pooled "
        "sentences as independent and decides nothing. The column's best is the highest Test (the mean of "
        "the runs' Test). Marks: `best`; `*` significantly different from the column's best "
        f"(p runs (Holm) < {tests['alpha']}), i.e. worse; `=` not significantly different (not shown to be equal); "
        "`(*)`/`(=)` no run-level test (one run per cell): the mark is then the AR test's across test "
        "sentences, which ignores the optimizer's instability, so it is not the question of Clark et al. or "
        "of the paper; `n/a` not run. s_sel: bootstrap SD over test sentences of a run's BLEU on the "
        "concatenated test sets, averaged over runs; s_opt: SD of that BLEU across runs (`-` with one run).\n\n"
        f"Signature: `{tests['signature']}`\n\n"
        "| method | feature set | runs | Test | Δ Test to best | p runs | p runs (Holm) | p AR | s_sel | s_opt | mark |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n"
    )

    def p_text(value):
        return "-" if value is None else format_p(value, tests["alpha"])

    for c in tests["cells"]:
        s_opt = "-" if c["s_opt"] is None else f"{c['s_opt']:.2f}"
        text += (f"| {paper_name(c['method'])} | {c['feature_set']} | {c['runs']} | {c['test']:.2f} | "
                 f"{c['test_diff_to_best']:+.2f} | {p_text(c.get('p_runs_vs_best'))} | "
                 f"{p_text(c.get('p_runs_holm'))} | {p_text(c['p_vs_best'])} | {c['s_sel']:.2f} | {s_opt} | "
                 f"{c['mark']} |\n")
    if any(c["runs"] < 2 for c in tests["cells"]):
        text += ("\nCells with fewer than 2 runs: their p-values are across test sentences only and s_opt is "
                 "undefined; they say nothing about the optimizer's instability.\n")
    if "against" in tests:
        text += _against_section(tests, paper_name, p_text)
    return text


def _against_section(tests: dict, paper_name, p_text) -> str:
    """Markdown: each cell against the reference method's cell of its column (``against_cells``)."""
    ref = paper_name(tests["against"])
    text = (
        f"\n## Significance: each cell against {ref}\n\n"
        f"The marks of the `<set> vs {ref}` columns: the same run-level test, each cell's runs against {ref}'s "
        f"runs of the same column paired by dev sub-sample (two-sided), with Holm's correction over the "
        f"{tests['against_holm_family']} cells of the table tested against {ref} (a family of its own, apart "
        "from the tests against the column's best); `p AR` as above, deciding nothing. Marks: `ref` the "
        f"reference; `>` / `<` significantly above / below {ref} (p runs (Holm) < {tests['alpha']}); `=` not "
        "significantly different (not shown to be equal); `(>)`/`(<)`/`(=)` no run-level test (fewer than 2 "
        "runs that pair): the AR test's across test sentences; `-` a column without a "
        f"{ref} cell.\n\n"
        f"| method | feature set | runs | Test | {ref} | Δ Test | p runs | p runs (Holm) | p AR | mark |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n"
    )
    for c in tests["against_cells"]:
        text += (f"| {paper_name(c['method'])} | {c['feature_set']} | {c['runs']} | {c['test']:.2f} | "
                 f"{c['reference_test']:.2f} | {c['test_diff']:+.2f} | {p_text(c['p_runs'])} | "
                 f"{p_text(c['p_runs_holm'])} | {p_text(c['p_ar'])} | {c['mark']} |\n")
    return text
