"""Decoding speed, memory and model scores: our stack and cube-pruning searches against Moses, in one run.

Decodes the same input (default: Multi30k val fr, 1,014 sentences, lowercased and tokenized) with the
same model (default ``resources/benchmarks/models/fr-en-medium``, built there with ``smtlib train build``
when missing, see ``benchmarks/_inputs.py``) and weights (default the tuning loop's initial weights,
Cherry & Foster §4.2: TM, LM and distortion 1, the rest 0; the model's own ``default.weights``, Moses's
hand-set defaults, weigh reordering more and make cube pruning's search errors more frequent, in ours
and in Moses's alike: ``benchmarks/results/decode_bar.md``)
and the same settings (stack 100, distortion limit 6, table limit 20, 100-best distinct, one thread):

* ours: ``--search stack`` and ``--search cube`` at each ``--pop-limits`` value, in one child process
  (the model is loaded once; each search is warmed up on one sentence before its clock starts);
  per search the CPU time of the decoding loop (``time.process_time``: search, 100-best and
  formatting of the n-best lines, loading excluded);
* when ``--moses-bin`` (default ``../shared/peers/moses/bin``, ``../shared`` being ``$SMTLIB_SHARED``
  when set) exists: ``moses2`` and ``moses`` on the
  model exported with ``smtlib train export-moses``, each in its own process; their decoding CPU time
  is the process's total CPU time (``os.wait4``) minus its CPU time when it reports that loading is
  over (``RUN BATCH`` for moses2, ``Created input-output object`` for moses; read from
  ``/proc/PID/stat``); peak memory is ``ru_maxrss``. Moses runs with ``-b 0`` by default
  (``--moses-beam-threshold``): our searches have no beam threshold, Moses's default (1e-5) prunes
  on top of the stack limit. ``--moses-ini`` uses a given ini instead of exporting one.

The score comparison needs Moses to decode *our* model: each option scored by both phrase tables
(ours merges them, a pair missing from one table at probability 1e-7). An export that puts the two
tables on separate decoding paths (one table per option, the other table's features 0) is another
model, whose totals are not comparable; the script says so when the ini has more than one phrase
table.

For every search it prints sentences/s of CPU, peak memory, 1-best BLEU (sacrebleu, ``-tok none``)
when a reference is given, and, against each Moses run, the share of sentences whose 1-best model
score (the total of the first n-best line) is at least Moses's (up to the printing precision of the
n-best totals: ``max(1e-3, 2e-5 |score|)``, the rounding of 6-significant-digit features).
The last line is ``metric: value``: the best cube search's CPU rate
among those scoring >= Moses on >= 99 % of sentences, divided by moses2's (without Moses: the best
cube rate divided by our stack search's).

    python benchmarks/decode.py [--model DIR] [--weights W] [--input SRC --ref REF] [--limit N]
                                [--pop-limits 100,200,500,1000] [--no-moses]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from _inputs import find_model, init_weights  # noqa: E402  (benchmarks/_inputs.py, beside this script)

#: ``../shared`` beside the repository, or ``$SMTLIB_SHARED`` (e.g. for a git worktree elsewhere)
SHARED = pathlib.Path(os.environ.get("SMTLIB_SHARED", pathlib.Path(__file__).resolve().parents[2] / "shared"))
DATA = SHARED / "data" / "multi30k" / "tok"
MOSES_BIN = SHARED / "peers" / "moses" / "bin"
#: what each Moses binary prints on stderr when it has loaded the model and starts decoding
LOADED_MARK = {"moses2": "RUN BATCH", "moses": "Created input-output object"}


def child(args: argparse.Namespace) -> None:
    """Decode with each of our searches in this process; print one JSON line per search."""
    from smtlib.decoder import driver
    from smtlib.decoder.decoder import Decoder, DecoderConfig
    from smtlib.decoder.loader import load_model
    from smtlib.decoder.model import prepare_tokens
    from smtlib.io import read_lines
    from smtlib.system.modeldir import read_model_spec
    from smtlib.weights import read_weights

    lines = read_lines(args.input, what="input", allow_empty=True)
    spec = read_model_spec(args.model)
    model = load_model(args.model, [prepare_tokens(spec, line) for line in lines])
    weights = model.read_weights(read_weights(args.weights), path=args.weights)
    out = pathlib.Path(args.out)
    for name in args.searches.split(","):
        search, _, pop = name.partition(":")
        cfg = DecoderConfig(k=args.k, search=search, pop_limit=int(pop) if pop else 1000)
        dec = Decoder(model, weights, cfg)
        driver._DECODER, driver._WANT = dec, (args.k, False)
        driver._decode_one((0, next((line for line in lines if line.strip()), "x")))  # compile / warm up
        best, kbest = [], []
        c0 = time.process_time()
        for item in enumerate(lines):
            b, kb, _, _, _ = driver._decode_one(item)
            best.append(b)
            kbest.append(kb)
        cpu = time.process_time() - c0
        (out / f"{name}.best").write_text("".join(b + "\n" for b in best), encoding="utf-8")
        (out / f"{name}.nbest").write_text("".join(kbest), encoding="utf-8")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps({"name": name, "sentences": len(lines), "cpu": cpu, "peak_mib": peak}), flush=True)


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a running process has used so far."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_moses(binary: pathlib.Path, ini: pathlib.Path, src: pathlib.Path, out: pathlib.Path, k: int,
              beam_threshold: float) -> dict:
    """Decode with a Moses binary; CPU time after loading, peak memory."""
    cmd = [str(binary), "-f", str(ini), "-threads", "1", "-s", "100", "-distortion-limit", "6",
           "-b", str(beam_threshold), "-n-best-list", str(out.with_suffix(".nbest")), str(k), "distinct"]
    mark = LOADED_MARK[binary.name]
    with open(src, "rb") as fin, open(out.with_suffix(".best"), "wb") as fout:
        proc = subprocess.Popen(cmd, stdin=fin, stdout=fout, stderr=subprocess.PIPE, text=True, errors="replace")
        loaded = None
        tail = []
        for line in proc.stderr:
            if loaded is None and mark in line:
                loaded = cpu_of(proc.pid)
            tail = (tail + [line])[-20:]
        _, status, ru = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0 or loaded is None:
        sys.exit(f"{binary.name} failed (or never reported loading):\n{''.join(tail)}")
    total = ru.ru_utime + ru.ru_stime
    return {"name": binary.name, "cpu": total - loaded, "load_cpu": loaded, "peak_mib": ru.ru_maxrss / 1024}


def first_totals(path: pathlib.Path) -> dict[int, float]:
    """Sentence id -> total of its first n-best line."""
    totals: dict[int, float] = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.split(" ||| ")
            sid = int(parts[0])
            if sid not in totals:
                totals[sid] = float(parts[-1])
    return totals


def at_least(ours: dict[int, float], peer: dict[int, float]) -> tuple[int, int]:
    """(sentences where our score >= the peer's up to printing precision, sentences compared)."""
    common = [i for i in peer if i in ours]
    ok = sum(ours[i] >= peer[i] - max(1e-3, 2e-5 * abs(peer[i])) for i in common)
    return ok, len(common)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="model directory (smtlib train; default: a Medium fr-en system built once "
                    "into resources/benchmarks/models)")
    ap.add_argument("--weights", help="weights file (default: the tuning loop's initial weights, Cherry & Foster "
                                      "§4.2, written beside the model)")
    ap.add_argument("--input", help="source sentences (default: Multi30k val fr)")
    ap.add_argument("--ref", help="references for BLEU (default: Multi30k val en when --input is not given)")
    ap.add_argument("--limit", type=int, default=0, help="first N sentences only")
    ap.add_argument("--k", type=int, default=100, help="n-best size (default 100)")
    ap.add_argument("--pop-limits", default="100,200,500,1000", help="cube pruning pop limits to run")
    ap.add_argument("--moses-bin", default=str(MOSES_BIN), help="directory with moses2 and moses")
    ap.add_argument("--no-moses", action="store_true", help="skip the Moses runs")
    ap.add_argument("--moses-ini", help="use this moses.ini (weights as --weights) instead of exporting the model")
    ap.add_argument("--moses-beam-threshold", type=float, default=0.0,
                    help="Moses's -b (default 0: no beam threshold, as our searches)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--searches", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    model = pathlib.Path(args.model) if args.model else find_model("medium")
    if not (model / "model.yaml").is_file():
        sys.exit(f"no model at {model} (build one with `smtlib train build`, or pass --model DIR)")
    weights = pathlib.Path(args.weights) if args.weights else init_weights(model, model.parent)
    if not weights.is_file():
        sys.exit(f"no weights file {weights}")
    if args.input:
        src_lines = pathlib.Path(args.input).read_text(encoding="utf-8").split("\n")[:-1]
        ref_lines = pathlib.Path(args.ref).read_text(encoding="utf-8").split("\n")[:-1] if args.ref else None
    else:
        src_gz, ref_gz = DATA / "val.lc.norm.tok.fr.gz", DATA / "val.lc.norm.tok.en.gz"
        if not src_gz.is_file():
            sys.exit(f"Multi30k val not found at {src_gz}: pass --input")
        src_lines = gzip.open(src_gz, "rt", encoding="utf-8").read().split("\n")[:-1]
        ref_lines = gzip.open(ref_gz, "rt", encoding="utf-8").read().split("\n")[:-1]
    if args.limit:
        src_lines = src_lines[: args.limit]
        ref_lines = ref_lines[: args.limit] if ref_lines else None
    pops = [int(p) for p in args.pop_limits.split(",") if p]
    searches = ["stack"] + [f"cube:{p}" for p in pops]
    moses_bin = pathlib.Path(args.moses_bin)
    use_moses = not args.no_moses and (moses_bin / "moses2").is_file()
    print(f"input {len(src_lines)} sentences, model {model}, weights {weights}, k={args.k} distinct, stack 100, "
          f"distortion 6, table limit 20, 1 thread; rates are sentences per CPU second of decoding (loading "
          f"excluded); Moses: {moses_bin if use_moses else 'not run'}", flush=True)

    with tempfile.TemporaryDirectory(prefix="bench-decode-") as tmpd:
        tmp = pathlib.Path(tmpd)
        src = tmp / "src"
        src.write_text("".join(line + "\n" for line in src_lines), encoding="utf-8")
        results = []
        cmd = [sys.executable, __file__, "--child", "--model", str(model), "--weights", str(weights),
               "--input", str(src), "--out", str(tmp), "--k", str(args.k), "--searches", ",".join(searches)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(f"our decoding failed:\n{res.stderr[-3000:]}")
        for line in res.stdout.strip().splitlines():
            m = json.loads(line)
            m["label"] = "ours " + m["name"].replace(":", " pop ")
            m["files"] = tmp / m["name"]
            results.append(m)
        peers = []
        if use_moses:
            from smtlib.system.moses_export import export_moses
            from smtlib.weights import read_weights

            if args.moses_ini:
                ini = pathlib.Path(args.moses_ini)
            else:
                ini = export_moses(model, tmp / "moses", read_weights(weights), copy=False, distortion_limit=6)
            if ini.read_text(encoding="utf-8").count("PhraseDictionary") > 1:
                print(f"warning: {ini} has several phrase tables on separate decoding paths: Moses decodes another "
                      "model, the score comparison below is not meaningful", flush=True)
            for name in ("moses2", "moses"):
                m = run_moses(moses_bin / name, ini, src, tmp / name, args.k, args.moses_beam_threshold)
                m["label"] = name
                m["files"] = tmp / name
                peers.append(m)
        totals = {m["label"]: first_totals(m["files"].with_suffix(".nbest")) for m in results + peers}
        bleu = {}
        if ref_lines is not None:
            import sacrebleu

            for m in results + peers:
                hyps = [h.strip() for h in m["files"].with_suffix(".best").read_text(encoding="utf-8").split("\n")]
                bleu[m["label"]] = sacrebleu.corpus_bleu(hyps[: len(ref_lines)], [ref_lines], tokenize="none",
                                                         force=True).score
        n = len(src_lines)
        for m in results + peers:
            m["rate"] = n / max(m["cpu"], 1e-9)
            cmp = ""
            for p in peers:
                if p is not m and m in results:
                    ok, tot = at_least(totals[m["label"]], totals[p["label"]])
                    m.setdefault("share", {})[p["label"]] = ok / max(tot, 1)
                    cmp += f"; score >= {p['label']} on {ok}/{tot} ({100 * ok / max(tot, 1):.1f} %)"
            if m in results and "ours stack" in totals and m["label"] != "ours stack":
                ok, tot = at_least(totals[m["label"]], totals["ours stack"])
                cmp += f"; >= ours stack on {ok}/{tot}"
            extra = f", load {m['load_cpu']:.1f} s CPU" if "load_cpu" in m else ""
            b = f"; BLEU {bleu[m['label']]:.2f}" if m["label"] in bleu else ""
            print(f"{m['label']:20s} {m['rate']:6.1f} sent/s CPU ({m['cpu']:.1f} s{extra}); peak {m['peak_mib']:.0f} "
                  f"MiB{b}{cmp}", flush=True)
        cubes = [m for m in results if m["name"].startswith("cube")]
        if peers:
            moses2 = peers[0]
            good = [m for m in cubes if all(v >= 0.99 for v in m["share"].values())]
            best = max(good, key=lambda m: m["rate"]) if good else None
            if best is None:
                print("no cube search scored >= Moses on 99 % of sentences")
                print("metric: 0")
                return
            print(f"best cube search scoring >= Moses on >= 99 %: {best['label']}, "
                  f"{best['rate'] / moses2['rate']:.2f}x moses2's sentences/s (CPU)")
            print(f"metric: {best['rate'] / moses2['rate']:.2f}")
        else:
            stack = results[0]
            best = max(cubes, key=lambda m: m["rate"]) if cubes else stack
            print(f"metric: {best['rate'] / stack['rate']:.2f}")


if __name__ == "__main__":
    main()
