"""The same bytes on every CPU: a whole small pipeline against digests committed in the repository.

The pipeline (``tests.support.pipeline_hashes``: the warm-up's synthetic corpus trained into Small,
Medium and Big systems, decoded, and tuned two iterations by every tuner) writes 268 files; their
digests in ``tests/data/pipeline_hashes.json`` were made on another machine. A CPU, compiler or
library version whose arithmetic differs fails the first test here, naming the files that differ
(the first in pipeline order is where to look). The second runs the pipeline under the code paths
another CPU would take, on this one: numba's kernels compiled for a generic x86-64, NumPy without its
AVX2 and AVX-512 paths, eflomal compiled for this CPU's full instruction set.
"""

from __future__ import annotations

import json
import os
import pathlib
import platform

import pytest

from smtlib._reproducible import numeric_environment
from tests.support import pipeline_hashes

#: the pinning's variables and numba's CPU choice come from the pipeline's own import of smtlib
PINNED = ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE", "MKL_CBWR", "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES",
          "SMTLIB_EFLOMAL")

pytestmark = [
    pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                       reason="the committed digests are x86-64's (another architecture's arithmetic differs)"),
    pytest.mark.skipif("OPENBLAS_CORETYPE" not in numeric_environment(),
                       reason="this CPU lacks AVX2 or FMA, so BLAS cannot be pinned to the digests' kernels"),
]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PINNED}
    env.update(extra)
    return env


def _check(work: pathlib.Path, env: dict[str, str], ignore: tuple[str, ...] = ()) -> None:
    expected = json.loads(pipeline_hashes.HASHES.read_text())
    pipeline_hashes.run_pipeline(work, env=env)
    got = pipeline_hashes.digests(work)
    differ = [name for name in pipeline_hashes.compare(expected, got) if name not in ignore]
    assert not differ, (
        f"{len(differ)} of {len(got)} pipeline outputs differ from tests/data/pipeline_hashes.json, first "
        f"{differ[:8]}: either this machine computes other bits (a CPU-dependent code path: see "
        "smtlib._reproducible) or a change meant to change outputs did not regenerate the digests "
        "(python -m tests.support.pipeline_hashes --update)")


@pytest.mark.slow
def test_pipeline_outputs_match_the_committed_digests(tmp_path):
    pytest.importorskip("eflomal")
    _check(tmp_path, _env())


@pytest.mark.slow
def test_pipeline_outputs_do_not_depend_on_the_cpus_code_paths(tmp_path):
    pytest.importorskip("eflomal")
    from smtlib.system import eflomal_build

    # eflomal compiled for every vector unit of this CPU: the portable flags make them irrelevant
    native = tmp_path / "eflomal-native"
    try:
        source = eflomal_build.extract_source(eflomal_build.fetch_sdist(eflomal_build.installed_version()), tmp_path)
        eflomal_build.compile_eflomal(source, native, eflomal_build.PORTABLE_CFLAGS + ("-march=native",))
    except eflomal_build.AlignerBuildError as exc:
        pytest.skip(f"cannot build eflomal here: {exc}")
    env = _env(NUMBA_CPU_NAME="generic", NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"),
               NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX2 FMA3 AVX512F AVX512_SKX AVX512_ICL AVX512_SPR",
               SMTLIB_EFLOMAL=str(native))
    work = tmp_path / "pipeline"
    work.mkdir()
    # align.json says which eflomal ran (here one named by SMTLIB_EFLOMAL); its links are compared
    _check(work, env, ignore=("align.json",))
