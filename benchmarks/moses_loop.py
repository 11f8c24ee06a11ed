"""``smtlib loop`` against Moses's own loop, ``mert-moses.pl``, on the same Moses system, side by side.

Both loops tune the same Moses system (a fr->en system built with ``smtlib train build`` and
exported with ``smtlib train export-moses``) with the same Moses binary, the same decoder flags, the
same n-best size (``distinct``), the same dev set, the same initial weights (the exported
moses.ini's) and the same iteration limit, with MERT and with batch k-best MIRA:

* Moses: ``perl mert-moses.pl DEV.fr DEV.en MOSES moses.ini --working-dir W --mertdir BIN
  --no-filter-phrase-table --return-best-dev --nbest K --maximum-iterations N --decoder-flags FLAGS
  [--batch-mira]``, with ``--predictable-seeds`` (mert/kbmira ``-r 1000 * iteration``) for the seed
  ``predictable``, else ``--mertmertargs '-r S'`` / ``--batch-mira-args '-r S'`` (the same seed in
  every iteration: the script has no other seed option);
* ours: ``smtlib loop --source DEV.fr --refs DEV.en --init moses.ini --method mert|kbmira --k K
  --max-iterations N --tokenize none --lowercase --test TEST.fr --test-refs TEST.en --seed S
  --decoder 'MOSES FLAGS -config moses.ini {weights_args} -n-best-list {nbest} {k} distinct
  -input-file {input} > /dev/null'``: the decoder command mert-moses.pl runs, argument for argument;
  seed ``predictable`` is ``--seed 1000``, whose iteration-N seed is 1000 * N like mert-moses.pl's
  (the numbers only: the generators differ).

``BIN`` and ``MOSES`` are wrapper scripts written into the working directory: each runs the real
binary (``extractor``, ``mert``, ``kbmira``, ``pro``, ``moses``) under ``/usr/bin/time`` and appends
its wall and CPU seconds and command line to a log per loop run, so that the decoder's time is
measured the same way in both loops, and Moses's extractor and tuner calls one by one. This build
of Moses has no ``evaluator`` (which ``mert-moses.pl`` requires, and with ``--return-best-dev``
runs on every iteration's n-best list to pick the best iteration): the wrapper directory's
``evaluator`` is a stand-in written here, sacrebleu's corpus BLEU (tokenize none, lowercased) of
each sentence's first n-best hypothesis, printed as a fraction as Moses's evaluator prints it; its
time is logged and reported apart.

Measured per loop run: wall and CPU seconds of the whole process tree (``os.wait4``), of the decoder
runs (from the wrapper's log; ours split into dev and ``--test`` decodes), of Moses's extractor and
tuner calls, and the difference "all but the decoder" (the loop's own overhead). BLEU is sacrebleu's
(``--tokenize none``, lowercased, as ``config/config.yaml``'s ``bleu``) for both loops, computed
here from the files: dev BLEU per iteration from each iteration's n-best list (each sentence's
first hypothesis, which is Moses's 1-best), and test BLEU of the weights each loop returns (its
best-dev moses.ini), decoded here by Moses with the same flags (1-best). Our loop's own per-iteration
test BLEU (``curve.tsv``) is recorded as well.

With ``--concurrent pair`` the two loops of one method run at the same time, with ``--concurrent
all`` every loop of a seed (they then see the same machine load); by default one after the other,
Moses first. CPU seconds do not depend on it; wall seconds do. ``uptime``'s load averages are recorded
before and after every pair.

    python benchmarks/moses_loop.py --work DIR [--moses DIR] [--models DIR] [--moses-ini INI]
        [--dev-limit 200] [--test-set test_2016_flickr] [--test-limit 200] [--methods mert kbmira]
        [--seeds predictable] [--max-iterations 8] [--k 100]
        [--decoder-flags '-threads 1 -s 100 -distortion-limit 6'] [--concurrent none|pair|all] [--out-json FILE]
    python benchmarks/moses_loop.py --report FILE.json     (the Markdown table of a recorded run)

``--moses`` is the directory with ``bin/`` and ``scripts/training/mert-moses.pl`` (default
``$SMTLIB_MOSES``, else ``../shared/peers/moses`` beside the repository); without it the benchmark
prints why and exits with status 0. ``--models`` holds a prebuilt ``fr-en-small`` (else it is built
into ``resources/benchmarks/models``, see ``benchmarks/_inputs.py``); ``--moses-ini`` uses an
existing export instead of exporting into ``--work``. Last line: ``metric: value``, the largest
test-BLEU shortfall of ours below Moses's over methods and seeds (0 when none is below).
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import pathlib
import platform
import re
import shlex
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from _inputs import ENV, ROOT, SHARED_DATA, TOK, find_model, smtlib  # noqa: E402

PEERS = pathlib.Path(os.environ.get("SMTLIB_MOSES") or SHARED_DATA.parent / "peers" / "moses")
LOG_VAR = "MOSES_LOOP_TIMELOG"

EVALUATOR = '''#!{python}
"""Stand-in for Moses's evaluator (absent from this build): corpus BLEU of each sentence's first
n-best hypothesis (--nbest) or of a 1-best file (--candidate), sacrebleu, tokenize none, lowercased;
printed as a fraction. Written by benchmarks/moses_loop.py."""
import gzip, sys
import sacrebleu

args, refs, nbest, cand = sys.argv[1:], None, None, None
for i, a in enumerate(args):
    if a in ("--reference", "-R"):
        refs = args[i + 1].split(",")
    elif a == "--nbest":
        nbest = args[i + 1]
    elif a == "--candidate":
        cand = args[i + 1]
opener = lambda p: gzip.open(p, "rt", encoding="utf-8") if p.endswith(".gz") else open(p, encoding="utf-8")
if nbest:
    first = {{}}
    with opener(nbest) as f:
        for line in f:
            sid, text = line.split(" ||| ")[:2]
            first.setdefault(int(sid), text.strip())
    hyps = [first[i] for i in range(max(first) + 1)]
else:
    with opener(cand) as f:
        hyps = [l.strip() for l in f]
ref_lists = []
for r in refs:
    with opener(r) as f:
        ref_lists.append([l.rstrip("\\n") for l in f][:len(hyps)])
print(sacrebleu.corpus_bleu(hyps, ref_lists, tokenize="none", lowercase=True, force=True).score / 100)
'''

WRAPPER = """#!/bin/sh
# Runs {real} under /usr/bin/time; appends "{name} wall user sys command" to ${var} when it is set.
if [ -n "${var}" ]; then
  exec /usr/bin/time -a -o "${var}" -f "{name} %e %U %S %C" {real} "$@"
