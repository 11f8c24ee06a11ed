"""Where the workflow's files live: one function per kind of file, as a Snakemake pattern (with
``{wildcards}``) or for given values. Everything is under ``results/`` (outputs), ``logs/`` (the jobs'
logs) and ``results/benchmarks/`` (the jobs' ``benchmark:`` files)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import PurePosixPath

from smtlib.data.corpora import REPLAY_ITERATIONS

#: the pattern of a tuning run's directory (the rules of rules/tune*.smk and rules/evaluate.smk)
RUN = "results/tune/{pair}/{fs}/{method}/{setting}/s{sample}"
#: the first decode of a (pair, feature set), shared by all its runs, and each sub-sample's share of it
FIRST = "results/tune/{pair}/{fs}/first"
#: where the replay experiment's data (Moses's recorded n-best lists) is copied
REPLAY_DATA = "results/replay/data"
#: the replay data's files, as `smtlib data copy` names them under replay/
REPLAY_NAMES = [f"data/run{i}.NBEST.out" for i in range(1, REPLAY_ITERATIONS + 1)] + [
    "reference.0",
    "reference.1",
    "reference.2",
    "moses.ini",
    "truth/results.dat",
]


def data_path(pair: str, name: str | None = None) -> str:
    """A corpus file of a pair (`smtlib data fetch`), or their directory."""
    return f"results/data/{pair}" if name is None else f"results/data/{pair}/{name}"


def work_path(pair: str, name: str) -> str:
    """A stage file of a pair's system (`smtlib train STAGE`, under the names `smtlib train build` uses)."""
    return f"results/systems/{pair}/work/{name}"


def model_dir(pair: str, feature_set: str, name: str | None = None) -> str:
    """A system's model directory (`smtlib train assemble --out`), or the file ``name`` in it."""
    directory = f"results/systems/{pair}/{feature_set}"
    return directory if name is None else f"{directory}/{name}"


@dataclasses.dataclass(frozen=True)
class Tree:
    """A directory pattern under ``results/`` with its files, its jobs' logs (under ``logs/``) and
    benchmark files (under ``results/benchmarks/``), each as a pattern."""

    pattern: str

    def path(self, name: str) -> str:
        return f"{self.pattern}/{name}"

    def log(self, name: str) -> str:
        return f"logs/{self.pattern.removeprefix('results/')}/{name}"

    def benchmark(self, name: str) -> str:
        return f"results/benchmarks/{self.pattern.removeprefix('results/')}/{name}"


# a file of a run directory (e.g. ``run_path("it{it}/weights")``), its log and benchmark file
run_path, run_log, run_benchmark = Tree(RUN).path, Tree(RUN).log, Tree(RUN).benchmark
# a file of the shared first decode (e.g. ``first_path("s{sample}/dev.pool")``), its log and benchmark file
first_path, first_log, first_benchmark = Tree(FIRST).path, Tree(FIRST).log, Tree(FIRST).benchmark


def initial_weights(pair: str, feature_set: str) -> str:
    """Where every tuning run of a system starts (Cherry & Foster 2012, §4.2: `smtlib data init-weights`).

    Not the system's own weights, ``default.weights`` (smtlib.system.modeldir.DEFAULT_WEIGHTS). The
    file keeps its name ``init.weights``: every decode of iteration 1 reads it, and a renamed input
    would make Snakemake redo each finished run ("set of input files has changed").
    """
    return model_dir(pair, feature_set, "init.weights")


def run_dir(pair: str, feature_set: str, method: str, setting: str, sample: int | str) -> str:
    """One tuning run: (pair, feature set, method, hyper-parameter setting, dev sub-sample)."""
    return RUN.format(pair=pair, fs=feature_set, method=method, setting=setting, sample=sample)


def record_path(directory: str, feature_set: str, method: str, setting: str, sample: int | str) -> str:
    """A run's published record (``smtlib report publish``) in a directory of them (its ``runs/``)."""
    return f"{directory}/{feature_set}/{method}/{setting}/s{sample}.json"


def record_output_path(record: str, testset: str) -> str:
    """A published run's output on a test set, beside its record ``.../s<N>.json``."""
    return f"{record.removesuffix('.json')}.test.{testset}.1best.gz"


def initial_output_path(records: str, feature_set: str, testset: str) -> str:
    """The initial weights' published output on a test set: ``initial/<fs>/`` beside ``runs/``."""
    return f"{os.path.dirname(os.path.normpath(records))}/initial/{feature_set}/test.{testset}.1best.gz"


def first_dir(pair: str, feature_set: str, sample: int | str) -> str:
    """A dev sub-sample's share of the shared first decode of (pair, feature set)."""
    return f"{FIRST.format(pair=pair, fs=feature_set)}/s{sample}"


def replay_file(name: str) -> str:
    """Where the replay data file ``name`` (e.g. ``data/run3.NBEST.out``) is copied."""
    return os.path.join(REPLAY_DATA, "_".join(PurePosixPath(name).parts) + ".gz")
