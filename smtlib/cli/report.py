"""Tables, companions and figures of the workflow, in the layout of Cherry & Foster (2012).

    smtlib report best --dev-bleu B0 .. BN --weights W0 .. WN --out-weights W --out-curve C [--meta k=v ..]
    smtlib report summary --curve C --test NAME=BLEU.json .. --out S.json
    smtlib report table --summaries S .. --methods M .. --feature-sets F .. --out T.tsv --companion T.md
                        [--not-applicable METHOD:FS ..] [--settings JSON] [--title TEXT]
    smtlib report curves --curves C .. --out PNG --tsv TSV [--title TEXT]
    smtlib report figure1 --summaries S .. --out PNG --tsv TSV
    smtlib report replay --truth results.dat[.gz] --score METHOD:IT:BLEU.json .. --out T.tsv [--figure PNG]
    smtlib report paper --table T.tsv --paper table4 --out T_vs_paper.tsv

``best`` keeps the weights with the best dev BLEU of a tuning loop (§4: "return the weights that
achieve the best development BLEU score"; ties go to the earliest iteration) and writes the learning
curve. ``summary`` gathers one run's tune and test scores. ``table`` averages runs as §5 does: Tune
and Test averaged over the dev sub-samples (Test also over the test sets), SD = the sample standard
deviation (n-1) across sub-samples of the per-run test average; ``n/a`` where a method does not apply,
``-`` where a statistic is undefined (SD of a single run). ``figure1`` draws tune and test BLEU
against each method's regularization setting (Figure 1). ``replay`` sets the methods' BLEU on
Moses's recorded n-best lists next to the best BLEU Moses's MERT recorded per iteration.
BLEU JSON files are the output of ``smtlib bleu`` (sacrebleu-equal corpus BLEU with its signature).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys

from smtlib.errors import InputError
from smtlib.io import atomic_output, open_text, read_lines


#: the paper's names of our registered methods (Cherry & Foster 2012, §4)
PAPER_NAMES = {"mert": "kb-mert", "lbmert": "lb-mert", "kbmira": "kb-mira", "lbmira": "lb-mira"}
FEATURE_SET_TITLES = {"small": "Small", "medium": "Medium", "big": "Big", "overfit": "Big (over-fitting)"}
META_KEYS = ("pair", "fs", "method", "setting", "sample")


# ------------------------------------------------------------------ reading
def read_bleu(path: str | os.PathLike) -> dict:
    """A ``smtlib bleu`` JSON result (``score`` 0-100 and ``signature``), checked."""
    try:
        with open_text(path, what="BLEU result") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise InputError(f"not a JSON BLEU result ({exc.msg})", path, exc.lineno) from None
    score = data.get("score") if isinstance(data, dict) else None
    if not isinstance(score, (int, float)) or not 0.0 <= score <= 100.0 or not math.isfinite(score):
        raise InputError("no BLEU 'score' between 0 and 100", path)
    return data


def _read_json(path: str | os.PathLike, what: str) -> dict:
    try:
        with open_text(path, what=what) as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON ({exc.msg})", path, exc.lineno) from None


def _write_json(path: str | os.PathLike, data) -> None:
    with atomic_output(path) as fh:
        json.dump(data, fh, indent=2, sort_keys=True)
        fh.write("\n")


def _meta(items: list[str] | None) -> dict[str, str]:
    meta = {}
    for item in items or []:
        if "=" not in item:
            raise InputError(f"--meta expects key=value, got {item!r}")
        key, value = item.split("=", 1)
        meta[key] = value
    return meta


# ------------------------------------------------------------------ best iteration and learning curve
def best_iteration(scores: list[float]) -> int:
    """Index of the best dev BLEU; ties go to the earliest iteration (fewer tuning steps)."""
    if not scores:
        raise InputError("no dev BLEU scores")
    best = 0
    for i, s in enumerate(scores):
        if s > scores[best]:
            best = i
    return best


def read_curve(path: str | os.PathLike) -> list[dict]:
    """The rows of a learning-curve TSV written by ``smtlib report best``."""
    lines = read_lines(path, what="learning curve")
    header = lines[0].split("\t")
    need = {"iteration", "dev_bleu", "best", *META_KEYS}
    if not need <= set(header):
        raise InputError(f"not a learning curve: missing columns {sorted(need - set(header))}", path, 1)
    rows = []
    for n, line in enumerate(lines[1:], 2):
        values = line.split("\t")
        if len(values) != len(header):
            raise InputError(f"{len(values)} fields, expected {len(header)}", path, n)
        row = dict(zip(header, values))
        try:
            row["iteration"] = int(row["iteration"])
            row["dev_bleu"] = float(row["dev_bleu"])
            row["best"] = row["best"] == "1"
        except ValueError:
            raise InputError("malformed number", path, n) from None
        rows.append(row)
    if sum(r["best"] for r in rows) != 1:
        raise InputError("a learning curve marks exactly one best iteration", path)
    return rows


def cmd_best(args: argparse.Namespace) -> int:
    if len(args.dev_bleu) != len(args.weights):
        raise InputError(f"{len(args.dev_bleu)} dev BLEU files for {len(args.weights)} weight files "
                         "(give the BLEU of decoding with weights 0..N, in order)")
    results = [read_bleu(p) for p in args.dev_bleu]
    scores = [r["score"] for r in results]
    best = best_iteration(scores)
    meta = _meta(args.meta)
    with open_text(args.weights[best], what="weights") as src, atomic_output(args.out_weights) as out:
        out.write(f"# best dev BLEU {scores[best]:.2f} at iteration {best} of {len(scores) - 1} "
                  f"({results[best].get('signature', '')})\n")
        out.write(src.read())
    with atomic_output(args.out_curve) as out:
        keys = [k for k in META_KEYS]
        out.write("\t".join(keys + ["iteration", "dev_bleu", "best", "signature"]) + "\n")
        for i, r in enumerate(results):
            out.write("\t".join([meta.get(k, "") for k in keys] +
                                [str(i), f"{r['score']:.4f}", "1" if i == best else "0", r.get("signature", "")]) + "\n")
    print(f"best dev BLEU {scores[best]:.2f} at iteration {best}", file=sys.stderr)
    return 0


# ------------------------------------------------------------------ one run's summary
def cmd_summary(args: argparse.Namespace) -> int:
    curve = read_curve(args.curve)
    best = next(r for r in curve if r["best"])
    tests = {}
    signatures = {best["signature"]}
    for item in args.test:
        if "=" not in item:
            raise InputError(f"--test expects NAME=FILE, got {item!r}")
        name, path = item.split("=", 1)
        result = read_bleu(path)
        tests[name] = result["score"]
        signatures.add(result.get("signature", ""))
    if not tests:
        raise InputError("a run summary needs at least one --test NAME=FILE")
    summary = {k: best[k] for k in META_KEYS}
    summary.update(tune=best["dev_bleu"], best_iteration=best["iteration"], iterations=len(curve) - 1,
                   tests=tests, test=statistics.fmean(tests.values()), signatures=sorted(s for s in signatures if s))
    _write_json(args.out, summary)
    return 0


def read_summaries(paths: list[str]) -> list[dict]:
    runs = []
    for path in paths:
        s = _read_json(path, "run summary")
        for key in (*META_KEYS, "tune", "test", "tests"):
            if key not in s:
                raise InputError(f"run summary without {key!r}", path)
        s["_path"] = path
        runs.append(s)
    return runs


# ------------------------------------------------------------------ the paper's tables
def aggregate(runs: list[dict]) -> dict[tuple[str, str], dict]:
    """(method, feature set) -> Tune, Test, SD and run count, as Cherry & Foster §5 average them.

    Tune and Test are means over the runs (one per dev sub-sample; a run's Test is already the mean
    over the test sets); SD is the sample standard deviation of the runs' Test (None for one run).
    Two runs of the same cell with the same sub-sample are an error (a summary listed twice).
    """
    cells: dict[tuple[str, str], list[dict]] = {}
    for r in runs:
        cells.setdefault((r["method"], r["fs"]), []).append(r)
    out = {}
    for key, rs in cells.items():
        samples = [r["sample"] for r in rs]
        if len(set(samples)) != len(samples):
            raise InputError(f"{key[0]}/{key[1]}: sub-sample listed twice ({sorted(samples)})")
        tests = [r["test"] for r in rs]
        out[key] = {"tune": statistics.fmean(r["tune"] for r in rs), "test": statistics.fmean(tests),
                    "sd": statistics.stdev(tests) if len(tests) > 1 else None, "runs": len(rs),
                    "best_iterations": [r["best_iteration"] for r in rs]}
    return out


def table_rows(cells: dict, methods: list[str], feature_sets: list[str],
               not_applicable: set[tuple[str, str]]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a table: rows = methods, columns = feature set x (Tune, Test, SD)."""
    header = ["method"] + [f"{FEATURE_SET_TITLES.get(fs, fs)} {c}" for fs in feature_sets for c in ("Tune", "Test", "SD")]
    rows = []
    for m in methods:
        row = [PAPER_NAMES.get(m, m)]
        for fs in feature_sets:
            if (m, fs) in not_applicable:
                row += ["n/a"] * 3
                continue
            cell = cells.get((m, fs))
            if cell is None:
                raise InputError(f"no runs for method {m!r} on feature set {fs!r} (and it is not marked n/a)")
            row += [f"{cell['tune']:.2f}", f"{cell['test']:.2f}", "-" if cell["sd"] is None else f"{cell['sd']:.2f}"]
        rows.append(row)
    return header, rows


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def cmd_table(args: argparse.Namespace) -> int:
    runs = read_summaries(args.summaries)
    not_applicable = set()
    for item in args.not_applicable or []:
        if ":" not in item:
            raise InputError(f"--not-applicable expects METHOD:FEATURE_SET, got {item!r}")
        m, fs = item.split(":", 1)
        not_applicable.add((m, fs))
    unknown = {(r["method"], r["fs"]) for r in runs} - {(m, fs) for m in args.methods for fs in args.feature_sets}
    if unknown:
        raise InputError(f"summaries of runs outside the table: {sorted(unknown)}")
    cells = aggregate(runs)
    header, rows = table_rows(cells, args.methods, args.feature_sets, not_applicable)
    with atomic_output(args.out) as out:
        out.write("\t".join(header) + "\n")
        for row in rows:
            out.write("\t".join(row) + "\n")
    signatures = sorted({s for r in runs for s in r.get("signatures", [])})
    settings = json.loads(args.settings) if args.settings else {}
    pairs = sorted({r["pair"] for r in runs})
    with atomic_output(args.companion) as out:
        out.write(f"# {args.title or os.path.basename(args.out)}\n\n")
        out.write(f"Language pair(s): {', '.join(pairs)}. Rows: methods; columns: feature set x (Tune, Test, SD) "
                  "as in Cherry & Foster (2012), Tables 4-6. Tune = dev BLEU of the kept weights (the best "
                  "iteration of the loop) averaged over the dev sub-samples; Test = BLEU averaged over the "
                  "test sets and the sub-sample runs; SD = sample standard deviation (n-1) across the "
                  "sub-sample runs of the per-run test average. n/a: the method does not apply; -: one run "
                  "only.\n\n")
        out.write(_markdown(header, rows))
        test_names = sorted({t for r in runs for t in r["tests"]})
        out.write("\n## Test BLEU per test set (mean over runs)\n\n| method | feature set | "
                  + " | ".join(test_names) + " |\n|---|---|" + "---|" * len(test_names) + "\n")
        for m in args.methods:
            for fs in args.feature_sets:
                rs = [r for r in runs if r["method"] == m and r["fs"] == fs]
                if rs:
                    means = [statistics.fmean(r["tests"][t] for r in rs if t in r["tests"]) for t in test_names]
                    out.write(f"| {PAPER_NAMES.get(m, m)} | {fs} | " + " | ".join(f"{v:.2f}" for v in means) + " |\n")
        out.write("\n## BLEU signature\n\n")
        for s in signatures:
            out.write(f"    {s}\n")
        out.write("\n## Runs\n\n| method | feature set | runs | best iterations |\n|---|---|---|---|\n")
        for (m, fs), c in sorted(cells.items()):
            out.write(f"| {PAPER_NAMES.get(m, m)} | {fs} | {c['runs']} | {' '.join(map(str, c['best_iterations']))} |\n")
        out.write("\n## Settings\n\n```json\n" + json.dumps(settings, indent=2, sort_keys=True) + "\n```\n")
    return 0