fi
exec {real} "$@"
"""


def load() -> str:
    return pathlib.Path("/proc/loadavg").read_text().strip()


def write_bin(work: pathlib.Path, moses_bin: pathlib.Path) -> pathlib.Path:
    """WORK/bin: timing wrappers of the Moses binaries and the evaluator stand-in."""
    out = work / "bin"
    out.mkdir(parents=True, exist_ok=True)
    for name in ("moses", "extractor", "mert", "kbmira", "pro"):
        p = out / name
        p.write_text(WRAPPER.format(real=shlex.quote(str(moses_bin / name)), name=name, var=LOG_VAR))
        p.chmod(0o755)
    stand_in = out / "evaluator.py"
    stand_in.write_text(EVALUATOR.format(python=sys.executable))
    stand_in.chmod(0o755)
    p = out / "evaluator"
    p.write_text(WRAPPER.format(real=shlex.quote(str(stand_in)), name="evaluator", var=LOG_VAR))
    p.chmod(0o755)
    return out


def read_lines(path: pathlib.Path) -> list[str]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def first_hypotheses(nbest: pathlib.Path, n: int) -> list[str]:
    """Each sentence's first hypothesis in a Moses n-best list (Moses writes it best first)."""
    first: dict[int, str] = {}
    for line in read_lines(nbest):
        sid, text = line.split(" ||| ")[:2]
        first.setdefault(int(sid), text.strip())
    return [first.get(i, "") for i in range(n)]


def bleu(hyps: list[str], refs: list[str]) -> float:
    import sacrebleu

    return sacrebleu.corpus_bleu([h.strip() for h in hyps], [refs], tokenize="none", lowercase=True, force=True).score


def timelog(path: pathlib.Path) -> list[dict]:
    rows = []
    if path.exists():
        for line in path.read_text().splitlines():
            parts = line.split(" ", 4)
            if len(parts) < 4 or parts[0] not in ("moses", "extractor", "mert", "kbmira", "pro", "evaluator"):
                continue  # /usr/bin/time's "Command exited with non-zero status" lines
            rows.append({"tool": parts[0], "wall": float(parts[1]), "cpu": float(parts[2]) + float(parts[3]),
                         "command": parts[4] if len(parts) > 4 else ""})
    return rows


