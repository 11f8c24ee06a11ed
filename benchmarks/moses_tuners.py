"""Our mert, kbmira and pro against Moses's on the same k-best pools (issue 22): pool and held-out BLEU.

Protocol. Each pool (one or more k-best files, references, initial weights) is merged and
de-duplicated (``smtlib kbest merge``) and rewritten in the current Moses syntax (``smtlib kbest
convert``: Moses's ``extractor`` of this build reads the old ``d: ... lm: ...`` labels as feature
values, the new ``d= ... lm= ...`` it names ``d_0 ... lm_0``, as we do). Its sentences are split
into a tuning part (even ids) and a held-out part (odd ids), each renumbered from 0 (``smtlib kbest
slice``); the references are the first N lines of the reference file (N = largest id + 1: Moses's
``test_scorer_data`` has 2,000 reference lines for 100 sentences), lowercased (the hypotheses of both
default pools are lowercased and tokenized already, and used as they are). For each method and seed,
both implementations tune on the tuning part from the same initial weights:

* ours: ``smtlib tune METHOD --kbest TUNE --refs REF --init W --out W1 --seed S --tokenize none``,
  the method's defaults (no ``--set``);
* Moses, as ``mert-moses.pl`` runs one iteration: ``extractor --sctype BLEU -r REF -n TUNE --scfile
  scores.dat --ffile features.dat`` (default scorer config: whitespace tokens, case kept, closest
  reference length; its BLEU statistics are checked here to equal ours with ``--tokenize none``),
  then, with ``init.opt`` = the initial weights in ``features.dat``'s order plus mert-moses.pl's
  default random-restart ranges (a line of 0s, a line of 1s):

  - ``mert -d D -n 20 -r S --sctype BLEU --ifile init.opt --scfile scores.dat --ffile features.dat``
    (weights from its ``weights.txt``);
  - ``kbmira --sctype BLEU --dense-init init.opt -r S -S scores.dat -F features.dat -o OUT``, its
    defaults otherwise (C 0.01, decay 0.999, 60 passes); this build's ``--dense-init`` reads the
    legacy ``init.opt`` (first line) or ``name= value`` lines, both by position; one bare value per
    line makes it read one weight and crash;
  - ``pro -S scores.dat -F features.dat -r S -o pairs`` and, **in place of megam** (``megam -fvals
    -maxi 30 -nobias binary pairs``, not available), a logistic regression written here
    (:func:`fit_logistic`): no bias, Gaussian prior of precision 1 (penalty 0.5 * |w|^2), L-BFGS
    (scipy) from zero for at most 30 iterations; its weights are Moses's next weights (mert-moses.pl
    without ``--historic-interpolation``; their scale does not matter for reranking).

  Moses's outputs (``F<i>`` / positional) are mapped back to our names by ``features.dat``'s header.

Both implementations' weights are then scored the same way, by our BLEU (``smtlib rerank --refs REF
--tokenize none``, = ``smtlib bleu`` = sacrebleu on the 1-best): **pool BLEU**, the tuning part's
1-best, and **held-out BLEU**, the held-out part's 1-best under the tuned weights. CPU seconds are
user + system of the child processes (``os.wait4``): ours, the ``smtlib tune`` process (start-up,
reading, BLEU statistics, the fit); Moses, the extractor run (once per pool, added to every Moses
run, as mert-moses.pl extracts every iteration) + the tuner (+ for pro our logistic regression's
CPU, reading the pairs included). Only dense features are supported.

Default pools (``--pool NAME=KBEST[,KBEST...]:REFS[,REFS...]:INIT`` replaces them; INIT is a weights
file with our names, or ``uniform`` = 1/D for each of the D dense features; a KBEST that is a
directory is a workflow run directory: its ``it*/dev.kbest.gz``, plus the shared first decode's
``../../../first/sN/dev.kbest.gz`` (its iteration 1) when present):

* ``scorer``: Moses's ``test_scorer_data`` (100 sentences x 100-best, 15 features, Europarl) from
  the shared data (``$SMTLIB_SHARED_DATA``, see ``benchmarks/_inputs.py``); no initial weights are
  given with it, so uniform;
* ``multi30k``: this project's loop, ``results/tune/fr-en/medium/kbmira/default/s0`` (every
  iteration's k-best list, merged), references ``results/data/fr-en/dev.ref``, initial weights the
  workflow's (``results/systems/fr-en/medium/init.weights``, Cherry & Foster 2012, §4.2, which
  ``decode_first`` decodes with); skipped with a note when that run has no k-best lists yet.

    python benchmarks/moses_tuners.py [--pool NAME=KBEST[,KBEST...]:REFS:INIT ...] [--seeds 1 2 3]
        [--methods mert kbmira pro] [--moses DIR] [--out-tsv FILE] [--keep DIR]

``--moses`` is the directory with ``extractor``, ``mert``, ``kbmira`` and ``pro`` (default
``$SMTLIB_MOSES_BIN``, else ``$SMTLIB_SHARED/peers/moses/bin``, ``../shared`` beside the repository).
Per pool, the script prints a table (method x implementation: pool and held-out BLEU, mean +- SD over
seeds, CPU s) and ours - Moses with twice the standard error of that difference (from the seeds' SDs;
"below" when ours is lower by more than that). Last line: ``ours_minus_moses_heldout_min: X``, the
smallest difference of mean held-out BLEU over pools x methods.
"""