# ------------------------------------------------------------------ figures
def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str) -> None:
    with atomic_output(path, binary=True, compress=False) as out:
        fig.savefig(out, format=os.path.splitext(path)[1].lstrip(".") or "png", dpi=120, bbox_inches="tight")


def cmd_curves(args: argparse.Namespace) -> int:
    curves = [read_curve(p) for p in args.curves]
    with atomic_output(args.tsv) as out:
        out.write("\t".join([*META_KEYS, "iteration", "dev_bleu", "best"]) + "\n")
        for rows in curves:
            for r in rows:
                out.write("\t".join([str(r[k]) for k in META_KEYS] +
                                    [str(r["iteration"]), f"{r['dev_bleu']:.4f}", "1" if r["best"] else "0"]) + "\n")
    plt = _pyplot()
    groups: dict[str, list[list[dict]]] = {}
    for rows in curves:
        groups.setdefault(rows[0]["fs"], []).append(rows)
    order = [fs for fs in FEATURE_SET_TITLES if fs in groups] + sorted(set(groups) - set(FEATURE_SET_TITLES))
    fig, axes = plt.subplots(1, len(order), figsize=(5 * len(order), 4), squeeze=False)
    for ax, fs in zip(axes[0], order):
        methods = sorted({rows[0]["method"] for rows in groups[fs]})
        colors = {m: plt.cm.tab20(i % 20) for i, m in enumerate(methods)}
        for rows in groups[fs]:
            m = rows[0]["method"]
            first = rows[0]["sample"] == "0"
            ax.plot([r["iteration"] for r in rows], [r["dev_bleu"] for r in rows], color=colors[m], alpha=0.8,
                    linewidth=1.5 if first else 0.7, label=PAPER_NAMES.get(m, m) if first else None)
            b = next(r for r in rows if r["best"])
            ax.plot([b["iteration"]], [b["dev_bleu"]], "o", color=colors[m], markersize=3)
        ax.set_title(f"{FEATURE_SET_TITLES.get(fs, fs)}")
        ax.set_xlabel("iteration (weights decoded)")
        ax.set_ylabel("dev BLEU")
        ax.legend(fontsize=7)
    fig.suptitle(args.title or "learning curves (one line per run; dots: kept weights)")
    _save(fig, args.out)
    return 0