def sums(rows: list[dict]) -> dict:
    return {"calls": len(rows), "wall": round(sum(r["wall"] for r in rows), 2), "cpu": round(sum(r["cpu"] for r in rows), 2)}


def run_group(cmds: dict[str, tuple[list[str], pathlib.Path, dict]], concurrent: bool) -> dict[str, dict]:
    """Run each named command (argv, log file of its stdout+stderr, environment); wall and CPU seconds."""
    out: dict[str, dict] = {}

    def start(name):
        argv, log, env = cmds[name]
        f = open(log, "w")
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=log.parent)
        return proc, f, t0

    names = list(cmds)
    batches = [names] if concurrent else [[n] for n in names]
    for batch in batches:
        running = {}
        for name in batch:
            proc, f, t0 = start(name)
            running[proc.pid] = (name, proc, f, t0)
        while running:
            pid, status, usage = os.wait4(-1, 0)
            if pid not in running:
                continue
            name, proc, f, t0 = running.pop(pid)
            f.close()
            code = os.waitstatus_to_exitcode(status)
            out[name] = {"wall": round(time.perf_counter() - t0, 2),
                         "cpu": round(usage.ru_utime + usage.ru_stime, 2), "exit": code,
                         "command": shlex.join(cmds[name][0])}
            if code != 0:
                tail = cmds[name][1].read_text(errors="replace")[-3000:]
                sys.exit(f"{name} failed ({code}): {shlex.join(cmds[name][0])}\n{tail}")
    return out


def moses_run_summary(wdir: pathlib.Path, log: pathlib.Path, n_dev: int, refs: list[str]) -> dict:
    """mert-moses.pl's iterations: sacrebleu dev BLEU per iteration, why it stopped, its best iteration."""
    text = log.read_text(errors="replace")
    runs = sorted(int(m.group(1)) for p in wdir.glob("run*.best*.out.gz")
                  if (m := re.match(r"run(\d+)\.best", p.name)))
    dev = [round(bleu(first_hypotheses(wdir / f"run{r}.best{K}.out.gz", n_dev), refs), 2) for r in runs]
    if "None of the weights changed more than" in text:
        stop = "epsilon: no weight changed by 1e-5 or more"
    elif "Maximum number of iterations exceeded" in text:
        stop = "max-iterations"
    else:
        stop = "unknown"
    m = re.search(r"copying weights from best iteration \((\d+), bleu=([0-9.eE+-]+)\)", text)
    return {"iterations": len(runs), "dev_bleu": dev, "stop": stop,
            "best_iteration": int(m.group(1)) if m else None,
            "best_evaluator_bleu": float(m.group(2)) * 100 if m else None,
            "ini": str(wdir / "moses.ini")}


def ours_run_summary(wdir: pathlib.Path, n_dev: int, refs: list[str]) -> dict:
    best = json.loads((wdir / "best.json").read_text())
    its = sorted(int(p.name[2:]) for p in wdir.glob("it*") if (p / "scores.json").exists())
    scores = [json.loads((wdir / f"it{n}" / "scores.json").read_text()) for n in its]
    dev = [round(bleu(first_hypotheses(wdir / f"it{n}" / "nbest.gz", n_dev), refs), 2) for n in its]
    return {"iterations": len(its), "dev_bleu": dev,
            "dev_bleu_loop": [round(s["dev_bleu"], 2) for s in scores],
            "test_bleu_loop": [None if s["test_bleu"] is None else round(s["test_bleu"], 2) for s in scores],
            "loop_seconds": [round(s["seconds"], 2) for s in scores],
            "stop": best["stop"], "best_iteration": best["iteration"], "ini": str(wdir / "best.moses.ini")}


K = 100


