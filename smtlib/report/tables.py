"""Tables 4-6 of Cherry & Foster (2012): cells averaged over runs, the paper's layout, the companion.

Cherry & Foster §5 report, for each method and feature set, Tune (dev BLEU of the kept weights) and
Test averaged over the runs on the dev sub-samples (Test also over the test sets), and SD, the
standard deviation across the sub-sample runs; :func:`aggregate` computes them (SD as the sample
standard deviation, n-1: the paper does not say which). :func:`table_rows` lays them out as the
paper does (rows = methods, columns = feature set x (Tune, Test, SD); ``n/a`` where a method does
not apply, ``-`` where SD is undefined because there is one run only) and :func:`companion` writes
the Markdown next to the table: the table again, Test per test set, the BLEU signature, the runs and
the settings, and where the runs were also scored with other metrics (their summaries' ``metrics``),
each metric's Test with its sacrebleu signature; those metrics' Test are then columns of the table
too, after each feature set's BLEU columns. Given the runs' test outputs, the table also marks each cell against its column's best
(a ``<set> Sig`` column, :mod:`smtlib.report.significance`) and the companion gives each cell's
p-value, s_sel and s_opt.
"""

from __future__ import annotations

import json
import statistics

from smtlib.errors import InputError
from smtlib.system.feature_sets import FEATURE_SETS

#: the paper's names of our registered methods (Cherry & Foster 2012, §4)
PAPER_NAMES = {"mert": "kb-mert", "lbmert": "lb-mert", "kbmira": "kb-mira", "lbmira": "lb-mira"}
#: the paper's column titles of the feature sets (the feature-set table owns them)
FEATURE_SET_TITLES = {name: fs.title for name, fs in FEATURE_SETS.items()}

COMPANION_INTRO = (
    "Rows: methods; columns: feature set x (Tune, Test, SD) "
    "as in Cherry & Foster (2012), Tables 4-6. Tune = dev BLEU of the kept weights (the best "
    "iteration of the loop) averaged over the dev sub-samples; Test = BLEU averaged over the "
    "test sets and the sub-sample runs; SD = sample standard deviation (n-1) across the "
    "sub-sample runs of the per-run test average. n/a: the method does not apply; -: one run "
    "only."
)


def paper_name(method: str) -> str:
    """The paper's name of a method (ours where the paper has none)."""
    return PAPER_NAMES.get(method, method)


def check_runs_in_table(runs: list[dict], methods: list[str], feature_sets: list[str]) -> None:
    """Every run belongs to a row (method) and column group (feature set) of the table."""
    unknown = {(r["method"], r["fs"]) for r in runs} - {(m, fs) for m in methods for fs in feature_sets}
    if unknown:
        raise InputError(f"summaries of runs outside the table: {sorted(unknown)}")


def aggregate(runs: list[dict]) -> dict[tuple[str, str], dict]:
    """(method, feature set) -> Tune, Test, SD and run count, as Cherry & Foster §5 average them.

    Tune and Test are means over the runs (one per dev sub-sample; a run's Test is already the mean
    over the test sets); SD is the sample standard deviation of the runs' Test (None for one run).
    Two runs of the same cell with the same sub-sample are an error (a summary listed twice).
    """
    cells: dict[tuple[str, str], list[dict]] = {}
    for r in runs:
        cells.setdefault((r["method"], r["fs"]), []).append(r)
    metrics = evaluation_metrics(runs)
    out = {}
    for key, rs in cells.items():
        samples = [r["sample"] for r in rs]
        if len(set(samples)) != len(samples):
            raise InputError(f"{key[0]}/{key[1]}: sub-sample listed twice ({sorted(samples)})")
        missing = [name for name in metrics for r in rs if name not in r.get("metrics", {})]
        if missing:
            raise InputError(f"{key[0]}/{key[1]}: a run without {missing[0]} test scores (every run of a table is "
                             "scored with the same metrics)")
        tests = [r["test"] for r in rs]
        out[key] = {
            "tune": statistics.fmean(r["tune"] for r in rs),
            "test": statistics.fmean(tests),
            "sd": statistics.stdev(tests) if len(tests) > 1 else None,
            "runs": len(rs),
            "best_iterations": [r["best_iteration"] for r in rs],
        }
        if metrics:
            out[key]["metrics"] = {name: statistics.fmean(r["metrics"][name]["test"] for r in rs) for name in metrics}
    return out


def metric_label(name: str) -> str:
    """sacrebleu's name of an evaluation metric's score (``chrF2``, ``TER``), a column's title."""
    from smtlib.bleu.metrics import METRICS

    return METRICS[name].label if name in METRICS else name