def cmd_figure1(args: argparse.Namespace) -> int:
    runs = read_summaries(args.summaries)
    points: dict[str, dict[float, list[dict]]] = {}
    params = {}
    for r in runs:
        setting = r["setting"]
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=(.+)", setting)
        if not m:
            raise InputError(f"figure 1 needs runs with a PARAM=VALUE setting, got {setting!r}", r["_path"])
        params.setdefault(r["method"], m.group(1))
        points.setdefault(r["method"], {}).setdefault(float(m.group(2)), []).append(r)
    with atomic_output(args.tsv) as out:
        out.write("method\tparameter\tvalue\truns\ttune\ttest\n")
        for method, by_value in points.items():
            for value in sorted(by_value):
                rs = by_value[value]
                out.write(f"{method}\t{params[method]}\t{value:g}\t{len(rs)}\t"
                          f"{statistics.fmean(r['tune'] for r in rs):.4f}\t{statistics.fmean(r['test'] for r in rs):.4f}\n")
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(points), figsize=(4.5 * len(points), 3.8), squeeze=False)
    for ax, (method, by_value) in zip(axes[0], points.items()):
        values = sorted(by_value)
        for key, style in (("tune", "o-"), ("test", "s--")):
            ax.plot(values, [statistics.fmean(r[key] for r in by_value[v]) for v in values], style, label=key.capitalize())
        ax.set_xscale("log")
        ax.set_xlabel(f"{params[method]} (log scale)")
        ax.set_ylabel("BLEU")
        ax.set_title(PAPER_NAMES.get(method, method))
        ax.legend(fontsize=8)
    fig.suptitle(args.title or "Figure 1: regularization (Cherry & Foster 2012)")
    _save(fig, args.out)
    return 0


