"""How many published runs of Tables 4-6 a fresh clone reproduces from their records.

The check itself is the workflow's: in a clone at a fixed commit, every published run is restored from
its record (config ``restore_runs``) with ``restore_outputs=False``, so its test sets are decoded again
by the rebuilt system, and ``smtlib report summary --expect`` refuses the run's summary unless every
test BLEU equals the record's to the last digit (``docs/results/README.md``):

    R='restore_runs={"fr-en":"docs/results/table4/runs","en-fr":"docs/results/table5/runs","ja-en":"docs/results/table6/runs"}'
    snakemake --cores 1 --keep-going --config data_dir=../shared/data "$R" restore_outputs=False \\
        -- results/table4.tsv results/table5.tsv results/table6.tsv > ../restore-check.log 2>&1

This script counts the outcome per table and feature set from the clone and its log: ``pass`` (the
summary was written), ``fail`` (Snakemake logged an error of the run's ``run_summary``), ``pending``
(neither yet). Where a record has its test outputs beside it (``s<N>.test.<set>.1best.gz``), the new
decode is compared with them byte for byte.

    python benchmarks/restore_check.py --clone results/restore-check --log results/restore-check.log
"""

from __future__ import annotations

import argparse
import collections
import gzip
import pathlib
import re

#: table -> the pair whose records it publishes
TABLES = {"table4": "fr-en", "table5": "en-fr", "table6": "ja-en"}


def failed_runs(log: str) -> set[str]:
    """Run directories (relative to the clone) whose ``run_summary`` job failed, from Snakemake's log."""
    return set(re.findall(r"Error in rule run_summary:.*?output: (\S+)/summary\.json", log, re.S))


def check(clone: pathlib.Path, log: str, records: pathlib.Path) -> list[dict]:
    """One row per (table, feature set): runs passed, failed, pending, and test outputs compared."""
    failed = failed_runs(log)
    rows = []
    for table, pair in TABLES.items():
        counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        # the tables' runs (the records of other settings, e.g. the re-checked defaults, are not in them)
        for record in sorted((records / table / "runs").glob("*/*/default/s*.json")):
            fs, method, setting = record.parts[-4:-1]
            relative = f"results/tune/{pair}/{fs}/{method}/{setting}/{record.stem}"
            run = clone / relative
            state = "pass" if (run / "summary.json").exists() else "fail" if relative in failed else "pending"
            counts[fs][state] += 1
            for published in record.parent.glob(f"{record.stem}.test.*.1best.gz"):
                testset = published.name.split(".")[2]
                mine = run / f"test.{testset}.1best"
                if mine.exists():
                    same = gzip.decompress(published.read_bytes()) == mine.read_bytes()
                    counts[fs]["outputs_same" if same else "outputs_differ"] += 1
        for fs, c in counts.items():
            rows.append({"table": table, "feature_set": fs, **{k: c[k] for k in
                         ("pass", "fail", "pending", "outputs_same", "outputs_differ")}})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone", required=True, type=pathlib.Path, help="the clone the check ran in")
    parser.add_argument("--log", required=True, type=pathlib.Path, help="its Snakemake log")
    parser.add_argument("--records", default="docs/results", type=pathlib.Path,
                        help="where table4/ table5/ table6/ with their runs/ are (default docs/results)")
    args = parser.parse_args()
    rows = check(args.clone, args.log.read_text(), args.records)
    columns = ["table", "feature_set", "pass", "fail", "pending", "outputs_same", "outputs_differ"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")
    for name in sorted(failed_runs(args.log.read_text())):
        print(f"failed: {name}")


if __name__ == "__main__":
    main()
