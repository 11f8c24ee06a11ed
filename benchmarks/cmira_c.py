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
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics

FEATURE_SETS = ("small", "medium", "big")


def run_rows(workdir: pathlib.Path, pair: str, default_c: float) -> list[dict]:
    """One row per finished pilot run (sub-sample 0) of c-MIRA in ``workdir``."""
    rows = []
    for fs in FEATURE_SETS:
        for run in sorted((workdir / "results/tune" / pair / fs / "cmira").glob("*/s0")):
            summary = run / "summary.json"
            if not summary.exists():
                continue
            setting = run.parent.name
            restored = run / "steps.json"  # a run restored from its record keeps its steps there
            steps = ([st["info"] for st in json.loads(restored.read_text())["steps"]] if restored.exists()
                     else [json.loads(p.read_text()) for p in run.glob("it*/tune.json")])
            cs = {s["params"]["C"] for s in steps}
            if len(cs) != 1:
                raise SystemExit(f"{run}: its steps ran with C in {sorted(cs)}, not one value")
            c = cs.pop()
            if setting == "default" and c != default_c:
                continue
            if setting != "default" and float(setting.partition("=")[2]) != c:
                raise SystemExit(f"{run}: setting {setting} but its steps ran with C={c}")
            s = json.loads(summary.read_text())
            rows.append({
                "fs": fs, "C": c, "tune": s["tune"], "test": s["test"], "best_iteration": s["best_iteration"],
                "steps": len(steps), "stalled": sum(st["best_epoch"] == 0 for st in steps),
                "gain": statistics.fmean(st["pool_bleu_out"] - st["pool_bleu_init"] for st in steps),
            })
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=pathlib.Path, required=True)
    ap.add_argument("--pair", default="fr-en")
    ap.add_argument("--default-c", type=float, default=0.001, help="C of the tuner's default when its run was made")
    args = ap.parse_args()
    rows = run_rows(args.workdir, args.pair, args.default_c)
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