# ------------------------------------------------------------------ replay of Moses's recorded n-best lists
def read_moses_results(path: str | os.PathLike) -> dict[int, float]:
    """Moses's ``truth/results.dat`` of mert-moses regression tests: iteration -> best BLEU (0-100)."""
    best = {}
    for n, line in enumerate(read_lines(path, what="Moses results.dat"), 1):
        m = re.match(r"^STDOUT_\d+=best_(\d+):\s+([0-9.eE+-]+)\s*$", line)
        if m:
            try:
                best[int(m.group(1))] = 100.0 * float(m.group(2))
            except ValueError:
                raise InputError("malformed best_N value", path, n) from None
    if not best:
        raise InputError("no 'best_N:' lines (not a mert-moses results.dat)", path)
    return best


def cmd_replay(args: argparse.Namespace) -> int:
    truth = read_moses_results(args.truth)
    scores: dict[str, dict[int, float]] = {}
    signatures = set()
    for item in args.score:
        parts = item.split(":", 2)
        if len(parts) != 3 or not parts[1].isdigit():
            raise InputError(f"--score expects METHOD:ITERATION:FILE, got {item!r}")
        result = read_bleu(parts[2])
        scores.setdefault(parts[0], {})[int(parts[1])] = result["score"]
        signatures.add(result.get("signature", ""))
    iterations = sorted({i for s in scores.values() for i in s})
    header = ["method", "final_bleu", "best_bleu", "best_iteration"] + [f"it{i}" for i in iterations]
    rows = []
    for method, by_it in scores.items():
        series = [by_it.get(i) for i in iterations]
        present = [(i, s) for i, s in zip(iterations, series) if s is not None]
        b = best_iteration([s for _, s in present])
        rows.append([method, f"{present[-1][1]:.2f}", f"{present[b][1]:.2f}", str(present[b][0])] +
                    ["" if s is None else f"{s:.2f}" for s in series])
    moses = [truth.get(i) for i in iterations]
    present = [(i, s) for i, s in zip(iterations, moses) if s is not None]
    if present:
        b = best_iteration([s for _, s in present])
        rows.append(["moses-mert (recorded)", f"{present[-1][1]:.2f}", f"{present[b][1]:.2f}", str(present[b][0])] +
                    ["" if s is None else f"{s:.2f}" for s in moses])
    with atomic_output(args.out) as out:
        out.write("\t".join(header) + "\n")
        for row in rows:
            out.write("\t".join(row) + "\n")
        for s in sorted(signatures):
            out.write(f"# signature: {s}\n")
    if args.figure:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4))
        for method, by_it in scores.items():
            its = sorted(by_it)
            ax.plot(its, [by_it[i] for i in its], marker=".", label=PAPER_NAMES.get(method, method))
        ax.plot([i for i, _ in present], [s for _, s in present], "k--", linewidth=2, label="Moses MERT (recorded)")
        ax.set_xlabel("iteration (pool = n-best lists 1..i)")
        ax.set_ylabel("BLEU of the pool reranked")
        ax.legend(fontsize=7, ncol=2)
        _save(fig, args.figure)
    return 0


