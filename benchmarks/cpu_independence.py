"""Which stages of a system's build and first decode change their bytes with the CPU's code paths.

A machine cannot run another CPU, but it can run the code another CPU would run: each *variant*
below changes one of the places where compiled code is chosen for the host CPU, and every stage of
the workflow (``smtlib train prepare``, ``align``, ``phrases``, ``lm``, ``assemble``, the initial
weights and the first decode of the dev set) is rerun under it **in isolation**, on the inputs the
base build gave that stage, so that a difference is that stage's own and not one it inherited.

Variants:

``eflomal-pip``, ``eflomal-znver3-Ofast``
    the aligner as ``pip install eflomal`` builds it (``-Ofast -march=native``) on this CPU, and the
    same flags for an AMD Zen 3 (``-march=znver3``): what two machines of the kinds the published
    runs used would each run (the alignment stage only).
``eflomal-portable-avx2``, ``eflomal-portable-native``
    the portable build's flags (:data:`smtlib.system.eflomal_build.PORTABLE_CFLAGS`) with
    ``-march=haswell`` and ``-march=native`` added: the vector ISA no longer changes the links if
    these agree with the base (the portable build itself, ``-march`` left at the baseline).
``openblas-haswell``, ``openblas-sandybridge``
    ``OPENBLAS_CORETYPE``: NumPy's and SciPy's BLAS kernels for another CPU (every ``@`` on floats).
``numpy-no-avx512``
    ``NPY_DISABLE_CPU_FEATURES``: NumPy's universal functions without their AVX-512 paths (NumPy has
    AVX-512-only ``exp``/``log`` for float64 and SVML-based ``log10``, ``expm1``... on AVX-512 CPUs;
    an AMD Zen 2/3 runs the libm ones).
``numba-generic``, ``numba-haswell``
    ``NUMBA_CPU_NAME`` (and a cache of its own): numba's kernels compiled for a generic x86-64 or
    for Haswell (AVX2, FMA) instead of this CPU.

Every output file of a stage is compared with the base's by the sha256 of its content (gzip files
decompressed: a gzip header's time is not content). The table says, per stage and variant, ``=``
(all outputs identical) or which outputs differ.

    python benchmarks/cpu_independence.py --source /path/to/frozen/checkout --work /tmp/study \\
        --pairs ja-en fr-en --data ../shared/data --out benchmarks/results/cpu_independence.md

``--source`` is put first on ``PYTHONPATH`` of every job (a checkout at a fixed commit: the study
takes tens of minutes, and an editable install would pick up edits made meanwhile).
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import io
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time

STAGES = ["train_prepare", "train_align", "train_phrases0", "train_phrases1", "train_lm", "train_assemble",
          "init_weights", "decode_first"]
AVX512 = "AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"


def eflomal_build(name: str, flags: list[str], work: pathlib.Path) -> pathlib.Path:
    """eflomal compiled with ``flags`` from the pinned source (smtlib.system.eflomal_build)."""
    from smtlib.system.eflomal_build import fetch_sdist, installed_version

    out = work / "eflomal" / name
    if (out / "eflomal").is_file():
        return out / "eflomal"
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(fetch_sdist(installed_version())), mode="r:gz") as archive:
        for member in archive.getmembers():
            if member.isfile() and "/src/" in member.name and member.name.endswith((".c", ".h")):
                (out / pathlib.Path(member.name).name).write_bytes(archive.extractfile(member).read())
    subprocess.run(["gcc", *flags, "-o", str(out / "eflomal"), str(out / "eflomal.c"), "-lm"], check=True)
    return out / "eflomal"


def variants(work: pathlib.Path) -> dict[str, tuple[dict[str, str], list[str]]]:
    """name -> (environment, stages it is run on)."""
    import eflomal

    from smtlib.system.eflomal_build import PORTABLE_CFLAGS

    pip_binary = pathlib.Path(eflomal.__file__).parent / "bin" / "eflomal"
    ofast = ["-Ofast", "-Wall", "--std=gnu99", "-Wno-unused-function", "-fopenmp"]
    portable = list(PORTABLE_CFLAGS)
    align = ["train_align"]
    return {
        "eflomal-pip": ({"SMTLIB_EFLOMAL": str(pip_binary)}, align),
        "eflomal-znver3-Ofast": ({"SMTLIB_EFLOMAL": str(eflomal_build("znver3-Ofast", ofast + ["-march=znver3"], work))}, align),
        "eflomal-portable-avx2": ({"SMTLIB_EFLOMAL": str(eflomal_build("portable-avx2", portable + ["-march=haswell"], work))}, align),
        "eflomal-portable-native": ({"SMTLIB_EFLOMAL": str(eflomal_build("portable-native", portable + ["-march=native"], work))}, align),
        "openblas-haswell": ({"OPENBLAS_CORETYPE": "Haswell"}, STAGES),
        "openblas-sandybridge": ({"OPENBLAS_CORETYPE": "Sandybridge"}, STAGES),
        "numpy-no-avx512": ({"NPY_DISABLE_CPU_FEATURES": AVX512}, STAGES),
        "numba-generic": ({"NUMBA_CPU_NAME": "generic", "NUMBA_CACHE_DIR": str(work / "numba-generic")}, STAGES),
        "numba-haswell": ({"NUMBA_CPU_NAME": "haswell", "NUMBA_CACHE_DIR": str(work / "numba-haswell")}, STAGES),
    }


def content_digest(path: pathlib.Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return hashlib.sha256(data).hexdigest()


def snakemake(args: list[str], workdir: pathlib.Path, env: dict[str, str], log: pathlib.Path) -> None:
    command = [sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "-d", str(workdir), *args]
    with open(log, "a") as out:
        out.write("$ " + " ".join(command) + "\n")
        out.flush()
        done = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise SystemExit(f"snakemake failed in {workdir} (see {log})")


def stage_outputs(workdir: pathlib.Path, env: dict[str, str], targets: list[str]) -> dict[str, list[str]]:
    """rule -> its output files, from Snakemake's summary of the base build."""
    command = [sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "-d", str(workdir), "--detailed-summary",
               "--config", f"data_dir={DATA}", "--", *targets]
    text = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    rules: dict[str, list[str]] = {}
    lines = text.splitlines()
    header = lines[0].split("\t")
    for line in lines[1:]:
        row = dict(zip(header, line.split("\t")))
        if row.get("rule") in STAGES and pathlib.Path(workdir, row["output_file"]).is_file():
            rules.setdefault(row["rule"], []).append(row["output_file"])
    return rules