def markdown(record: dict) -> str:
    """The side-by-side table of a record: one row per loop run."""
    head = ("| loop | method | seed | iterations (stop) | dev BLEU per iteration | best it. | test BLEU | "
            "all: wall / CPU s | decoder: calls, CPU s | extractor + tuner CPU s | all but the decoder: wall / CPU s |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for e in record["runs"]:
        tools = (f"{e['extractor']['cpu']:.2f} + {e['tuner']['cpu']:.2f}" if "extractor" in e else "")
        dev = " ".join(f"{b:.2f}" for b in e["dev_bleu"])
        calls = (f"{e['decoder_dev']['calls']} dev + {e['decoder_test']['calls']} test" if "decoder_test" in e
                 else f"{e['decoder']['calls']} ({e['decoder_show_weights']['calls']} -show-weights)")
        lines.append(f"| {e['loop']} | {e['method']} | {e['seed']} | {e['iterations']} ({e['stop'].split(':')[0]}) | "
                     f"{dev} | {e['best_iteration']} | {e['test_bleu']:.2f} | {e['wall']:.0f} / {e['cpu']:.1f} | "
                     f"{calls}, {e['decoder']['cpu']:.1f} | {tools} | "
                     f"{e['overhead']['wall']:.1f} / {e['overhead']['cpu']:.2f} |")
    return "\n".join(lines)


def summary(records: list[dict]) -> str:
    """Per method and loop over every run of ``records`` (e.g. one file per seed): the mean of the best
    dev BLEU, the test BLEU and the CPU of all but the decoder, with the values per seed in brackets."""
    head = ("| method | loop | seeds | best dev BLEU | test BLEU | iterations | all but the decoder, CPU s |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    runs = [e for r in records for e in r["runs"]]
    # the dev BLEU of the weights each loop returns: ours returns its best iteration; mert-moses.pl its best
    # among the iterations before the one it stops in (best_iteration)

    def cell(values: list[float], digits: int = 2) -> str:
        return f"{sum(values) / len(values):.{digits}f} ({', '.join(f'{v:.{digits}f}' for v in values)})"

    for method in dict.fromkeys(e["method"] for e in runs):
        for loop in ("mert-moses.pl", "smtlib loop"):
            mine = [e for e in runs if e["method"] == method and e["loop"] == loop]
            if not mine:
                continue
            lines.append(f"| {method} | {loop} | {', '.join(str(e['seed']) for e in mine)} | "
                         f"{cell([max(e['dev_bleu']) if loop == 'smtlib loop' else e['dev_bleu'][e['best_iteration'] - 1] for e in mine])} | "
                         f"{cell([e['test_bleu'] for e in mine])} | {', '.join(str(e['iterations']) for e in mine)} | "
                         f"{cell([e['overhead']['cpu'] for e in mine])} |")
    return "\n".join(lines)


def main() -> None:
    global K
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", help="working directory (inputs, both loops' directories, logs)")
    ap.add_argument("--moses", default=str(PEERS), help="Moses directory with bin/ and scripts/training/mert-moses.pl")
    ap.add_argument("--models", help="directory holding a prebuilt fr-en-small (default: built when missing)")
    ap.add_argument("--moses-ini", help="an existing moses.ini of the system (default: export it into --work)")
    ap.add_argument("--dev-limit", type=int, default=200, help="first N sentences of Multi30k val (default 200)")
    ap.add_argument("--test-set", default="test_2016_flickr", help="Multi30k test set (default test_2016_flickr)")
    ap.add_argument("--test-limit", type=int, default=200, help="its first N sentences (default 200)")
    ap.add_argument("--methods", nargs="+", default=["mert", "kbmira"], choices=["mert", "kbmira"])
    ap.add_argument("--seeds", nargs="+", default=["predictable"],
                    help="'predictable' (mert-moses.pl --predictable-seeds; smtlib loop --seed 1000) or integers")
    ap.add_argument("--max-iterations", type=int, default=8)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--decoder-flags", default="-threads 1 -s 100 -distortion-limit 6")
    ap.add_argument("--concurrent", choices=["none", "pair", "all"], default="none",
                    help="none: one loop after the other; pair: the two loops of a method at the same time; "
                         "all: every method's two loops of a seed at the same time (default none)")
    ap.add_argument("--out-json", help="where to write the measurements (default WORK/moses_loop.json)")
    ap.add_argument("--report", metavar="JSON", help="print the Markdown table of a recorded JSON and exit")
    ap.add_argument("--summary", metavar="JSON", nargs="+",
                    help="print the per-method means over the runs of recorded JSONs (e.g. one per seed) and exit")
    args = ap.parse_args()
    K = args.k
    if args.report:
        print(markdown(json.loads(pathlib.Path(args.report).read_text())))
        return
    if args.summary:
        print(summary([json.loads(pathlib.Path(f).read_text()) for f in args.summary]))
        return

    if not args.work:
        ap.error("--work is required")
    moses_dir = pathlib.Path(args.moses)
    mert_moses = moses_dir / "scripts" / "training" / "mert-moses.pl"
    if not (moses_dir / "bin" / "moses").exists() or not mert_moses.exists():
        print(f"skipped: no Moses build at {moses_dir} (bin/moses and scripts/training/mert-moses.pl; "
              "pass --moses DIR or set SMTLIB_MOSES)")
        return
    if not pathlib.Path("/usr/bin/time").exists():
        print("skipped: /usr/bin/time is needed to time the decoder and Moses's tools")
        return
    work = pathlib.Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    record: dict = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                    "machine": {"node": platform.node(), "cpus": os.cpu_count(),
                                "cpu_model": next((line.split(":", 1)[1].strip() for line in
                                                   open("/proc/cpuinfo") if line.startswith("model name")), None),
                                "kernel": platform.release()},
                    "commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                             text=True).stdout.strip(),
                    "load_start": load(), "options": vars(args)}

    # inputs: the reduced dev and test sets, the system and its Moses export
    data = work / "data"
    data.mkdir(exist_ok=True)
    sets = {"dev": ("val", args.dev_limit), "test": (args.test_set, args.test_limit)}
    for part, (name, limit) in sets.items():
        for lang in ("fr", "en"):
            src = TOK / f"{name}.lc.norm.tok.{lang}.gz"
            if not src.exists():
                sys.exit(f"{src} not found (set SMTLIB_SHARED_DATA to the shared data directory)")
            lines = read_lines(src)[:limit]
            (data / f"{part}.{lang}").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    dev_fr, dev_en, test_fr, test_en = (data / f for f in ("dev.fr", "dev.en", "test.fr", "test.en"))
    dev_refs, test_refs = read_lines(dev_en), read_lines(test_en)
    record["data"] = {"dev": f"Multi30k val, first {len(dev_refs)} sentences (fr-en, lowercased, tokenized)",
                      "test": f"Multi30k {args.test_set}, first {len(test_refs)} sentences"}
    if args.moses_ini:
        ini = pathlib.Path(args.moses_ini).resolve()
    else:
        model = find_model("small", args.models)
        ini = work / "system" / "moses.ini"
        if not ini.exists():
            subprocess.run(smtlib("train", "export-moses", "--model", model, "--out", ini.parent), check=True,
                           env=ENV, cwd=ROOT)
    record["system"] = {"moses_ini": str(ini), "ini_text": ini.read_text()}

    bindir = write_bin(work, moses_dir / "bin")
    flags = args.decoder_flags
    record["runs"] = []
    for seed in args.seeds:
        planned = []
        for method in args.methods:
            tag = f"{method}.{seed}"
            mdir, odir = work / f"moses-{tag}", work / f"ours-{tag}"
            for d in (mdir, odir):
                if d.exists():
                    sys.exit(f"{d} exists: use a fresh --work (a rerun would continue, not measure)")
            mdir.mkdir()
            odir.mkdir()
            moses_cmd = ["perl", str(mert_moses), str(dev_fr), str(dev_en), str(bindir / "moses"), str(ini),
                         "--working-dir", str(mdir / "work"), "--mertdir", str(bindir), "--no-filter-phrase-table",
                         "--return-best-dev", "--nbest", str(args.k), "--maximum-iterations", str(args.max_iterations),
                         "--decoder-flags", flags]
            if method == "kbmira":
                moses_cmd.append("--batch-mira")
            if seed == "predictable":
                moses_cmd.append("--predictable-seeds")
                our_seed = "1000"
            else:
                moses_cmd += ["--batch-mira-args" if method == "kbmira" else "--mertmertargs", f"-r {int(seed)}"]
                our_seed = str(int(seed))
            decoder = (f"{shlex.quote(str(bindir / 'moses'))} {flags} -config {shlex.quote(str(ini))} {{weights_args}} "
                       "-n-best-list {nbest} {k} distinct -input-file {input} > /dev/null")
            ours_cmd = smtlib("loop", "--source", dev_fr, "--refs", dev_en, "--init", ini, "--work-dir", odir / "work",
                              "--method", method, "--k", args.k, "--max-iterations", args.max_iterations,
                              "--tokenize", "none", "--lowercase", "--test", test_fr, "--test-refs", test_en,
                              "--seed", our_seed, "--decoder", decoder)
            ours_cmd = [str(c) for c in ours_cmd]
            envs = {name: {**ENV, LOG_VAR: str(d / "times.log")} for name, d in (("moses", mdir), ("ours", odir))}
            planned.append((method, {f"moses {method}": (moses_cmd, mdir / "run.log", envs["moses"]),
                                     f"ours {method}": (ours_cmd, odir / "run.log", envs["ours"])}))
        groups = ([(args.methods, {k: v for _, cmds in planned for k, v in cmds.items()})]
                  if args.concurrent == "all" else [([m], cmds) for m, cmds in planned])
        for methods, cmds in groups:
            before = load()
            print(f"{seed}: running {', '.join(cmds)} "
                  f"({'at once' if args.concurrent != 'none' else 'in turn'}), load {before}", file=sys.stderr, flush=True)
            timed = run_group(cmds, args.concurrent != "none")
            after = load()
            for (name, d), method in ((x, m) for m in methods
                                      for x in (("moses", work / f"moses-{m}.{seed}"), ("ours", work / f"ours-{m}.{seed}"))):
                rows = timelog(d / "times.log")
                dec = [r for r in rows if r["tool"] == "moses"]
                entry = {"loop": "mert-moses.pl" if name == "moses" else "smtlib loop", "method": method,
                         "seed": seed, "load_before": before, "load_after": after, **timed[f"{name} {method}"],
                         "decoder": sums(dec)}
                if name == "moses":
                    entry.update(moses_run_summary(d / "work", d / "run.log", len(dev_refs), dev_refs))
                    entry["extractor"] = sums([r for r in rows if r["tool"] == "extractor"])
                    entry["tuner"] = sums([r for r in rows if r["tool"] == method])
                    entry["evaluator_stand_in"] = sums([r for r in rows if r["tool"] == "evaluator"])
                    entry["decoder_show_weights"] = sums([r for r in dec if "-show-weights" in r["command"]])
                    other = entry["evaluator_stand_in"]
                else:
                    entry.update(ours_run_summary(d / "work", len(dev_refs), dev_refs))
                    entry["decoder_dev"] = sums([r for r in dec if "/test" not in r["command"]])
                    entry["decoder_test"] = sums([r for r in dec if "/test" in r["command"]])
                    other = {"wall": 0.0, "cpu": 0.0}
                entry["overhead"] = {k: round(entry[k] - entry["decoder"][k] - other[k], 2) for k in ("wall", "cpu")}
                # test BLEU of the returned weights: Moses, 1-best, the same flags
                out = d / "test.1best"
                with open(test_fr) as fin, open(out, "w") as fout, open(d / "test.log", "w") as ferr:
                    t0 = time.perf_counter()
                    proc = subprocess.Popen([str(moses_dir / "bin" / "moses"), *shlex.split(flags), "-config",
                                             entry["ini"]], stdin=fin, stdout=fout, stderr=ferr)
                    _, status, usage = os.wait4(proc.pid, 0)
                if os.waitstatus_to_exitcode(status) != 0:
                    sys.exit(f"test decode failed: {entry['ini']} (see {d / 'test.log'})")
                entry["test_decode"] = {"wall": round(time.perf_counter() - t0, 2),
                                        "cpu": round(usage.ru_utime + usage.ru_stime, 2)}
                entry["test_bleu"] = round(bleu(read_lines(out), test_refs), 2)
                if name == "ours":  # the loop's own decode of the test set with the same weights (100-best)
                    loop_best = d / "work" / f"it{entry['best_iteration']}" / "test.1best"
                    entry["test_1best_same_as_loop"] = ([h.strip() for h in read_lines(out)]
                                                        == [h.strip() for h in read_lines(loop_best)])
                record["runs"].append(entry)
                print(f"  {entry['loop']:14s} {method}: dev {entry['dev_bleu']} stop {entry['stop']} best it "
                      f"{entry['best_iteration']} test {entry['test_bleu']:.2f}; {entry['wall']:.0f} s wall "
                      f"{entry['cpu']:.0f} s CPU, decoder {entry['decoder']['cpu']:.0f} s CPU, overhead "
                      f"{entry['overhead']['cpu']:.1f} s CPU", file=sys.stderr, flush=True)
            pathlib.Path(args.out_json or work / "moses_loop.json").write_text(json.dumps(record, indent=1) + "\n")
    record["load_end"] = load()
    out_json = pathlib.Path(args.out_json or work / "moses_loop.json")
    out_json.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {out_json}", file=sys.stderr)
    print(markdown(record))
    gaps = []
    for m in record["runs"]:
        if m["loop"] == "smtlib loop":
            peer = next(r for r in record["runs"] if r["loop"] == "mert-moses.pl" and r["method"] == m["method"]
                        and r["seed"] == m["seed"])
            gaps.append(peer["test_bleu"] - m["test_bleu"])
    print(f"metric: {max([0.0, *gaps]):.2f}")


if __name__ == "__main__":
    main()
