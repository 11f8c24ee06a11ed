"""What the benchmarks decode and tune with, found or built here: model directories, dev set, initial weights.

Every benchmark takes its inputs as options; without them it uses these defaults, never a fixed
absolute path:

* models: ``resources/benchmarks/models/fr-en-{small,medium,big}`` in the repository (git-ignored;
  the directory ``load.py`` and ``loop.py`` use too), each built there when missing with ``smtlib
  train build`` (Multi30k fr->en, the full training corpus, seed 1; a few minutes per feature set)
  into its own work directory ``fr-en-{fs}.work``;
* the dev set: Multi30k val (1,014 sentences, lowercased and tokenized) from the shared data;
* initial weights: Cherry & Foster (2012) §4.2 as the workflow sets them (``smtlib data
  init-weights --ones`` with ``config/config.yaml``'s ``tuning.init_ones``).

The shared data is ``$SMTLIB_SHARED_DATA``, else ``$SMTLIB_SHARED/data``, else ``../shared/data``
beside the repository. When it is needed and missing, the benchmark stops with one line saying
which option to pass instead.
"""

from __future__ import annotations

import dataclasses
import gzip
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED_DATA = pathlib.Path(
    os.environ.get("SMTLIB_SHARED_DATA")
    or (pathlib.Path(os.environ["SMTLIB_SHARED"]) / "data" if os.environ.get("SMTLIB_SHARED") else None)
    or ROOT.parent / "shared" / "data"
)
TOK = SHARED_DATA / "multi30k" / "tok"
MODELS = ROOT / "resources" / "benchmarks" / "models"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def smtlib(*args: object) -> list[str]:
    """The command line of ``smtlib ARGS`` run from this repository."""
    return [sys.executable, "-m", "smtlib", *map(str, args)]


def _need_data(path: pathlib.Path, instead: str) -> None:
    if not path.exists():
        sys.exit(f"{path} not found (set SMTLIB_SHARED_DATA to the shared data directory, or pass {instead})")


def find_model(feature_set: str, models: str | os.PathLike | None = None) -> pathlib.Path:
    """``MODELS/fr-en-FEATURE_SET``, built with ``smtlib train build`` when it has no ``model.yaml``.

    ``models`` given (a directory the user names) is only looked in, never built into.
    """
    if models is not None:
        model = pathlib.Path(models) / f"fr-en-{feature_set}"
        if not (model / "model.yaml").is_file():
            sys.exit(f"no model at {model} (a directory with fr-en-{feature_set}/model.yaml; "
                     "leave --models out to build one)")
        return model
    model = MODELS / f"fr-en-{feature_set}"
    if (model / "model.yaml").is_file():
        return model
    _need_data(TOK, "--models DIR with prebuilt fr-en-{small,medium,big} systems")
    print(f"building {model} from {TOK} with smtlib train build (a few minutes, once)", file=sys.stderr, flush=True)
    subprocess.run(smtlib("train", "build", "--src", TOK / "train.lc.norm.tok.fr.gz",
                          "--tgt", TOK / "train.lc.norm.tok.en.gz", "--src-lang", "fr", "--tgt-lang", "en",
                          "--feature-set", feature_set, "--out", model, "--work", f"{model}.work", "--seed", "1"),
                   check=True, env=ENV, cwd=ROOT)
    return model


def dev_set(work: pathlib.Path, limit: int | None = None) -> tuple[pathlib.Path, pathlib.Path]:
    """Multi30k val, source (fr) and reference (en), its first ``limit`` lines, written into ``work``."""
    paths = []
    for lang in ("fr", "en"):
        src = TOK / f"val.lc.norm.tok.{lang}.gz"
        _need_data(src, "the input (and reference) files")
        lines = gzip.decompress(src.read_bytes()).decode("utf-8").split("\n")[:-1]
        path = work / f"dev.{lang}"
        path.write_text("".join(line + "\n" for line in lines[:limit]), encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]


def init_weights(model: pathlib.Path, work: pathlib.Path) -> pathlib.Path:
    """The workflow's initial weights of ``model`` (Cherry & Foster §4.2), written into ``work``."""
    ones = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))["tuning"]["init_ones"]
    out = work / f"{model.name}.init.weights"
    subprocess.run(smtlib("data", "init-weights", "--model", model, "--out", out, "--ones", *ones), check=True,
                   env=ENV, cwd=ROOT, capture_output=True)
    return out


@dataclasses.dataclass
class Measured:
    wall: float
    cpu: float
    peak_mib: float
    stderr: str


def measure(cmd: list, cwd: str | os.PathLike | None = None, stdout: str | os.PathLike | None = None) -> Measured:
    """Run ``cmd`` (one child); its wall time, CPU time (user + system) and peak RSS from ``os.wait4``.

    Standard output goes to ``stdout`` if given (e.g. ``smtlib bleu``'s JSON), else is discarded. A
    failing command ends the benchmark with its command line and the end of its stderr.
    """
    cmd = [str(c) for c in cmd]
    t0 = time.perf_counter()
    with tempfile.TemporaryFile(mode="w+") as err, open(stdout or os.devnull, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {shlex.join(cmd)}\n{text[-3000:]}")
    return Measured(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text)