def table_rows(
    cells: dict,
    methods: list[str],
    feature_sets: list[str],
    not_applicable: set[tuple[str, str]],
    marks: dict[tuple[str, str], str] | None = None,
    against: tuple[str, dict[tuple[str, str], str]] | None = None,
) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a table: rows = methods, columns = feature set x (Tune, Test, SD), and with
    ``marks`` ((method, feature set) -> mark, :func:`smtlib.report.significance.mark`) a fourth
    column per feature set, ``<set> Sig``; with ``against`` (a reference method and its marks,
    :func:`smtlib.report.significance.against_mark`) one more, ``<set> vs <method>`` (``-`` where
    the column has no cell of the reference). Where the runs were also scored with other metrics (the
    cells' ``metrics``, :func:`aggregate`), each feature set then has one column per metric, titled
    with sacrebleu's name of its score (``<set> chrF2``, ``<set> TER``): its Test, the mean over the
    test sets and runs; a BLEU-only table has none of them."""
    columns = ("Tune", "Test", "SD") if marks is None else ("Tune", "Test", "SD", "Sig")
    if against is not None:
        columns += (f"vs {paper_name(against[0])}",)
    metrics = list(next((c["metrics"] for c in cells.values() if "metrics" in c), {}))
    titles = [*columns, *(metric_label(name) for name in metrics)]
    header = ["method"] + [f"{FEATURE_SET_TITLES.get(fs, fs)} {c}" for fs in feature_sets for c in titles]
    rows = []
    for m in methods:
        row = [paper_name(m)]
        for fs in feature_sets:
            if (m, fs) in not_applicable:
                row += ["n/a"] * len(titles)
                continue
            cell = cells.get((m, fs))
            if cell is None:
                raise InputError(f"no runs for method {m!r} on feature set {fs!r} (and it is not marked n/a)")
            row += [f"{cell['tune']:.2f}", f"{cell['test']:.2f}", "-" if cell["sd"] is None else f"{cell['sd']:.2f}"]
            if marks is not None:
                row.append(marks[(m, fs)])
            if against is not None:
                row.append(against[1].get((m, fs), "-"))
            row += [f"{cell['metrics'][name]:.2f}" for name in metrics]
        rows.append(row)
    return header, rows


def format_tsv(header: list[str], rows: list[list[str]]) -> str:
    """A table as TSV text (header line first)."""
    return "".join("\t".join(r) + "\n" for r in [header, *rows])


def format_markdown(header: list[str], rows: list[list[str]]) -> str:
    """A table as a Markdown pipe table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _per_test_set(runs: list[dict], methods: list[str], feature_sets: list[str]) -> str:
    """Markdown: Test BLEU of each test set, averaged over each cell's runs."""
    test_names = sorted({t for r in runs for t in r["tests"]})
    text = (
        "| method | feature set | " + " | ".join(test_names) + " |\n|---|---|" + "---|" * len(test_names) + "\n"
    )
    for m in methods:
        for fs in feature_sets:
            rs = [r for r in runs if r["method"] == m and r["fs"] == fs]
            if rs:
                means = [statistics.fmean(r["tests"][t] for r in rs if t in r["tests"]) for t in test_names]
                text += f"| {paper_name(m)} | {fs} | " + " | ".join(f"{v:.2f}" for v in means) + " |\n"
    return text


def evaluation_metrics(runs: list[dict]) -> list[str]:
    """The metrics besides BLEU that the runs' test sets were scored with, in first-seen order."""
    return list(dict.fromkeys(m for r in runs for m in r.get("metrics", {})))


def _metric_section(runs: list[dict], methods: list[str], feature_sets: list[str]) -> str:
    """Markdown: each evaluation metric's Test (mean over the test sets and runs) per cell, BLEU first,
    and each metric's sacrebleu signature."""
    metrics = evaluation_metrics(runs)
    labels = ["BLEU"] + [metric_label(m) for m in metrics]
    text = ("\n## Test score of every evaluation metric (mean over test sets and runs)\n\n"
            "| method | feature set | " + " | ".join(labels) + " |\n|---|---|" + "---|" * len(labels) + "\n")
    for m in methods:
        for fs in feature_sets:
            rs = [r for r in runs if r["method"] == m and r["fs"] == fs]
            if not rs:
                continue
            means = [statistics.fmean(r["test"] for r in rs)]
            means += [statistics.fmean(r["metrics"][name]["test"] for r in rs) for name in metrics]
            text += f"| {paper_name(m)} | {fs} | " + " | ".join(f"{v:.2f}" for v in means) + " |\n"
    blocks = []
    for label, name in zip(labels[1:], metrics, strict=True):
        signatures = sorted({s for r in runs for s in r["metrics"][name].get("signatures", [])})
        blocks.append(f"{label}:\n\n" + "".join(f"    {s}\n" for s in signatures))
    return text + "\n## Signatures of the evaluation metrics\n\n" + "\n".join(blocks)


def initial_section(initial: dict[str, dict[str, dict]], runs: list[dict], cells: dict, methods: list[str],
                    feature_sets: list[str]) -> str:
    """The companion's section on the tuning loop's starting point: the initial weights' Test (mean over
    the test sets, as a cell's) per feature set, and each cell's Test minus it.

    Parameters
    ----------
    initial
        Feature set -> test set -> ``smtlib bleu`` result of decoding it with the initial weights (the
        decoder and BLEU settings of the runs).
    runs, cells
        The table's run summaries and their :func:`aggregate`.

    Raises
    ------
    InputError
        If a feature set lacks a test set its runs have, or a BLEU signature differs from the runs'
        (a baseline scored otherwise than the cells is no baseline).
    """
    signatures = {s for r in runs for s in r.get("signatures", [])}
    lines = ["| feature set | " + " | ".join(["initial weights: Test", *(paper_name(m) for m in methods)]) + " |",
             "|---" * (len(methods) + 2) + "|"]
    per_set = []
    for fs in feature_sets:
        if fs not in initial:
            continue
        wanted = sorted({t for r in runs if r["fs"] == fs for t in r["tests"]})
        scores = initial[fs]
        missing = [t for t in wanted if t not in scores]
        if missing:
            raise InputError(f"--initial: feature set {fs} has no score for test set(s) {', '.join(missing)}")
        for t, result in scores.items():
            if signatures and result.get("signature") not in signatures:
                raise InputError(f"--initial {fs}:{t}: BLEU signature {result.get('signature')!r} is not the runs' "
                                 f"({', '.join(sorted(signatures))})")
        test = statistics.fmean(scores[t]["score"] for t in sorted(scores))
        deltas = [f"{cells[(m, fs)]['test'] - test:+.2f}" if (m, fs) in cells else "-" for m in methods]
        lines.append(f"| {fs} | {test:.2f} | " + " | ".join(deltas) + " |")
        per_set.append(f"{fs}: " + ", ".join(f"{t} {scores[t]['score']:.2f}" for t in sorted(scores)))
    if len(lines) == 2:
        return ""
    return ("\n## The starting point: initial weights\n\n"
            "Test BLEU of the loop's initial weights (Cherry & Foster 2012, §4.2: 1.0 for the TM, LM and "
            "distortion features, 0 for the rest), decoded and scored like the tuned weights; then each "
            "method's Test minus it (positive: tuning helped on test).\n\n"
            + "\n".join(lines) + "\n\nPer test set: " + "; ".join(per_set) + ".\n")


def companion(
    runs: list[dict],
    cells: dict,
    header: list[str],
    rows: list[list[str]],
    methods: list[str],
    feature_sets: list[str],
    title: str,
    settings: dict,
    tests: dict | None = None,
    initial: dict[str, dict[str, dict]] | None = None,
) -> str:
    """The Markdown companion of a table: the table, Test per test set, the initial weights' Test (when
    given: :func:`initial_section`), BLEU signature, the other evaluation metrics' Test with their
    signatures (where the runs have them), runs, settings.

    Parameters
    ----------
    runs
        The run summaries the table averages (:func:`smtlib.report.runs.read_summaries`).
    cells, header, rows
        :func:`aggregate` of ``runs`` and the :func:`table_rows` made of it.
    methods, feature_sets
        The table's rows and column groups, in order.
    title
        The companion's heading.
    settings
        The settings to record (written as JSON).
    tests
        :func:`smtlib.report.significance.table_tests` with its ``signature``, if the cells were
        tested: per cell, p against the column's best, s_sel, s_opt and the mark.
    initial
        Feature set -> test set -> BLEU result of the initial weights (:func:`initial_section`).
    """
    signatures = sorted({s for r in runs for s in r.get("signatures", [])})
    pairs = sorted({r["pair"] for r in runs})
    text = f"# {title}\n\n"
    text += f"Language pair(s): {', '.join(pairs)}. {COMPANION_INTRO}\n\n"
    text += format_markdown(header, rows)
    if tests is not None:
        from smtlib.report.significance import companion_section

        text += companion_section(tests, paper_name)
    text += "\n## Test BLEU per test set (mean over runs)\n\n" + _per_test_set(runs, methods, feature_sets)
    if initial:
        text += initial_section(initial, runs, cells, methods, feature_sets)
    text += "\n## BLEU signature\n\n" + "".join(f"    {s}\n" for s in signatures)
    if evaluation_metrics(runs):
        text += _metric_section(runs, methods, feature_sets)
    text += "\n## Runs\n\n| method | feature set | runs | best iterations |\n|---|---|---|---|\n"
    for (m, fs), c in sorted(cells.items()):
        text += f"| {paper_name(m)} | {fs} | {c['runs']} | {' '.join(map(str, c['best_iterations']))} |\n"
    text += "\n## Settings\n\n```json\n" + json.dumps(settings, indent=2, sort_keys=True) + "\n```\n"
    return text
