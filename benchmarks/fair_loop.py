"""The loop check of issue 22: every method's tuning loop, read from a workflow run, against kb-mert.

Reads the finished runs of one (pair, feature set, dev sub-sample) from a workflow directory
(``results/tune/<pair>/<fs>/<method>/<setting>/s<sample>``: ``curve.tsv``, ``summary.json``) and
prints a Markdown table: per method and setting, the dev BLEU of the weights of every iteration
(iteration 0 = the initial weights), the best dev BLEU and its iteration, the test BLEU of the
best-dev weights per test set and their mean, and the best dev BLEU's difference to kb-mert's
(``mert``, default setting). The loop is the workflow's own (``rules/tune*.smk``): nothing is rerun
here, so the numbers are those of the tables.

    python benchmarks/fair_loop.py --workdir results/table-run [--pair fr-en] [--fs medium] [--sample 0] [--partial]

Last line: ``metric: value``, the largest shortfall of a default-setting method's best dev BLEU below
kb-mert's (0 when none is below), the figure issue 22 bounds by 1.0.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from smtlib.report.runs import read_curve  # noqa: E402

#: the paper's rows, in its order (Cherry & Foster 2012, Table 4)
ORDER = ["mert", "lbmert", "mira", "kbmira", "lbmira", "pro", "mr", "svm"]


def partial_run(run: pathlib.Path, method: str, setting: str) -> dict | None:
    """An unfinished run: the dev BLEU of the iterations decoded so far (iteration 0: the shared first
    decode; None for an iteration whose scoring decode has not run yet), no test scores yet."""
    first = run.parent.parent.parent / "first" / run.name / "dev.bleu.json"
    done = {int(p.parent.name[2:]): json.loads(p.read_text())["score"] for p in run.glob("it*/dev.bleu.json")}
    if not first.exists() or not done:
        return None
    # iteration i's weights are scored by the decode of it{i+1}; those decodes finish in any order
    curve = [json.loads(first.read_text())["score"]] + [done.get(it) for it in range(2, max(done) + 1)]
    best = max((i for i, b in enumerate(curve) if b is not None), key=lambda i: (curve[i], -i))
    return {"method": method, "setting": setting + " (running)", "curve": curve, "best": curve[best],
            "best_iteration": best, "tests": {}, "test": float("nan")}


def read_runs(workdir: pathlib.Path, pair: str, fs: str, sample: int, partial: bool = False) -> list[dict]:
    base = workdir / "results" / "tune" / pair / fs
    runs = []
    for run in sorted(base.glob(f"*/*/s{sample}")):
        method, setting = run.parts[-3], run.parts[-2]
        if method == "first":
            continue
        if not (run / "summary.json").exists():
            record = partial_run(run, method, setting) if partial else None
            if record is not None:
                runs.append(record)
            continue
        summary = json.loads((run / "summary.json").read_text())
        curve = read_curve(run / "curve.tsv")
        runs.append({"method": method, "setting": setting, "curve": [r["dev_bleu"] for r in curve],
                     "best": summary["tune"], "best_iteration": summary["best_iteration"],
                     "tests": summary["tests"], "test": summary["test"]})
    rank = {m: i for i, m in enumerate(ORDER)}
    return sorted(runs, key=lambda r: (rank.get(r["method"], len(ORDER)), r["setting"] != "default", r["setting"]))


def markdown(runs: list[dict]) -> tuple[str, float | None]:
    reference = next((r["best"] for r in runs if r["method"] == "mert" and r["setting"].split()[0] == "default"),
                     None)
    tests = sorted({t for r in runs for t in r["tests"]})
    head = ["method", "setting", "dev BLEU by iteration (0 = initial weights)", "best dev (it)", *tests, "test mean",
            "best dev − kb-mert"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    shortfall = 0.0
    for r in runs:
        gap = "" if reference is None else f"{r['best'] - reference:+.2f}"
        if reference is not None and r["setting"].split()[0] == "default":
            shortfall = max(shortfall, reference - r["best"])
        curve = " ".join("·" if b is None else f"{b:.2f}" for b in r["curve"])
        cells = [r["method"], r["setting"], curve, f"{r['best']:.2f} ({r['best_iteration']})",
                 *(f"{r['tests'][t]:.2f}" if t in r["tests"] else "" for t in tests),
                 f"{r['test']:.2f}" if r["tests"] else "", gap]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n", (shortfall if reference is not None else None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=pathlib.Path, required=True, help="the directory snakemake ran in")
    ap.add_argument("--pair", default="fr-en")
    ap.add_argument("--fs", default="medium")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--partial", action="store_true",
                    help="also unfinished runs (dev BLEU of the iterations so far, marked running)")
    args = ap.parse_args()
    runs = read_runs(args.workdir, args.pair, args.fs, args.sample, args.partial)
    if not runs:
        print(f"no finished runs under {args.workdir}/results/tune/{args.pair}/{args.fs}", file=sys.stderr)
        return 2
    table, shortfall = markdown(runs)
    print(table)
    print(f"largest_shortfall_below_kb_mert_best_dev: {'n/a (no kb-mert run)' if shortfall is None else f'{shortfall:.2f}'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
