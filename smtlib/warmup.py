"""Compile smtlib's numba kernels once, before a workflow's jobs need them.

numba compiles a kernel on its first call and keeps the machine code in its cache (``cache=True``),
so only the first run of an installation pays. Without a warm-up, that first run compiles in every
job at once: the tiny config's first decodes, tuners and BLEU jobs all start together, each spends a
minute or more compiling the same kernels (one decode: 77 s cold, 2 s warm), and Snakemake prints
nothing meanwhile. :func:`warm_up` runs the workflow's commands once, in one process, on a small
synthetic corpus (training, k-best and lattice decoding with both searches, BLEU, pools, every
registered tuner and a second iteration of each kind), which compiles every kernel with the types a
real run uses and fills the cache; the jobs then load it.

A stamp records a completed warm-up for this installation's sources, numba and CPU (numba's own cache
keys), so later runs skip it in milliseconds. The workflow calls ``smtlib warmup`` from its
``onstart`` handler (never in a dry run).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pathlib
import platform
import sys
import tempfile
import time
from collections.abc import Sequence

import numpy as np

from smtlib.errors import InputError
from smtlib.io import atomic_output

PACKAGE = pathlib.Path(__file__).resolve().parent

#: the synthetic corpus: big enough that every training stage and KN smoothing of order 4 has counts
#: of each kind, small enough that the warm-up's own work is a few seconds next to the compiling
CORPUS_PAIRS = 400
DEV_SENTENCES = 12
VOCABULARY = 60
FEATURE_SETS = ("small", "medium", "big")


def source_key() -> str:
    """What numba's cache depends on: every source file's name, size and time, numba, Python, the CPU."""
    import llvmlite.binding
    import numba

    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(PACKAGE)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    digest.update(f"{numba.__version__}\0{sys.version}\0{platform.machine()}\0".encode())
    digest.update(llvmlite.binding.get_host_cpu_name().encode())
    return digest.hexdigest()[:20]


def stamp_path() -> pathlib.Path:
    """Where a finished warm-up is recorded: next to numba's cache of this installation.

    numba caches into the package's ``__pycache__`` when it can write there, else into
    ``NUMBA_CACHE_DIR`` (or a user cache directory); the stamp follows the same choice.
    """
    cache_dir = os.environ.get("NUMBA_CACHE_DIR")
    base = pathlib.Path(cache_dir) if cache_dir else PACKAGE / "__pycache__"
    if not cache_dir and not os.access(base if base.exists() else PACKAGE, os.W_OK):
        base = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "smtlib"
    return base / f"numba-warm-{source_key()}"


def synthetic_corpus(rng: np.random.Generator, pairs: int) -> tuple[list[str], list[str]]:
    """A toy language pair: Zipf-distributed words, the target a word-for-word mapping of the source
    with the first two words swapped in half of the sentences (so reordering has something to learn)."""
    ranks = np.arange(1, VOCABULARY + 1)
    probs = 1.0 / ranks / np.sum(1.0 / ranks)
    src_lines, tgt_lines = [], []
    for _ in range(pairs):
        words = rng.choice(VOCABULARY, size=int(rng.integers(3, 10)), p=probs)
        src = [f"s{w}" for w in words]
        tgt = [f"t{w}" for w in words]
        if words[0] % 2 == 0:
            tgt[0], tgt[1] = tgt[1], tgt[0]
        src_lines.append(" ".join(src))
        tgt_lines.append(" ".join(tgt))
    return src_lines, tgt_lines


class _Runner:
    """Runs ``smtlib`` sub-commands in this process, their output captured, failing loudly."""

    def __init__(self, workdir: pathlib.Path):
        self.workdir = workdir

    def __call__(self, *args: object) -> str:
        from smtlib.cli import main

        argv = [str(a) for a in args]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
        if status != 0:
            raise RuntimeError(f"warm-up step `smtlib {' '.join(argv)}` failed ({status}):\n{err.getvalue()}")
        return out.getvalue()

    def path(self, name: str) -> pathlib.Path:
        return self.workdir / name


def _train(run: _Runner, feature_sets: list[str]) -> None:
    p = run.path
    run("train", "prepare", "--src", p("train.src"), "--tgt", p("train.tgt"), "--src-lang", "fr",
        "--tgt-lang", "en", "--corpus-src", p("corpus.src"), "--corpus-tgt", p("corpus.tgt"),
        "--prepare-info", p("prepare.json"))
    run("train", "align", "--corpus-src", p("corpus.src"), "--corpus-tgt", p("corpus.tgt"),
        "--symmetrize", "grow-diag-final-and", "union", "--aligned", p("aligned.gdfa"), p("aligned.union"),
        "--forward", p("align.fwd"), "--reverse", p("align.rev"), "--align-info", p("align.json"),
        "--seed", 1, "--threads", 1)
    for index, aligned, sym, extra in ((0, "aligned.gdfa", "grow-diag-final-and",
                                        ["--reordering-table", p("reordering.0.gz"), "--sparse"]),
                                       (1, "aligned.union", "union", [])):
        run("train", "phrases", "--corpus-src", p("corpus.src"), "--corpus-tgt", p("corpus.tgt"),
            "--aligned", p(aligned), "--symmetrization", sym, "--phrase-table", p(f"phrase-table.{index}.gz"),
            "--phrases-info", p(f"phrases.{index}.json"), *extra, "--max-phrase-length", 7, "--table-limit", 20)
    for index, order in ((0, 4), (1, 2)):
        run("train", "lm", "--corpus-tgt", p("corpus.tgt"), "--order", order, "--lm", p(f"lm.{index}.arpa.gz"),
            "--lm-info", p(f"lm.{index}.json"))
    for fs in feature_sets:
        # Small: one table and one LM without reordering (as the workflow assembles it); the others: both
        parts = range(1) if fs == "small" else range(2)
        reordering = [] if fs == "small" else ["--reordering-table", p("reordering.0.gz")]
        run("train", "assemble", "--feature-set", fs, "--prepare-info", p("prepare.json"),
            "--align-info", p("align.json"), "--phrase-table", *(p(f"phrase-table.{i}.gz") for i in parts),
            "--phrases-info", *(p(f"phrases.{i}.json") for i in parts), "--lm", *(p(f"lm.{i}.arpa.gz") for i in parts),
            "--lm-info", *(p(f"lm.{i}.json") for i in parts), *reordering, "--out", p(f"{fs}/model.yaml"))
        run("data", "init-weights", "--model", p(f"{fs}/model.yaml"), "--out", p(f"{fs}/init.weights"),
            "--ones", "TranslationModel", "LM", "Distortion")


SEARCH = ("--stack-size", 20, "--distortion-limit", 6, "--table-limit", 10)
BLEU = ("--tokenize", "none", "--lowercase")


def _tune_kbest(run: _Runner, fs: str, methods: list[str], done=lambda what: None) -> None:
    """Decode (both searches), pool, every k-best tuner, and a second iteration's merge and step;
    ``done(what)`` after each part (the warm-up's progress lines)."""
    p = run.path
    dev, ref = p("dev.src"), p("dev.ref")
    run("decode", "--model", p(f"{fs}/model.yaml"), "--weights", p(f"{fs}/init.weights"), "--input", dev,
        "--output", p(f"{fs}/stack.1best"), *SEARCH, "--quiet")
    run("decode", "--model", p(f"{fs}/model.yaml"), "--weights", p(f"{fs}/init.weights"), "--input", dev,
        "--kbest", p(f"{fs}/it1.kbest.gz"), "--k", 20, "--output", p(f"{fs}/it1.1best"), *SEARCH,
        "--search", "cube", "--pop-limit", 200, "--quiet")
    done("the decoder (stack and cube searches, k-best)")
    p(f"{fs}/it1.bleu.json").write_text(run("bleu", "--refs", ref, "--hyps", p(f"{fs}/it1.1best"), *BLEU),
                                        encoding="utf-8")
    run("kbest", "slice", "--ids", p("dev.ids"), "--kbest", p(f"{fs}/it1.kbest.gz"), p(f"{fs}/slice.kbest.gz"),
        "--lines", p(f"{fs}/it1.1best"), p(f"{fs}/slice.1best"))
    run("kbest", "add", "--kbest", p(f"{fs}/it1.kbest.gz"), "--refs", ref, *BLEU, "--out", p(f"{fs}/it1.pool"))
    for method in methods:
        out = p(f"{fs}/{method}.it1.weights")
        run("tune", method, "--pool", p(f"{fs}/it1.pool"), "--refs", ref, "--init", p(f"{fs}/init.weights"),
            "--out", out, "--info", p(f"{fs}/{method}.it1.json"), "--seed", 1001, *BLEU)
        done(f"tuner {method}")
    # the second iteration: a decode from tuned weights, merged into the pool, one more step
    first = methods[0]
    run("decode", "--model", p(f"{fs}/model.yaml"), "--weights", p(f"{fs}/{first}.it1.weights"), "--input", dev,
        "--kbest", p(f"{fs}/it2.kbest.gz"), "--k", 20, "--output", p(f"{fs}/it2.1best"), *SEARCH,
        "--search", "cube", "--pop-limit", 200, "--quiet")
    run("kbest", "add", "--pool", p(f"{fs}/it1.pool"), "--kbest", p(f"{fs}/it2.kbest.gz"), "--refs", ref, *BLEU,
        "--out", p(f"{fs}/it2.pool"))
    run("tune", first, "--pool", p(f"{fs}/it2.pool"), "--refs", ref, "--init", p(f"{fs}/{first}.it1.weights"),
        "--out", p(f"{fs}/{first}.it2.weights"), "--info", p(f"{fs}/{first}.it2.json"), "--seed", 1002, *BLEU)
    run("report", "best", "--dev-bleu", p(f"{fs}/it1.bleu.json"), "--weights", p(f"{fs}/init.weights"),
        "--out-weights", p(f"{fs}/best.weights"), "--out-curve", p(f"{fs}/curve.tsv"), "--meta", f"fs={fs}")


def _tune_lattice(run: _Runner, fs: str, method: str) -> None:
    p = run.path
    weights = p(f"{fs}/init.weights")
    paths: list[object] = []
    for it in (1, 2):
        lattice = p(f"{fs}/{method}.it{it}.lattice.gz")
        run("decode", "--model", p(f"{fs}/model.yaml"), "--weights", weights, "--input", p("dev.src"),
            "--lattice", lattice, "--lattice-beam", 0, "--output", p(f"{fs}/{method}.it{it}.1best"), *SEARCH,
            "--search", "cube", "--pop-limit", 200, "--quiet")
        out = p(f"{fs}/{method}.it{it}.weights")
        run("tune", method, "--lattice", lattice, *paths, "--refs", p("dev.ref"), "--init", weights, "--out", out,
            "--paths-out", p(f"{fs}/{method}.it{it}.paths.gz"), "--info", p(f"{fs}/{method}.it{it}.json"),
            "--seed", 1000 + it, "--jobs", 1, *BLEU)
        weights, paths = out, ["--kbest", p(f"{fs}/{method}.it{it}.paths.gz")]


def _tune_online(run: _Runner, fs: str, method: str) -> None:
    p = run.path
    start, state = p(f"{fs}/init.weights"), []
    for it in (1, 2):
        shards = [p(f"{fs}/{method}.it{it}.shard{k}.json") for k in range(2)]
        for k, shard in enumerate(shards):
            run("tune", method, "--model", p(f"{fs}/model.yaml"), "--source", p("dev.src"), "--refs", p("dev.ref"),
                "--init", start, *state, "--shard", k, "--out", shard, "--seed", 1000 + it, "--set", "shards=2",
                *SEARCH, "--search", "cube", "--pop-limit", 200, *BLEU)
        run("tune", method, "--mix", *shards, *state, "--set", "shards=2", "--out", p(f"{fs}/{method}.it{it}.weights"),
            "--mixed-out", p(f"{fs}/{method}.it{it}.mixed"), "--state-out", p(f"{fs}/{method}.it{it}.state.json"),
            "--info", p(f"{fs}/{method}.it{it}.json"))
        start, state = p(f"{fs}/{method}.it{it}.mixed"), ["--state", p(f"{fs}/{method}.it{it}.state.json")]


def warm_up(workdir: pathlib.Path, log=print, feature_sets: Sequence[str] = FEATURE_SETS,
            methods: Sequence[str] | None = None) -> None:
    """Run every compiled path of the workflow once in ``workdir`` (see the module docstring): each
    of ``feature_sets`` trained, decoded and tuned by each of ``methods`` (default: every registered
    tuner) that takes its features."""
    from smtlib.tuners.registry import get_tuner_class, input_kind, list_tuners

    rng = np.random.default_rng(1)
    src, tgt = synthetic_corpus(rng, CORPUS_PAIRS)
    run = _Runner(workdir)
    for name, lines in (("train.src", src), ("train.tgt", tgt), ("dev.src", src[:DEV_SENTENCES]),
                        ("dev.ref", tgt[:DEV_SENTENCES]),
                        ("dev.ids", [str(i) for i in range(0, DEV_SENTENCES, 2)])):
        (workdir / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    for fs in feature_sets:
        (workdir / fs).mkdir()
    started = time.perf_counter()
    log("  compiling the training stages (alignment, phrase extraction, language models) ...")
    _train(run, feature_sets)
    log(f"  training stages compiled ({time.perf_counter() - started:.0f} s)")
    for fs in feature_sets:
        # the Big system has sparse features, which MERT's line searches do not take (not_applicable)
        usable = [m for m in methods or list_tuners() if fs != "big" or get_tuner_class(m).supports_sparse]
        kbest = [m for m in usable if input_kind(m) == "kbest"]
        log(f"  {fs}: compiling the decoder, then {len(usable)} tuners ...")

        def done(what: str, fs: str = fs) -> None:
            log(f"  {fs}: {what} compiled ({time.perf_counter() - started:.0f} s)")

        if kbest:
            _tune_kbest(run, fs, kbest, done)
        for method in usable:
            if input_kind(method) == "lattice":
                _tune_lattice(run, fs, method)
                done(f"tuner {method} (lattices)")
            elif input_kind(method) == "online":
                _tune_online(run, fs, method)
                done(f"tuner {method} (online)")
        log(f"  decoding and tuning of the {fs} system compiled ({time.perf_counter() - started:.0f} s)")


def ensure_warm(force: bool = False, log=print) -> bool:
    """Warm numba's cache unless this installation's stamp says it is; True if a warm-up ran."""
    stamp = stamp_path()
    if stamp.exists() and not force:
        log("smtlib: numba kernels compiled for this installation already (warm-up skipped)")
        return False
    log("smtlib: compiling the numba kernels once for this installation and machine "
        "(a few minutes; later runs skip this)")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="smtlib-warmup-") as tmp:
        try:
            warm_up(pathlib.Path(tmp), log=log)
        except RuntimeError as exc:
            raise InputError(str(exc)) from exc
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(stamp) as fh:
            fh.write(f"warmed in {time.perf_counter() - started:.1f} s\n")
    except OSError as exc:  # a read-only cache: the jobs still compile, as without a warm-up
        log(f"smtlib: warm-up done, but its stamp could not be written ({exc})")
    log(f"smtlib: numba kernels compiled in {time.perf_counter() - started:.0f} s")
    return True