def cmd_paper(args: argparse.Namespace) -> int:
    """Our table next to Cherry & Foster's (:mod:`smtlib.report.paper`)."""
    from smtlib.report.paper import compare, paper_table, read_our_table

    rows = compare(read_our_table(args.table), paper_table(args.paper))
    with atomic_output(args.out) as out:
        out.write(f"# {os.path.basename(args.table)} next to Cherry & Foster (2012) {args.paper}; differences are to each table's Medium kb-mert Test\n")
        out.write("\t".join(rows[0]) + "\n")
        for row in rows:
            out.write("\t".join(row.values()) + "\n")
    return 0


# ------------------------------------------------------------------ CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True

    p = sub.add_parser("best", help="keep the weights with the best dev BLEU; write the learning curve")
    p.add_argument("--dev-bleu", nargs="+", required=True, help="smtlib bleu JSON of decoding with weights 0..N")
    p.add_argument("--weights", nargs="+", required=True, help="weights 0..N (0 = initial)")
    p.add_argument("--out-weights", required=True)
    p.add_argument("--out-curve", required=True, help="learning curve TSV")
    p.add_argument("--meta", nargs="*", help="pair=.. fs=.. method=.. setting=.. sample=.. (written in the curve)")
    p.set_defaults(_action=cmd_best)

    p = sub.add_parser("summary", help="one run's tune and test scores as JSON")
    p.add_argument("--curve", required=True, help="learning curve of the run (smtlib report best)")
    p.add_argument("--test", nargs="+", required=True, help="NAME=FILE: smtlib bleu JSON of each test set")
    p.add_argument("--out", required=True)
    p.set_defaults(_action=cmd_summary)

    p = sub.add_parser("table", help="a table in the paper's layout and its companion")
    p.add_argument("--summaries", nargs="+", required=True)
    p.add_argument("--methods", nargs="+", required=True, help="rows, in order")
    p.add_argument("--feature-sets", nargs="+", required=True, help="column groups, in order")
    p.add_argument("--not-applicable", nargs="*", help="METHOD:FEATURE_SET cells shown as n/a")
    p.add_argument("--out", required=True, help="TSV")
    p.add_argument("--companion", required=True, help="Markdown: the table, BLEU signature, settings, runs")
    p.add_argument("--settings", help="JSON object of the settings to record in the companion")
    p.add_argument("--title")
    p.set_defaults(_action=cmd_table)

    p = sub.add_parser("curves", help="learning curves (dev BLEU by iteration) of many runs")
    p.add_argument("--curves", nargs="+", required=True)
    p.add_argument("--out", required=True, help="figure (PNG/SVG/PDF)")
    p.add_argument("--tsv", required=True, help="all curves in one TSV")
    p.add_argument("--title")
    p.set_defaults(_action=cmd_curves)

    p = sub.add_parser("figure1", help="regularization sweep: tune and test BLEU by setting (Figure 1)")
    p.add_argument("--summaries", nargs="+", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--tsv", required=True)
    p.add_argument("--title")
    p.set_defaults(_action=cmd_figure1)

    p = sub.add_parser("replay", help="methods on Moses's recorded n-best lists vs Moses's recorded BLEU")
    p.add_argument("--truth", required=True, help="Moses's truth/results.dat (plain or .gz)")
    p.add_argument("--score", nargs="+", required=True, help="METHOD:ITERATION:FILE (smtlib bleu JSON)")
    p.add_argument("--out", required=True, help="TSV")
    p.add_argument("--figure", help="BLEU by iteration (PNG)")
    p.set_defaults(_action=cmd_replay)

    p = sub.add_parser("paper", help="a table next to the paper's (differences to Medium kb-mert, ranks)")
    p.add_argument("--table", required=True, help="TSV of `smtlib report table`")
    p.add_argument("--paper", required=True, choices=("table4", "table5", "table6"), help="the paper's table")
    p.add_argument("--out", required=True, help="TSV")
    p.set_defaults(_action=cmd_paper)


def run(args: argparse.Namespace) -> int:
    return args._action(args)
