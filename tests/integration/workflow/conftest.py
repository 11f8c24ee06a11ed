"""The tiny config's Table 4 run, made once per test session and shared by the tests that read it.

The end-to-end tests of Table 4, Tan et al.'s findings and Hopkins & May's stability experiment all
need the same tiny fr-en system, its first decode and the table's kb-mert and kb-mira runs; run apart,
each built and tuned them again. One `snakemake` call now makes every target they check, and under
pytest-xdist the first worker to ask makes it while the others wait on a lock. The tests that use it
form one xdist group (``-n`` means ``--dist loadgroup`` here: ``tests/conftest.py``), so one worker runs them all and no other
worker sits idle on the lock while the run is made. The tests only read the directory; a test that
changes a run (restore, a metric sweep) works on its own copy.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.workflow_runner import REPO, snakemake

TINY = REPO / "config/tiny.yaml"
# the targets of test_workflow's Table 4 test, test_cmira_findings' and test_stability's, in one call
TARGETS = ("results/table4.html", "results/figures/curves_fr-en.png", "results/table4_cmira.md", "stability")


@dataclass(frozen=True)
class TinyRun:
    """The shared run's directory and how its `snakemake` call ended (the outputs' tails on failure)."""

    work: Path
    returncode: int
    output: str

    def check(self) -> Path:
        assert self.returncode == 0, self.output
        return self.work

    def copy_to(self, dest: Path) -> Path:
        """A copy that a test may change (snakemake's metadata and the files' times with it)."""
        shutil.copytree(self.check(), dest, symlinks=True)
        return dest


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the group from the marks
def pytest_collection_modifyitems(items):
    for item in items:
        if "tiny_table4_run" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("tiny_table4_run"))


@pytest.fixture(scope="session")
def tiny_table4_run(tmp_path_factory, data_dir) -> TinyRun:
    base = tmp_path_factory.getbasetemp()
    # under pytest-xdist each worker's base is popen-gwN/ in the directory they all share
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    work, status = root / "tiny-table4-run", root / "tiny-table4-run.json"
    with open(root / "tiny-table4-run.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not status.exists():
            r = snakemake(work, "--cores", "2", *TARGETS, configfile=TINY, data_dir=data_dir, timeout=3600)
            status.write_text(json.dumps({"returncode": r.returncode, "output": r.stdout[-4000:] + r.stderr[-4000:]}))
    result = json.loads(status.read_text())
    return TinyRun(work, result["returncode"], result["output"])
