"""c-MIRA's C chosen as Tan et al. (2013, §4) chose it: by dev BLEU, per feature setting, from a grid.

Reads the pilot's runs from a workflow directory (``docs/results/run/phases-cmira-pilot.txt``: one
loop per value of C on a pair's whole dev set, sub-sample 0, every feature set; the value of the
tuner's default is the ``default`` run's) and prints, per feature set and C:

* Tune: the dev BLEU of the kept iteration (what the paper selects C by), and the kept iteration;
* Test: the mean BLEU over the test sets (shown, not used to choose);
* stalled steps: the tuning steps that returned their initial weights (``best_epoch`` 0 in the step's
  ``--info``: no averaged weights of the 400 epochs beat them on the pool), and the mean pool BLEU a
  step gained;

then the value with the best Tune per feature set. Only runs whose steps name their C are counted
(a ``default`` run made with another default is not taken for the current one).

    python benchmarks/cmira_c.py --workdir results/table45-run --pair fr-en [--default-c 0.001]
    # the published records: the 21 runs, and the Small and Medium ones at 0.001 (Big's are not published)
    python benchmarks/cmira_c.py --records docs/results/run/cmira-c-pilot/fr-en/runs{,-C=0.001}
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from smtlib.report.publish import run_steps  # noqa: E402

FEATURE_SETS = ("small", "medium", "big")


def pilot_runs(workdir: pathlib.Path | None, records: list[pathlib.Path] | None, pair: str):
    """(feature set, setting, run summary or record, its tuning steps) of each finished run at sub-sample
    0 of c-MIRA: from a workflow directory, or from directories of published records
    (``<fs>/cmira/<setting>/s0.json``)."""
    for fs in FEATURE_SETS:
        if records is not None:
            for path in sorted(p for d in records for p in (d / fs / "cmira").glob("*/s0.json")):
                record = json.loads(path.read_text())
                yield fs, path.parent.name, record, record.get("steps", [])
            continue
        for run in sorted((workdir / "results/tune" / pair / fs / "cmira").glob("*/s0")):
            if (run / "summary.json").exists():
                yield fs, run.parent.name, json.loads((run / "summary.json").read_text()), run_steps(run)


def run_rows(runs, default_c: float) -> list[dict]:
    """One row per pilot run (:func:`pilot_runs`); a ``default`` run counts only if made at ``default_c``."""
    rows = []
    for fs, setting, s, steps in runs:
        infos = [st["info"] for st in steps]
        cs = {i["params"]["C"] for i in infos}
        if len(cs) != 1:
            raise SystemExit(f"{fs}/{setting}: its steps ran with C in {sorted(cs)}, not one value")
        c = cs.pop()
        if setting == "default" and c != default_c:
            continue
        if setting != "default" and float(setting.partition("=")[2]) != c:
            raise SystemExit(f"{fs}/{setting}: its steps ran with C={c}")
        rows.append({
            "fs": fs, "C": c, "tune": s["tune"], "test": s["test"], "best_iteration": s["best_iteration"],
            "steps": len(infos), "stalled": sum(i["best_epoch"] == 0 for i in infos),
            "gain": statistics.fmean(i["pool_bleu_out"] - i["pool_bleu_init"] for i in infos),
        })
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--workdir", type=pathlib.Path, help="the workflow directory the pilot ran in")
    source.add_argument("--records", type=pathlib.Path, nargs="+",
                        help="its published records instead, e.g. docs/results/run/cmira-c-pilot/fr-en/runs")
    ap.add_argument("--pair", default="fr-en")
    ap.add_argument("--default-c", type=float, default=0.001, help="C of the tuner's default when its run was made")
    args = ap.parse_args()
    rows = run_rows(pilot_runs(args.workdir, args.records, args.pair), args.default_c)
    print("| feature set | C | Tune | kept iteration | Test | steps that stalled | pool BLEU gained per step |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in sorted(rows, key=lambda r: (FEATURE_SETS.index(r["fs"]), r["C"])):
        print(f"| {r['fs']} | {r['C']:g} | {r['tune']:.2f} | {r['best_iteration']} | {r['test']:.2f} | "
              f"{r['stalled']} of {r['steps']} | {r['gain']:+.3f} |")
    print()
    for fs in FEATURE_SETS:
        mine = [r for r in rows if r["fs"] == fs]
        if mine:
            best = max(mine, key=lambda r: r["tune"])
            print(f"{fs}: best Tune {best['tune']:.2f} at C = {best['C']:g} ({len(mine)} values run)")


if __name__ == "__main__":
    main()
