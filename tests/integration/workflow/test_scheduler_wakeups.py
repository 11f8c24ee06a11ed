"""Snakemake's own threads while jobs wait for cores, with and without the Snakefile's patch
(smtlib.workflow.scheduler_wakeups): without it they grow with the finished jobs, with it they stay few."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

import pytest

JOBS = 30

TOY = """
rule all:
    input: expand("out/{{i}}.txt", i=range({jobs}))

rule job:
    output: "out/{{i}}.txt"
    shell: "sleep 0.4; touch {{output}}"
"""

PATCH = "from smtlib.workflow.scheduler_wakeups import keep_one_pending_wakeup\nkeep_one_pending_wakeup()\n"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not pathlib.Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")]


def _most_threads(workdir: pathlib.Path, snakefile: str) -> int:
    """Run the toy workflow at --cores 1 (so that jobs wait) and poll Snakemake's thread count."""
    (workdir / "Snakefile").write_text(snakefile)
    proc = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "1", "--quiet", "--workflow-profile",
                             "none"], cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    most = 0
    while proc.poll() is None:
        try:
            most = max(most, len(os.listdir(f"/proc/{proc.pid}/task")))
        except FileNotFoundError:
            break
        time.sleep(0.1)
    assert proc.wait() == 0, proc.stderr.read().decode()
    assert len(list((workdir / "out").iterdir())) == JOBS
    return most


def test_snakemakes_threads_stay_few_with_the_patch(tmp_path):
    plain, patched = tmp_path / "plain", tmp_path / "patched"
    plain.mkdir()
    patched.mkdir()
    toy = TOY.format(jobs=JOBS)
    unpatched_most = _most_threads(plain, toy)
    patched_most = _most_threads(patched, PATCH + toy)
    # unpatched, a timer per finished job accumulates: the check that the patch is still needed and
    # that this test sees the growth it prevents
    assert unpatched_most >= JOBS // 2, unpatched_most
    assert patched_most <= 10, patched_most
