"""Shared fixtures: where ../shared/data is, and the CLI runner.

The tests mirror the package: ``tests/unit/<package>/`` holds the tests of one package of ``smtlib``
(``tests/unit/test_<module>.py`` those of a top-level module), ``tests/integration/`` the runs across
layers (the CLI end to end, Moses round trips, the workflow and SLURM), ``tests/support/`` the fixtures
and the slow reference implementations they share."""

from __future__ import annotations

import os
import pathlib

import pytest

from tests.support.cli_runner import run_cli
from tests.support.repo import REPO

INTEGRATION = pathlib.Path(__file__).resolve().parent / "integration"


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """With ``-n`` and no ``--dist``, xdist's ``loadgroup``: the tests that share one expensive run are one
    group (``tests/integration/workflow/conftest.py``), kept on one worker while the others go on. Set
    here, not in ``addopts``, so that ``pytest`` without pytest-xdist installed still runs."""
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", None) == "no":
        config.option.dist = "loadgroup"


def pytest_collection_modifyitems(items):
    """Mark every test under ``tests/integration/`` ``integration``, so ``-m "not integration"`` selects
    the unit tests together with the other markers (``-m "not slow and not integration"``)."""
    for item in items:
        if INTEGRATION in item.path.resolve().parents:
            item.add_marker(pytest.mark.integration)


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


@pytest.fixture
def cli():
    """The :func:`run_cli` helper as a fixture."""
    return run_cli
