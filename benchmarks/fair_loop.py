"""The loop check of issue 22: every method's tuning loop, read from a workflow run, against kb-mert.

Reads the finished runs of one (pair, feature set, dev sub-sample) from a workflow directory
(``results/tune/<pair>/<fs>/<method>/<setting>/s<sample>``: ``curve.tsv``, ``summary.json``) and
prints a Markdown table: per method and setting, the dev BLEU of the weights of every iteration
(iteration 0 = the initial weights), the best dev BLEU and its iteration, the test BLEU of the
best-dev weights per test set and their mean, and the best dev BLEU's difference to kb-mert's
(``mert``, default setting). The loop is the workflow's own (``rules/tune*.smk``): nothing is rerun
here, so the numbers are those of the tables.

    python benchmarks/fair_loop.py --workdir results/table-run [--pair fr-en] [--fs medium] [--sample 0]

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


def read_runs(workdir: pathlib.Path, pair: str, fs: str, sample: int) -> list[dict]:
    base = workdir / "results" / "tune" / pair / fs
    runs = []
    for run in sorted(base.glob(f"*/*/s{sample}")):
        method, setting = run.parts[-3], run.parts[-2]
        if method == "first" or not (run / "summary.json").exists():
            continue
        summary = json.loads((run / "summary.json").read_text())
        curve = read_curve(run / "curve.tsv")
        runs.append({"method": method, "setting": setting, "curve": [r["dev_bleu"] for r in curve],
                     "best": summary["tune"], "best_iteration": summary["best_iteration"],
                     "tests": summary["tests"], "test": summary["test"]})
    rank = {m: i for i, m in enumerate(ORDER)}
    return sorted(runs, key=lambda r: (rank.get(r["method"], len(ORDER)), r["setting"] != "default", r["setting"]))


def markdown(runs: list[dict]) -> tuple[str, float | None]:
    reference = next((r["best"] for r in runs if r["method"] == "mert" and r["setting"] == "default"), None)
    tests = sorted({t for r in runs for t in r["tests"]})
    head = ["method", "setting", "dev BLEU by iteration (0 = initial weights)", "best dev (it)", *tests, "test mean",
            "best dev − kb-mert"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    shortfall = 0.0
    for r in runs:
        gap = "" if reference is None else f"{r['best'] - reference:+.2f}"
        if reference is not None and r["setting"] == "default":
            shortfall = max(shortfall, reference - r["best"])
        curve = " ".join(f"{b:.2f}" for b in r["curve"])
        cells = [r["method"], r["setting"], curve, f"{r['best']:.2f} ({r['best_iteration']})",
                 *(f"{r['tests'][t]:.2f}" if t in r["tests"] else "" for t in tests), f"{r['test']:.2f}", gap]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n", (shortfall if reference is not None else None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=pathlib.Path, required=True, help="the directory snakemake ran in")
    ap.add_argument("--pair", default="fr-en")
    ap.add_argument("--fs", default="medium")
    ap.add_argument("--sample", type=int, default=0)
    args = ap.parse_args()
    runs = read_runs(args.workdir, args.pair, args.fs, args.sample)
    if not runs:
        print(f"no finished runs under {args.workdir}/results/tune/{args.pair}/{args.fs}", file=sys.stderr)
        return 2
    table, shortfall = markdown(runs)
    print(table)
    print(f"largest_shortfall_below_kb_mert_best_dev: {'n/a (no kb-mert run)' if shortfall is None else f'{shortfall:.2f}'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