from __future__ import annotations

import argparse
import gzip
import math
import os
import pathlib
import re
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from _inputs import SHARED_DATA, measure  # noqa: E402  (benchmarks/_inputs.py, beside this script)

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("SMTLIB_SHARED", REPO.parent / "shared"))
SMTLIB = [sys.executable, "-m", "smtlib"]
METHODS = ("mert", "kbmira", "pro")
#: mert-moses.pl's defaults for one iteration: random restarts and the random-restart range per weight
MERT_RESTARTS, RANGE_LOW, RANGE_HIGH = 20, 0.0, 1.0
#: megam -maxi 30 with its default Gaussian prior (precision 1), as mert-moses.pl runs it for PRO
LR_MAX_ITER, LR_PRIOR = 30, 1.0


def default_pools() -> list[str]:
    scorer = SHARED_DATA / "moses-mert-nbest" / "test_scorer_data"
    run = REPO / "results" / "tune" / "fr-en" / "medium" / "kbmira" / "default" / "s0"
    return [f"scorer={scorer / 'nbest.out.gz'}:{scorer / 'reference.txt.gz'}:uniform",
            f"multi30k={run}:{REPO / 'results/data/fr-en/dev.ref'}:"
            f"{REPO / 'results/systems/fr-en/medium/init.weights'}"]


# -- running and measuring --------------------------------------------------------------------------


def run(cmd: list, cwd: pathlib.Path | None = None, stdout: pathlib.Path | None = None) -> tuple[float, str]:
    """Run ``cmd`` (one child at a time); its CPU seconds (user + system, ``os.wait4``) and stderr."""
    done = measure(cmd, cwd=cwd, stdout=stdout)
    return done.cpu, done.stderr


