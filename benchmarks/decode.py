"""Decoding speed and memory on Multi30k val fr->en, against moses2's figure measured on this data.

Decodes the 1,014 sentences of Multi30k val (lowercased, tokenized) with the ``medium`` model,
stack 100, table limit 20, distortion limit 6, k=100, one process; then with the ``big`` model;
then ``medium`` again writing the lattice too. Each configuration runs in its own child process so
that its peak memory (``ru_maxrss``, model included) is its own; the rate counts decoding only
(model loading excluded, as the peer figures do) and is given in wall-clock and CPU seconds (the CPU
rate is the one to trust on a shared machine). There is no Moses binary here: the peer figures are
the ones the issue gives, measured on this machine with these settings -- Moses 10.6 sentences/s
and moses2 17.7 with 100-best (43.3 1-best). The 1-best BLEU (sacrebleu, ``-tok none``) with the
given weights is printed too.

    python benchmarks/decode.py [--models /work/models] [--weights W] [--limit N] [--jobs 1]

The model directories are ``MODELS/fr-en-medium`` and ``MODELS/fr-en-big`` (``smtlib train``);
the weights default to the model's ``weights.init`` (Moses's hand-set defaults) when it has one.
Last line: ``metric: value`` with the medium k=100 CPU rate.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

MOSES2_KBEST = 17.7
MOSES_KBEST = 10.6
DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "multi30k" / "tok"


def child(args: argparse.Namespace) -> None:
    """Decode once and print a JSON line with the measurements."""
    from smtlib.decoder.decoder import DecoderConfig
    from smtlib.decoder.driver import decode_file

    out = pathlib.Path(args.out)
    cfg = DecoderConfig(k=args.k)
    stats = decode_file(args.model, args.weights, args.input, kbest_out=out / "kbest.gz", output=out / "best.txt",
                        lattice_out=(out / "lattice.gz") if args.lattice else None, config=cfg, jobs=args.jobs,
                        progress=False)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.jobs > 1:
        peak += resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"sentences": stats.sentences, "seconds": stats.seconds, "load": stats.load_seconds,
                      "cpu_decode": stats.cpu_seconds, "peak_mib": peak, "nodes": stats.nodes, "edges": stats.edges}))


def run_config(name: str, model: pathlib.Path, weights: pathlib.Path, src: pathlib.Path, ref: pathlib.Path | None,
               lattice: bool, jobs: int, tmp: pathlib.Path) -> dict:
    out = tmp / name
    out.mkdir()
    cmd = [sys.executable, __file__, "--child", "--model", str(model), "--weights", str(weights), "--input", str(src),
           "--out", str(out), "--jobs", str(jobs)] + (["--lattice"] if lattice else [])
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{name}: decoding failed:\n{res.stderr}")
    m = json.loads(res.stdout.strip().splitlines()[-1])
    m["rate_wall"] = m["sentences"] / m["seconds"]
    m["rate_cpu"] = m["sentences"] / max(m["cpu_decode"], 1e-9) if jobs == 1 else float("nan")
    if ref is not None:
        import sacrebleu

        hyps = (out / "best.txt").read_text(encoding="utf-8").split("\n")[:-1]
        refs = ref.read_text(encoding="utf-8").split("\n")[: len(hyps)]
        m["bleu"] = sacrebleu.corpus_bleu(hyps, [refs], tokenize="none").score
    if lattice:
        m["lattice_mib"] = (out / "lattice.gz").stat().st_size / 2**20
    m["kbest_mib"] = (out / "kbest.gz").stat().st_size / 2**20
    return m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=os.environ.get("SMTLIB_MODELS", "/work/models"))
    ap.add_argument("--weights", help="weights file (default: the model's weights.init)")
    ap.add_argument("--limit", type=int, default=0, help="first N sentences only")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--skip-big", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--input", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--lattice", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--k", type=int, default=100, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    models = pathlib.Path(args.models)
    medium, big = models / "fr-en-medium", models / "fr-en-big"
    if not (medium / "model.yaml").is_file():
        sys.exit(f"no model at {medium} (build it with `smtlib train`, or pass --models DIR)")
    src_gz, ref_gz = DATA / "val.lc.norm.tok.fr.gz", DATA / "val.lc.norm.tok.en.gz"
    if not src_gz.is_file():
        sys.exit(f"Multi30k val not found at {src_gz}")
    import gzip

    with tempfile.TemporaryDirectory(prefix="bench-decode-") as tmpd:
        tmp = pathlib.Path(tmpd)
        src_lines = gzip.open(src_gz, "rt", encoding="utf-8").read().split("\n")[:-1]
        ref_lines = gzip.open(ref_gz, "rt", encoding="utf-8").read().split("\n")[:-1]
        if args.limit:
            src_lines, ref_lines = src_lines[: args.limit], ref_lines[: args.limit]
        (tmp / "src").write_text("\n".join(src_lines) + "\n", encoding="utf-8")
        (tmp / "ref").write_text("\n".join(ref_lines) + "\n", encoding="utf-8")
        configs = [("medium k=100", medium, False)]
        if not args.skip_big and (big / "model.yaml").is_file():
            configs.append(("big k=100", big, False))
        configs.append(("medium k=100 + lattice", medium, True))
        results = {}
        for i, (name, model, lattice) in enumerate(configs):
            weights = pathlib.Path(args.weights) if args.weights else model / "weights.init"
            if not weights.is_file():
                sys.exit(f"no weights: pass --weights (the model has no {weights.name})")
            m = run_config(f"c{i}", model, weights, tmp / "src", tmp / "ref", lattice, args.jobs, tmp)
            results[name] = m
            extra = f", lattice {m['lattice_mib']:.0f} MiB gz" if lattice else ""
            print(f"{name:24s} {m['sentences']} sentences: {m['rate_wall']:.1f} sent/s wall, "
                  f"{m['rate_cpu']:.1f} sent/s CPU; load {m['load']:.1f} s; peak {m['peak_mib']:.0f} MiB; "
                  f"BLEU {m['bleu']:.2f}; {m['nodes'] / m['sentences']:.0f} nodes and "
                  f"{m['edges'] / m['sentences']:.0f} edges per sentence{extra}", flush=True)
        head = results["medium k=100"]
        print(f"peer (issue, same data and settings): moses2 {MOSES2_KBEST} sent/s, Moses {MOSES_KBEST} sent/s "
              f"with 100-best")
        print(f"ratio to moses2 (CPU rate): {head['rate_cpu'] / MOSES2_KBEST:.2f}x; "
              f"(wall rate): {head['rate_wall'] / MOSES2_KBEST:.2f}x")
        print(f"metric: {head['rate_cpu']:.2f}")


if __name__ == "__main__":
    main()
