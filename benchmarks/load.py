"""Model loading: ``smtlib decode`` of one sentence against decoding the whole dev set (issue 9).

For a model directory as ``smtlib train build`` writes it, the target is that decoding ONE sentence
costs at most 5% of what decoding the 1,014 Multi30k dev sentences costs (medium, k=100, stack 100,
one process), which is only possible if loading the model is cheap. This script measures, each
command in its own child process (``os.wait4``: CPU = user + system, peak RSS):

* ``smtlib train compile`` of the model (into a hard-linked copy of the directory, so the given
  directory is never written to);
* ``smtlib decode`` of the first dev sentence (median of ``--repeat`` runs) and of all dev
  sentences, once reading the text tables (a copy without ``compiled.bin``) and once the compiled
  model, with k-best output as the tuning loop decodes;
* the parts of the one-sentence command with the compiled model (a child that runs the same steps
  timed with ``time.process_time``): interpreter start and imports, numba's first call (it loads
  numba's NumPy implementations), model loading, and the decoding of the sentence (the driver's
  warm-up decode included, as in ``smtlib decode``).

Both ratios (one sentence / all dev, text and compiled) are printed; the last line is the compiled
one: ``load_share_of_dev_decode: X%``.

    python benchmarks/load.py [--model DIR] [--dev FILE] [--weights FILE] [--repeat 3] [--work DIR]

``--model`` defaults to ``resources/benchmarks/models/fr-en-medium`` (the directory
``benchmarks/loop.py`` uses), built there from ``../shared/data`` with ``smtlib train build`` when
missing (``benchmarks/_inputs.py``); ``--dev`` to Multi30k val (tokenized, lowercased) from ``../shared/data``; ``--weights`` to
the workflow's initial weights (``config/config.yaml``: ``tuning.init_ones``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import _inputs  # benchmarks/_inputs.py, beside this script: models, dev set, initial weights

ROOT = pathlib.Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


@dataclasses.dataclass
class Measured:
    cpu: float
    peak_mib: float
    stdout: str


def measure(cmd: list[str]) -> Measured:
    """Run ``cmd`` in a child process; its CPU time (user + system) and peak RSS (``os.wait4``)."""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=ENV, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"failed: {' '.join(cmd)}\n{err.read()}")
        return Measured(usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read())


def smtlib(*args: str) -> list[str]:
    return [sys.executable, "-m", "smtlib", *map(str, args)]


# ---------------------------------------------------------------- inputs
def find_model(path: pathlib.Path | None) -> pathlib.Path:
    return path if path is not None else _inputs.find_model("medium")


def dev_input(path: pathlib.Path | None, work: pathlib.Path) -> pathlib.Path:
    return path if path is not None else _inputs.dev_set(work)[0]


def init_weights(path: pathlib.Path | None, model: pathlib.Path, work: pathlib.Path) -> pathlib.Path:
    return path if path is not None else _inputs.init_weights(model, work)


def linked_copy(model: pathlib.Path, dest: pathlib.Path) -> pathlib.Path:
    """The model directory's files hard-linked (copied across file systems), without compiled.bin."""
    dest.mkdir(parents=True)
    for f in model.iterdir():
        if f.is_file() and f.name != "compiled.bin":
            try:
                os.link(f, dest / f.name)
            except OSError:
                shutil.copy2(f, dest / f.name)
    return dest


