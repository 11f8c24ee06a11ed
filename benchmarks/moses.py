"""smtlib decode against Moses and moses2 on the same exported system: agreement, speed, memory.

For each feature set, the model is exported (``smtlib train export-moses``: one merged phrase table,
see ``smtlib/system/moses_export.py``) and the same input is decoded in this run by our decoder and
by each Moses binary through the Moses backend (``smtlib decode --backend moses``: the same search
settings, ``-b 0``, the n-best list converted to our names and totals). Each decoder runs in its own
child process, so that its peak memory (``ru_maxrss``; for Moses, of the Moses process) is its own.
Speed counts decoding only: our decoder's loop, and Moses from the moment it reports its model
loaded (``Created input-output object`` / ``Loaded :``) to its exit, in CPU seconds (user + system,
the figure to trust on a shared machine) and wall-clock seconds.

Agreement, per sentence, between our first k-best line and the backend's: the same 1-best string
and model score within 1e-3 (``agree``); the rest split into ties (same score, another string),
ours higher and Moses higher (search differences).

    python benchmarks/moses.py [--moses DIR] [--models DIR] [--input val.fr]
        [--feature-sets medium] [--weights medium=W ...] [--binaries moses moses2] [--k 100] [--limit N]

``--moses`` is a directory with ``moses``/``moses2`` (default: ``$SMTLIB_MOSES_BIN``, else
``../shared/peers/moses/bin`` beside the repository). ``--models`` holds ``fr-en-{small,medium,big}``
(default: ``resources/benchmarks/models``, each system built there with ``smtlib train build`` when
missing, see ``benchmarks/_inputs.py``); ``--input`` defaults to Multi30k val fr from the shared data.
Weights default to the model's
``default.weights``; ``--weights medium=FILE`` gives another (several ``--weights`` for several runs of
one feature set: ``medium=A medium=B``). Last line: ``metric: value``, the share of sentences (%)
where Moses (the first binary) agrees with us on the first weights of the first feature set.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import resource
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from _inputs import dev_set, find_model  # noqa: E402  (benchmarks/_inputs.py, beside this script)
from smtlib.system.modeldir import default_weights_file  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]


def child(args: argparse.Namespace) -> None:
    """Decode once (ours or a Moses binary) and print a JSON line with the measurements."""
    from smtlib.decoder.decoder import DecoderConfig
    from smtlib.decoder.driver import decode_file
    from smtlib.decoder.moses_backend import decode_file_moses

    out = pathlib.Path(args.out)
    weights = args.weights[0]
    cfg = DecoderConfig(k=args.k)
    if args.backend == "smtlib":
        stats = decode_file(args.model, weights, args.input, kbest_out=out / "kbest.gz",
                            output=out / "best.txt", config=cfg, progress=False)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    else:
        stats = decode_file_moses(args.model, weights, args.input, moses_bin=args.backend,
                                  moses_ini=args.moses_ini, kbest_out=out / "kbest.gz", output=out / "best.txt",
                                  config=cfg, progress=False)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"sentences": stats.sentences, "seconds": stats.seconds, "load": stats.load_seconds,
                      "cpu_decode": stats.cpu_seconds, "peak_mib": peak}))


def run_child(backend: str, model: pathlib.Path, weights: pathlib.Path, src: pathlib.Path, ini: pathlib.Path,
              k: int, out: pathlib.Path) -> dict:
    import subprocess

    out.mkdir(parents=True)
    cmd = [sys.executable, __file__, "--child", "--backend", backend, "--model", str(model), "--weights",
           str(weights), "--input", str(src), "--moses-ini", str(ini), "--k", str(k), "--out", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{backend}: decoding failed:\n{res.stderr}")
    m = json.loads(res.stdout.strip().splitlines()[-1])
    m["rate_cpu"] = m["sentences"] / max(m["cpu_decode"], 1e-9)
    m["rate_wall"] = m["sentences"] / max(m["seconds"], 1e-9)
    return m


def first_lines(path: pathlib.Path) -> dict[int, tuple[str, float]]:
    from smtlib.io import open_text

    best: dict[int, tuple[str, float]] = {}
    with open_text(path) as fh:
        for line in fh:
            f = line.rstrip("\n").split(" ||| ")
            best.setdefault(int(f[0]), (f[1], float(f[-1])))
    return best


def agreement(ours: pathlib.Path, theirs: pathlib.Path, tol: float = 1e-3) -> dict:
    a, b = first_lines(ours), first_lines(theirs)
    counts = {"sentences": len(a), "agree": 0, "ties": 0, "ours_higher": 0, "theirs_higher": 0}
    examples = []
    for i in sorted(a):
        (sa, ta), (sb, tb) = a[i], b[i]
        if abs(ta - tb) <= tol:
            counts["agree" if sa == sb else "ties"] += 1
        else:
            counts["ours_higher" if ta > tb else "theirs_higher"] += 1
        if sa != sb or abs(ta - tb) > tol:
            examples.append((i, round(ta - tb, 4)))
    counts["examples"] = examples[:8]
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--backend", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--moses-ini", help=argparse.SUPPRESS)
    ap.add_argument("--moses", help="directory with the moses/moses2 binaries")
    ap.add_argument("--models", help="directory with fr-en-{small,medium,big} (default: built once into "
                    "resources/benchmarks/models)")
    ap.add_argument("--input", help="source text (default: Multi30k val fr)")
    ap.add_argument("--feature-sets", nargs="+", default=["medium"], choices=("small", "medium", "big"))
    ap.add_argument("--weights", nargs="+", default=[], help="FEATURE_SET=FILE (default: the model's default.weights)")
    ap.add_argument("--binaries", nargs="+", default=["moses", "moses2"])
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--limit", type=int, help="only the first N input lines")
    ap.add_argument("--keep", help="keep the outputs in this directory")
    args = ap.parse_args()
    if args.child:
        child(args)
        return

    from smtlib.decoder.moses_backend import default_moses_dir
    from smtlib.system.moses_export import export_moses
    from smtlib.weights import read_weights

    bindir = pathlib.Path(args.moses) if args.moses else default_moses_dir()
    if bindir is None or not (bindir / args.binaries[0]).is_file():
        sys.exit("no Moses binaries: give --moses DIR or set $SMTLIB_MOSES_BIN")
    models = {fs: find_model(fs, args.models) for fs in args.feature_sets}
    runs: list[tuple[str, pathlib.Path]] = []
    for fs in args.feature_sets:
        given = [pathlib.Path(w.split("=", 1)[1]) for w in args.weights if w.split("=", 1)[0] == fs]
        runs += [(fs, w) for w in given] or [(fs, default_weights_file(models[fs]))]
    tmp_ctx = tempfile.TemporaryDirectory(prefix="bench-moses-") if not args.keep else None
    tmp = pathlib.Path(args.keep or tmp_ctx.name)
    tmp.mkdir(parents=True, exist_ok=True)
    src = pathlib.Path(args.input) if args.input else dev_set(tmp)[0]
    if args.limit:
        lines = src.read_text(encoding="utf-8").splitlines()[: args.limit]
        (tmp / "input.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        src = tmp / "input.txt"
    headline = None
    print(f"input {src} ({sum(1 for _ in open(src, encoding='utf-8'))} sentences), k={args.k}, stack 100, "
          f"distortion 6, table limit 20, 1 thread; Moses binaries in {bindir}")
    for n, (fs, weights) in enumerate(runs):
        model = models[fs]
        run_dir = tmp / f"{fs}-{n}"
        t0, c0 = time.perf_counter(), time.process_time()
        ini = export_moses(model, run_dir / "export", read_weights(weights))
        print(f"\n== {fs}, weights {weights}: export {time.perf_counter() - t0:.1f} s wall, "
              f"{time.process_time() - c0:.1f} s CPU")
        ours = run_child("smtlib", model, weights, src, ini, args.k, run_dir / "smtlib")
        rows = [("smtlib", ours, None)]
        for name in args.binaries:
            binary = bindir / name
            if not binary.is_file():
                print(f"{name}: not found, skipped")
                continue
            if name.startswith("moses2") and fs == "big" and any(
                    "_" in k and not k.rstrip("0123456789").endswith("_") for k in read_weights(weights)):
                print(f"{name}: skipped (moses2 reads no sparse features)")
                continue
            m = run_child(str(binary), model, weights, src, ini, args.k, run_dir / name)
            agree = agreement(run_dir / "smtlib" / "kbest.gz", run_dir / name / "kbest.gz")
            rows.append((name, m, agree))
            if headline is None:
                headline = (name, fs, 100.0 * agree["agree"] / agree["sentences"])
        print(f"{'decoder':<8} {'sent/s CPU':>10} {'sent/s wall':>11} {'load s':>7} {'peak MiB':>9}  agreement")
        for name, m, agree in rows:
            text = "" if agree is None else (
                f"{agree['agree']}/{agree['sentences']} same 1-best and score; ties {agree['ties']}, ours higher "
                f"{agree['ours_higher']}, {name} higher {agree['theirs_higher']} {agree['examples']}")
            print(f"{name:<8} {m['rate_cpu']:>10.1f} {m['rate_wall']:>11.1f} {m['load']:>7.1f} {m['peak_mib']:>9.0f}  "
                  f"{text}")
    if tmp_ctx is not None:
        tmp_ctx.cleanup()
    if headline is None:
        sys.exit("no Moses run")
    print(f"{headline[0]}_{headline[1]}_agree_percent: {headline[2]:.2f}")


if __name__ == "__main__":
    main()