def read_text_lines(path: pathlib.Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [line.rstrip("\n") for line in fh]


# -- pools ------------------------------------------------------------------------------------------


def kbest_files(spec: str) -> list[pathlib.Path]:
    """The k-best files of ``spec``: comma-separated files or workflow run directories."""
    files: list[pathlib.Path] = []
    for item in spec.split(","):
        path = pathlib.Path(item)
        if not path.is_dir():
            if not path.is_file():
                sys.exit(f"{path}: no such k-best file or run directory")
            files.append(path)
            continue
        first = path.parents[2] / "first" / path.name / "dev.kbest.gz"  # the run's iteration 1
        its = sorted(path.glob("it*/dev.kbest.gz"), key=lambda p: int(p.parent.name[2:]))
        files += ([first] if first.is_file() else []) + its
    return files


def write_split(name: str, spec: str, work: pathlib.Path, optional: bool = False) -> dict | None:
    """Merge, convert and split one pool into ``work``; None (with a note) when it has no k-best lists
    (or, ``optional``: a default pool, when its files are missing)."""
    m = re.fullmatch(r"([^=]+)=(.+):([^:]+):([^:]+)", spec)
    if not m:
        sys.exit(f"--pool {spec!r}: expected NAME=KBEST[,KBEST...]:REFS[,REFS...]:INIT")
    name, kspec, rspec, init = m.groups()
    if optional and not all(pathlib.Path(p).exists() for p in kspec.split(",") + rspec.split(",")):
        print(f"\n== pool {name}: {kspec} or {rspec} not found: skipped")
        return None
    files = kbest_files(kspec)
    if not files:
        print(f"\n== pool {name}: no k-best lists under {kspec} (the run has not decoded yet): skipped")
        return None
    work.mkdir(parents=True)
    run(SMTLIB + ["kbest", "merge", "--out", work / "merged.txt", *files])
    run(SMTLIB + ["kbest", "convert", work / "merged.txt", "--out", work / "all.txt"])
    n = 1 + max(int(line.split("|||", 1)[0]) for line in read_text_lines(work / "all.txt"))
    refs = []
    for i, ref in enumerate(rspec.split(",")):
        lines = read_text_lines(pathlib.Path(ref))
        if len(lines) < n:
            sys.exit(f"{ref}: {len(lines)} lines for a pool of {n} sentences")
        (work / f"all.ref{i}").write_text("".join(line.lower() + "\n" for line in lines[:n]), encoding="utf-8")
        refs.append(f"all.ref{i}")
    parts = {}
    for part, ids in (("tune", range(0, n, 2)), ("heldout", range(1, n, 2))):
        (work / f"{part}.ids").write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")
        args = ["kbest", "slice", "--ids", work / f"{part}.ids", "--kbest", work / "all.txt", work / f"{part}.txt"]
        for i, ref in enumerate(refs):
            args += ["--lines", work / ref, work / f"{part}.ref{i}"]
        run(SMTLIB + args)
        parts[part] = {"kbest": work / f"{part}.txt", "refs": [work / f"{part}.ref{i}" for i in range(len(refs))],
                       "sentences": len(ids),
                       "hypotheses": sum(1 for _ in open(work / f"{part}.txt", encoding="utf-8"))}
    return {"name": name, "files": files, "init": init, "sentences": n, "parts": parts, "work": work}


def extract(pool: dict, bindir: pathlib.Path) -> None:
    """Moses's extractor on the tuning part; checks its BLEU statistics against ours; writes init files."""
    work, tune = pool["work"], pool["parts"]["tune"]
    cpu, _ = run([bindir / "extractor", "--sctype", "BLEU", "-r", ",".join(map(str, tune["refs"])),
                  "-n", tune["kbest"], "--scfile", "scores.dat", "--ffile", "features.dat"], cwd=work)
    header = (work / "features.dat").read_text(encoding="utf-8").split("\n", 1)[0].split()
    names = header[4:4 + int(header[3])]  # FEATURES_TXT_BEGIN_0 0 N D name1 ... nameD
    pool.update(extractor_cpu=cpu, names=names)
    if any(not re.fullmatch(r".+_\d+", n) for n in names):
        sys.exit(f"{pool['name']}: features.dat names {names}: only dense features are supported")

    # the same BLEU statistics as ours (--tokenize none), hypothesis by hypothesis
    from smtlib.bleu.references import read_references
    from smtlib.bleu.stats import MATCHES, REF_LEN, TOTALS, BleuSettings
    from smtlib.kbest.pool import read_pool

    ours = read_pool([tune["kbest"]], n_sentences=tune["sentences"])
    ours.compute_stats(read_references(tune["refs"]), BleuSettings(tokenize="none"))
    theirs = np.array([line.split() for line in (work / "scores.dat").read_text(encoding="utf-8").splitlines()
                       if line and not line.startswith("SCORES_TXT")], dtype=float)
    mine = np.column_stack([np.column_stack([ours.stats[:, MATCHES][:, k], ours.stats[:, TOTALS][:, k]])
                            for k in range(4)] + [ours.stats[:, REF_LEN]])
    if mine.shape != theirs.shape:
        pool["stats_check"] = f"extractor kept {len(theirs)} hypotheses, we {len(mine)}"
    else:
        diff = int(np.count_nonzero(np.any(mine != theirs, axis=1)))
        pool["stats_check"] = (f"BLEU statistics identical to extractor's ({len(mine)} hypotheses)" if diff == 0
                               else f"{diff}/{len(mine)} hypotheses' BLEU statistics differ from extractor's")
    # initial weights, by name (ours) and by features.dat position (Moses's init.opt)
    if pool["init"] == "uniform":
        init = {n: 1.0 / len(names) for n in names}
    else:
        from smtlib.weights import read_weights

        init = dict(read_weights(pool["init"]))
        unknown = sorted(set(init) - set(names))
        if unknown:
            sys.exit(f"{pool['init']}: weights {unknown} not in the pool's features {names}")
    values = [init.get(n, 0.0) for n in names]
    write_weights(work / "init.weights", names, values)
    (work / "init.opt").write_text(" ".join(repr(v) for v in values) + "\n" + " ".join([repr(RANGE_LOW)] * len(names))
                                   + "\n" + " ".join([repr(RANGE_HIGH)] * len(names)) + "\n", encoding="utf-8")


def write_weights(path: pathlib.Path, names: list[str], values) -> None:
    path.write_text("".join(f"{n} {float(v)!r}\n" for n, v in zip(names, values, strict=True)), encoding="utf-8")


# -- the tuners -------------------------------------------------------------------------------------


def fit_logistic(pairs: pathlib.Path, dim: int) -> np.ndarray:
    """megam's ``-fvals -maxi 30 -nobias binary`` stand-in: L2 logistic regression on PRO's pairs.

    Each line of ``pairs`` is ``LABEL F<i> v F<j> v ...`` (label 0/1, zero differences left out).
    Minimizes sum log(1 + exp(-s x.w)) + 0.5 * LR_PRIOR * |w|^2 (s = +-1) with L-BFGS from w = 0.
    """
    from scipy.optimize import minimize

    rows, labels = [], []
    for line in pairs.read_text(encoding="utf-8").splitlines():
        tok = line.split()
        if not tok:
            continue
        x = np.zeros(dim)
        for name, value in zip(tok[1::2], tok[2::2], strict=True):
            x[int(name[1:])] = float(value)
        rows.append(x)
        labels.append(1.0 if tok[0] == "1" else -1.0)
    if not rows:
        return np.zeros(dim)
    sx = np.asarray(labels)[:, None] * np.vstack(rows)

    def objective(w):
        margin = sx @ w
        loss = np.logaddexp(0.0, -margin).sum() + 0.5 * LR_PRIOR * w @ w
        grad = -sx.T @ (1.0 / (1.0 + np.exp(margin))) + LR_PRIOR * w
        return loss, grad

    return minimize(objective, np.zeros(dim), jac=True, method="L-BFGS-B", options={"maxiter": LR_MAX_ITER}).x


def tune_moses(method: str, seed: int, pool: dict, bindir: pathlib.Path, out: pathlib.Path) -> float:
    """One Moses tuner step on the tuning part; writes our weights file ``out``; returns CPU seconds."""
    work, names = pool["work"], pool["names"]
    run_dir = work / f"moses-{method}-s{seed}"
    run_dir.mkdir()
    data = ["--scfile", work / "scores.dat", "--ffile", work / "features.dat"]
    cpu = pool["extractor_cpu"]
    if method == "mert":
        c, _ = run([bindir / "mert", "-d", len(names), "-n", MERT_RESTARTS, "-r", seed, "--sctype", "BLEU",
                    "--ifile", work / "init.opt", *data], cwd=run_dir)
        values = [float(v) for v in (run_dir / "weights.txt").read_text(encoding="utf-8").split()]
    elif method == "kbmira":
        c, _ = run([bindir / "kbmira", "--sctype", "BLEU", "--dense-init", work / "init.opt", "-r", seed,
                    *data, "-o", run_dir / "weights.out"], cwd=run_dir)
        values = [0.0] * len(names)
        for line in (run_dir / "weights.out").read_text(encoding="utf-8").splitlines():
            key, value = line.split()
            values[int(key[1:])] = float(value)
    else:
        c, _ = run([bindir / "pro", *data, "-r", seed, "-o", run_dir / "pairs"], cwd=run_dir)
        t0 = time.process_time()
        values = fit_logistic(run_dir / "pairs", len(names))
        c += time.process_time() - t0
    if len(values) != len(names):
        sys.exit(f"moses {method}: {len(values)} weights for {len(names)} features")
    write_weights(out, names, values)
    return cpu + c


def tune_ours(method: str, seed: int, pool: dict, out: pathlib.Path) -> float:
    tune = pool["parts"]["tune"]
    cpu, _ = run(SMTLIB + ["tune", method, "--kbest", tune["kbest"], "--refs", *tune["refs"], "--init",
                           pool["work"] / "init.weights", "--out", out, "--seed", seed, "--tokenize", "none",
                           "--quiet"])
    return cpu


def rerank_bleu(part: dict, weights: pathlib.Path) -> float:
    """Corpus BLEU (ours, --tokenize none) of the part's 1-best under ``weights``."""
    _, err = run(SMTLIB + ["rerank", "--kbest", part["kbest"], "--weights", weights, "--refs", *part["refs"],
                           "--tokenize", "none", "--out", os.devnull])
    m = re.search(r"BLEU = ([\d.]+)", err)
    if not m:
        sys.exit(f"smtlib rerank printed no BLEU:\n{err}")
    return float(m.group(1))


# -- report -----------------------------------------------------------------------------------------


def mean_sd(xs: list[float]) -> tuple[float, float]:
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def report(pool: dict, rows: list[dict], methods: list[str]) -> list[tuple[str, str, float]]:
    """Print the pool's table; returns (pool, method, ours - Moses held-out mean) per method."""
    tune, held = pool["parts"]["tune"], pool["parts"]["heldout"]
    print(f"\n== pool {pool['name']}: {len(pool['files'])} k-best file(s), {pool['sentences']} sentences; "
          f"tune {tune['sentences']} sentences ({tune['hypotheses']} hypotheses), held-out {held['sentences']} "
          f"({held['hypotheses']}); {pool['stats_check']}; initial weights ({pool['init']}): "
          f"pool BLEU {pool['init_bleu'][0]:.2f}, held-out {pool['init_bleu'][1]:.2f}")
    print("| method | implementation | pool BLEU | held-out BLEU | CPU s |")
    print("|---|---|---|---|---|")
    diffs = []
    for method in methods:
        stats = {}
        for impl in ("ours", "moses"):
            sel = [r for r in rows if r["method"] == method and r["impl"] == impl]
            p, h, c = ([r[k] for r in sel] for k in ("pool_bleu", "heldout_bleu", "cpu_s"))
            stats[impl] = (mean_sd(p), mean_sd(h), statistics.fmean(c), len(sel))
            print(f"| {method} | {impl} | {stats[impl][0][0]:.2f} ± {stats[impl][0][1]:.2f} | "
                  f"{stats[impl][1][0]:.2f} ± {stats[impl][1][1]:.2f} | {stats[impl][2]:.2f} |")
        cells = []
        for k in (0, 1):
            (mo, so), (mm, sm) = stats["ours"][k], stats["moses"][k]
            se2 = 2 * math.sqrt(so**2 / stats["ours"][3] + sm**2 / stats["moses"][3])
            verdict = "below" if mo - mm < -se2 else "ok"
            cells.append(f"{mo - mm:+.2f} (2SE {se2:.2f}, {verdict})")
        print(f"| {method} | ours − Moses | {cells[0]} | {cells[1]} | "
              f"{stats['ours'][2] / max(stats['moses'][2], 1e-9):.1f}× |")
        diffs.append((pool["name"], method, stats["ours"][1][0] - stats["moses"][1][0]))
    return diffs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool", nargs="+", help="NAME=KBEST[,KBEST...]:REFS[,REFS...]:INIT (default: scorer, multi30k)")
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--moses", help="directory with extractor, mert, kbmira, pro")
    ap.add_argument("--out-tsv", help="write the raw rows (one per pool, method, implementation, seed)")
    ap.add_argument("--keep", help="keep the work files in this (new) directory")
    args = ap.parse_args()

    bindir = pathlib.Path(args.moses or os.environ.get("SMTLIB_MOSES_BIN") or SHARED / "peers" / "moses" / "bin")
    bindir = bindir.parent if bindir.is_file() else bindir
    missing = [b for b in ("extractor", "mert", "kbmira", "pro") if not (bindir / b).is_file()]
    if missing:
        sys.exit(f"{bindir}: no {', '.join(missing)} (give --moses DIR or set $SMTLIB_MOSES_BIN)")
    tmp_ctx = tempfile.TemporaryDirectory(prefix="bench-moses-tuners-") if not args.keep else None
    tmp = pathlib.Path(args.keep or tmp_ctx.name)
    tmp.mkdir(parents=True, exist_ok=True)
    print(f"Moses tuners in {bindir}; seeds {args.seeds}; methods {args.methods}; BLEU: smtlib rerank "
          f"--tokenize none (= sacrebleu on the 1-best)")

    rows: list[dict] = []
    diffs: list[tuple[str, str, float]] = []
    for k, spec in enumerate(args.pool or default_pools()):
        pool = write_split(spec.split("=", 1)[0], spec, tmp / f"pool{k}", optional=not args.pool)
        if pool is None:
            continue
        extract(pool, bindir)
        parts = pool["parts"]
        init = pool["work"] / "init.weights"
        pool["init_bleu"] = (rerank_bleu(parts["tune"], init), rerank_bleu(parts["heldout"], init))
        pool_rows = []
        for method in args.methods:
            for seed in args.seeds:
                for impl in ("ours", "moses"):
                    out = pool["work"] / f"{impl}-{method}-s{seed}.weights"
                    cpu = (tune_ours(method, seed, pool, out) if impl == "ours"
                           else tune_moses(method, seed, pool, bindir, out))
                    row = {"pool": pool["name"], "method": method, "impl": impl, "seed": seed,
                           "pool_bleu": rerank_bleu(parts["tune"], out),
                           "heldout_bleu": rerank_bleu(parts["heldout"], out), "cpu_s": cpu,
                           "tune_sentences": parts["tune"]["sentences"],
                           "heldout_sentences": parts["heldout"]["sentences"]}
                    print("\t".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in row.values()),
                          file=sys.stderr, flush=True)
                    pool_rows.append(row)
        rows += pool_rows
        diffs += report(pool, pool_rows, args.methods)

    if args.out_tsv and rows:
        with open(args.out_tsv, "w", encoding="utf-8") as fh:
            fh.write("\t".join(rows[0]) + "\n")
            for r in rows:
                fh.write("\t".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in r.values()) + "\n")
    if tmp_ctx is not None:
        tmp_ctx.cleanup()
    if not diffs:
        sys.exit("no pool was run")
    worst = min(diffs, key=lambda d: d[2])
    print(f"\nsmallest held-out difference: {worst[0]} {worst[1]}")
    print(f"ours_minus_moses_heldout_min: {worst[2]:.2f}")


if __name__ == "__main__":
    main()