# ---------------------------------------------------------------- the parts of one decode
PARTS = r"""
import json, sys, time
t0 = time.process_time()
from smtlib.decoder.driver import decode_file  # what `smtlib decode` imports
from smtlib.decoder.loader import load_model
from smtlib.decoder.model import prepare_tokens
from smtlib.decoder.decoder import Decoder, DecoderConfig
from smtlib.numba_startup import load_numba_implementations
from smtlib.decoder.lm_restrict import first_kept_nb
from smtlib.system.modeldir import read_model_spec
from smtlib.weights import read_weights
import numpy as np
t1 = time.process_time()
load_numba_implementations()
first_kept_nb(np.zeros((1, 1), np.int32), np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.bool_))
t2 = time.process_time()
model_dir, weights, line = sys.argv[1], sys.argv[2], sys.argv[3]
spec = read_model_spec(model_dir)
model = load_model(model_dir, [prepare_tokens(spec, line)])
t3 = time.process_time()
dec = Decoder(model, model.read_weights(read_weights(weights)), DecoderConfig(k=100))
for _ in range(2):  # the driver's warm-up, then the sentence
    dec.decode(line, 0, kbest=100)
t4 = time.process_time()
print(json.dumps({"imports": t1 - t0, "numba": t2 - t1, "load": t3 - t2, "decode": t4 - t3, "compiled": model.compiled}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=pathlib.Path, help="model directory (default: see above)")
    ap.add_argument("--dev", type=pathlib.Path, help="tokenized, lowercased source sentences (default: Multi30k val)")
    ap.add_argument("--weights", type=pathlib.Path, help="weights file (default: the workflow's initial weights)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the one-sentence decode (median; default 3)")
    ap.add_argument("--work", type=pathlib.Path, help="working directory (default: a temporary one)")
    args = ap.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="load-bench-")) if args.work is None else args.work
    work.mkdir(parents=True, exist_ok=True)
    model = find_model(args.model)
    dev = dev_input(args.dev, work)
    weights = init_weights(args.weights, model, work)
    one = work / "one.src"
    one.write_text(dev.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    n_dev = len(dev.read_text(encoding="utf-8").splitlines())

    dirs = {"text": linked_copy(model, work / "text"), "compiled": linked_copy(model, work / "compiled")}
    t = time.perf_counter()
    comp = measure(smtlib("train", "compile", "--model", dirs["compiled"]))
    info = json.loads(comp.stdout)
    print(f"load: compile: {comp.cpu:.1f} s CPU ({time.perf_counter() - t:.1f} s wall), peak {comp.peak_mib:.0f} MiB, "
          f"compiled.bin {info['bytes'] / 2**20:.0f} MiB ({info['entries']} phrase pairs)", flush=True)

    def decode(kind: str, src: pathlib.Path, name: str) -> Measured:
        return measure(smtlib("decode", "--model", dirs[kind], "--weights", weights, "--input", src, "--kbest",
                              work / f"{name}.{kind}.kbest.gz", "--output", work / f"{name}.{kind}.best", "--k", "100",
                              "--stack-size", "100", "--jobs", "1", "--quiet"))

    results = {}
    for kind in ("compiled", "text"):
        runs = [decode(kind, one, "one") for _ in range(args.repeat)]
        cpu = statistics.median(r.cpu for r in runs)
        full = decode(kind, dev, "dev")
        results[kind] = (cpu, full.cpu)
        print(f"load: {kind:8s}: one sentence {cpu:6.2f} s CPU (runs {', '.join(f'{r.cpu:.2f}' for r in runs)}; "
              f"peak {max(r.peak_mib for r in runs):.0f} MiB); {n_dev} sentences {full.cpu:6.1f} s CPU "
              f"(peak {full.peak_mib:.0f} MiB)", flush=True)
    same = all((work / f"dev.compiled.{ext}").read_bytes() == (work / f"dev.text.{ext}").read_bytes()
               for ext in ("best", "kbest.gz"))
    print(f"load: compiled and text outputs identical: {same}")
    parts = json.loads(measure([sys.executable, "-c", PARTS, str(dirs["compiled"]), str(weights),
                                one.read_text(encoding="utf-8").strip()]).stdout)
    print("load: parts of the one-sentence command (compiled, CPU): "
          + ", ".join(f"{k} {v:.2f} s" for k, v in parts.items() if k != "compiled"))
    text_share = 100 * results["text"][0] / results["text"][1]
    print(f"load: one sentence / {n_dev} sentences with the text tables: {text_share:.1f}%")
    print(f"load_share_of_dev_decode: {100 * results['compiled'][0] / results['compiled'][1]:.1f}%")


if __name__ == "__main__":
    main()
