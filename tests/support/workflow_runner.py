"""Running the workflow's `snakemake` command in a temporary directory and reading its dry runs, for
the workflow tests (``tests/integration/workflow/``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import yaml
from tests.support.repo import REPO

SNAKEFILE = REPO / "Snakefile"
BIN = os.path.dirname(sys.executable)


def snakemake(workdir, *args, data_dir=None, timeout=600, configfile=None, popen=False, env=None):
    """Run `snakemake -s REPO/Snakefile -d WORKDIR ARGS` (with data_dir when given; ``env`` adds to the
    environment, e.g. SLURM_CONF)."""
    cmd = [os.path.join(BIN, "snakemake"), "-s", str(SNAKEFILE), "-d", str(workdir)]
    if configfile is not None:
        cmd += ["--configfile", str(configfile)]
    cmd += list(args)
    if data_dir is not None:
        cmd += ["--config", f"data_dir={data_dir}"]
    # no numba warm-up in the tests' many runs (tests/integration/workflow/test_warmup.py covers it): the
    # kernels the suite needs compile as it goes, and a full warm-up would land inside one test's timeout
    env = {**os.environ, "PYTHONHASHSEED": "0", "PATH": BIN + os.pathsep + os.environ.get("PATH", ""),
           "SMTLIB_WARMUP": os.environ.get("SMTLIB_WARMUP", "0"), **(env or {})}
    if popen:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                start_new_session=True)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def job_counts(output: str) -> dict[str, int]:
    """The `Job stats` table of a dry run: rule -> count."""
    counts = {}
    block = output.split("Job stats:", 1)[1]
    for line in block.splitlines()[3:]:
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if not m:
            break
        counts[m.group(1)] = int(m.group(2))
    return counts


def jobs_of(output: str, rule: str) -> list[dict[str, str]]:
    """The jobs of ``rule`` in a dry run's listing, each as {field: value} (input, output, ...)."""
    jobs = []
    for block in re.split(r"\n(?=rule \w+:)", output):
        if not block.startswith(f"rule {rule}:"):
            continue
        fields = {}
        for line in block.splitlines()[1:]:
            m = re.match(r"^\s{4}(\w+): (.*)$", line)
            if m:
                fields[m.group(1)] = m.group(2)
        jobs.append(fields)
    return jobs


def write_config(path, data):
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path
