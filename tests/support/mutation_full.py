"""The full mutation run over the real files (issue 11); not collected by pytest, run it as a script.

    python tests/support/mutation_full.py [--seed 0] [--per-kind 25] [--data ../shared/data] [--model DIR --weights W --source S]

Every n-best, reference and weights file of ``../shared/data`` that the project reads, and a lattice
written by ``smtlib decode --lattice`` (on the given model, by default ``/work/models/fr-en-big`` when
it exists, else a toy model), gets ``--per-kind`` random edits of every kind (``tests/support/mutation.py``
describes kinds and outcomes). One rejected edit in twenty is read again through the CLI, which
must exit with status 2 and print the same ``file:line``. Prints the counts per kind and in total;
exits with status 1 if any edit was silent, named a wrong line, crashed or was falsely rejected.
The last line is ``metric: N silent changes``. A recorded run: ``benchmarks/results/mutation_full.txt``.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

# run as a script: the root goes on sys.path before anything of tests/ can be imported
REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.support.mutation import FAILURES, decode_lattice, lattice_reader, run_case, shared_cases, summarize, Case  # noqa: E402

CLI_EVERY = 20


def cli_checker(refs_of: dict[str, list[pathlib.Path]]):
    """Re-read one rejected edit in CLI_EVERY through the CLI: exit 2 and the same file:line."""
    counter = {"n": 0}

    def check(case: Case, mutated: pathlib.Path, edit, exc) -> str | None:
        counter["n"] += 1
        if counter["n"] % CLI_EVERY:
            return None
        if case.kind == "kbest":
            args = ["kbest", "stats", mutated, "--refs", *refs_of[case.name]]
        elif case.kind == "moses-ini":
            args = ["weights", "from-moses-ini", mutated, "--out", mutated.with_suffix(".out")]
        else:
            return None
        proc = subprocess.run([sys.executable, "-m", "smtlib", *map(str, args)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
        expected = f"{exc.path}:{exc.line}:"
        if proc.returncode != 2 or expected not in proc.stderr or len(proc.stderr.strip().splitlines()) != 1:
            return f"exit {proc.returncode}, stderr {proc.stderr.strip()[:200]!r}"
        return None

    return check


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-kind", type=int, default=25, help="edits of each kind per file")
    parser.add_argument("--data", default=os.environ.get("SMTLIB_SHARED_DATA", str(REPO.parent / "shared" / "data")))
    parser.add_argument("--model", default="/work/models/fr-en-big")
    parser.add_argument("--weights", default="/work/models/fr-en-big/default.weights")
    parser.add_argument("--source", default="/work/models/val.fr")
    parser.add_argument("--verbose", action="store_true", help="print every failure")
    args = parser.parse_args()
    data = pathlib.Path(args.data)
    if not data.is_dir():
        print(f"no data directory {data}", file=sys.stderr)
        return 2
    start = time.process_time()
    with tempfile.TemporaryDirectory(prefix="smtlib-mutation-") as tmp:
        tmp = pathlib.Path(tmp)
        cases = shared_cases(data, tmp / "derived")
        model = pathlib.Path(args.model)
        if model.is_dir():
            lattice = decode_lattice(tmp / "lattice" / "lat.gz", model=model, weights=pathlib.Path(args.weights),
                                     source=pathlib.Path(args.source))
            label = f"lattice of {model.name}"
        else:
            lattice = decode_lattice(tmp / "lattice" / "lat.gz")
            label = "lattice of a toy model"
        cases.append(Case(label, "lattice", lattice, lattice_reader))
        from tests.support.mutation import KBEST_REFERENCES

        refs_of = {rel: [data / r for r in refs] for rel, refs in KBEST_REFERENCES.items()}
        rng = np.random.default_rng(args.seed)
        outcomes = []
        for k, case in enumerate(cases):
            found = run_case(case, tmp / "work" / str(k), rng, args.per_kind, cli_checker(refs_of))
            outcomes += found
            bad = [o for o in found if o.result in FAILURES]
            print(f"{case.kind:9s} {case.name}: {len(found)} edits, {len(bad)} failures", flush=True)
            for o in bad[: None if args.verbose else 3]:
                print(f"    {o.result}: {o.detail}")
    counts = summarize(outcomes)
    results = ["rejected", "identical", "wellformed", *FAILURES]
    print()
    print(f"{'kind':16s}" + "".join(f"{r:>16s}" for r in ["tried", *results]))
    for kind, c in sorted(counts.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        print(f"{kind:16s}" + f"{sum(c.values()):>16d}" + "".join(f"{c[r]:>16d}" for r in results))
    total = counts["all"]
    wellformed = [o.detail for o in outcomes if o.result == "wellformed"]
    kinds = sorted({d.split(" line ")[0].split(" ", 1)[1] for d in wellformed})
    print(f"\nseed {args.seed}, {len(cases)} files, {sum(total.values())} edits, CPU {time.process_time() - start:.0f} s")
    print(f"well-formed edits (valid files a reader cannot tell from real ones) by kind: {kinds}")
    failures = sum(total[r] for r in FAILURES)
    print(f"metric: {total['silent']} silent changes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
