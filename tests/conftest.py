"""Shared fixtures: where ../shared/data is, and small helpers for running the CLI."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


def shared_data_dir() -> pathlib.Path | None:
    """``$SMTLIB_SHARED_DATA`` or ``../shared/data`` beside the repository, if it exists."""
    env = os.environ.get("SMTLIB_SHARED_DATA")
    path = pathlib.Path(env) if env else REPO.parent / "shared" / "data"
    return path if path.is_dir() else None


@pytest.fixture(scope="session")
def shared_data() -> pathlib.Path:
    """The shared data directory; tests that use it are skipped when it is absent."""
    path = shared_data_dir()
    if path is None:
        pytest.skip("../shared/data is not available")
    return path


@pytest.fixture(scope="session")
def data_dir(shared_data: pathlib.Path) -> pathlib.Path:
    """:func:`shared_data` under the name the workflow tests give ``snakemake --config data_dir=``."""
    return shared_data


def run_cli(*args: str, input: str | None = None, cwd: str | os.PathLike | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m smtlib ARGS`` and return the completed process (text mode)."""
    return subprocess.run(
        [sys.executable, "-m", "smtlib", *map(str, args)],
        input=input,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )


@pytest.fixture
def cli():
    """The :func:`run_cli` helper as a fixture."""
    return run_cli


@pytest.fixture(scope="module", params=["small", "medium", "big"])
def brute_force_toy(request, tmp_path_factory) -> pathlib.Path:
    """A toy model directory of each feature set, small enough for the brute-force search of
    ``tests/decoder_reference.py`` (the stack and cube-pruning tests); one per test module."""
    from tests.decoder_toy import write_toy_model

    d = tmp_path_factory.mktemp(f"toy-{request.param}")
    write_toy_model(d, request.param, seed=7, n_words=10, n_multi=25)
    return d