def main() -> int:
    global SNAKEFILE, DATA
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True, type=pathlib.Path, help="a checkout at a fixed commit")
    parser.add_argument("--work", required=True, type=pathlib.Path)
    parser.add_argument("--data", required=True, type=pathlib.Path)
    parser.add_argument("--pairs", nargs="+", default=["ja-en", "fr-en"])
    parser.add_argument("--feature-set", default="small")
    parser.add_argument("--variants", nargs="*", help="only these (default: all)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--out", type=pathlib.Path)
    args = parser.parse_args()
    SNAKEFILE = args.source.resolve() / "Snakefile"
    DATA = args.data.resolve()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(args.source.resolve()))
    env = {**os.environ, "PYTHONPATH": str(args.source.resolve()) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    targets = [f"results/tune/{pair}/{args.feature_set}/first/dev.1best" for pair in args.pairs]
    config = ["--config", f"data_dir={DATA}"]
    base = work / "base"
    log = work / "study.log"
    started = time.time()
    snakemake(["--cores", str(args.cores), *config, "--", *targets], base, env, log)
    outputs = stage_outputs(base, env, targets)
    digests = {f: content_digest(base / f) for files in outputs.values() for f in files}
    table: dict[tuple[str, str], str] = {}
    chosen = variants(work)
    for name, (extra, stages) in chosen.items():
        if args.variants and name not in args.variants:
            continue
        for rule in stages:
            if rule not in outputs:
                continue
            run = work / name / rule
            if run.exists():
                shutil.rmtree(run)
            shutil.copytree(base / "results", run / "results", copy_function=os.link)
            snakemake(["--cores", str(args.cores), "--forcerun", rule, "--allowed-rules", rule,
                       "--rerun-triggers", "mtime", *config, "--", *outputs[rule]], run, {**env, **extra}, log)
            differ = [f for f in outputs[rule] if content_digest(run / f) != digests[f]]
            table[(name, rule)] = ", ".join(differ) if differ else "="
            print(f"{name:26s} {rule:16s} {table[(name, rule)]}", flush=True)
            shutil.rmtree(run)
    lines = [f"# Stage outputs under another CPU's code paths ({', '.join(args.pairs)}, {args.feature_set})", "",
             f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}"
             f" ({_cpu_name()}), commit of `--source`: `{_commit(args.source)}`, {time.time() - started:.0f} s.", "",
             "`=`: every output of the stage has the base's content; otherwise the outputs that differ.", "",
             "| variant | " + " | ".join(STAGES) + " |", "|---|" + "---|" * len(STAGES)]
    for name, (_extra, stages) in chosen.items():
        if args.variants and name not in args.variants:
            continue
        cells = [_short(table.get((name, rule), "")) for rule in STAGES]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


def _short(cell: str) -> str:
    return re.sub(r"results/(systems|tune)/", "", cell) if cell else "–"


def _cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def _commit(source: pathlib.Path) -> str:
    done = subprocess.run(["git", "-C", str(source), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "?"


SNAKEFILE = pathlib.Path()
DATA = pathlib.Path()

if __name__ == "__main__":
    sys.exit(main())
