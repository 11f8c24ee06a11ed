"""Fail a SLURM run whose job can never start, instead of waiting for it forever.

A job that asks for more than its partition allows (CPUs or memory per node, time) is accepted by
``sbatch`` on clusters that do not enforce partition limits at submission (SLURM's default
``EnforcePartLimits=NO``) and stays PENDING with a reason such as ``PartitionConfig`` for as long as
the cluster exists. snakemake-executor-plugin-slurm only reads job *states*, so Snakemake waits with
it, silently. :class:`PendingWatch` polls ``squeue`` for the run's pending jobs (this user's, submitted
from the run's directory) and cancels each one whose reason cannot clear by itself; the plugin then
sees the job CANCELLED and fails the run, and the watch has logged why, with the job's rule and the
request that SLURM refused. Reasons that clear with time (``Resources``, ``Priority``, group limits of
an association or QOS, nodes down) are left alone: a busy queue is not an error.

The workflow starts the watch from its ``onstart`` handler when the executor is ``slurm``
(``rules/common.smk``); SMTLIB_SLURM_WATCH_SECONDS sets the poll interval (default 30, 0 disables).
"""

from __future__ import annotations

import dataclasses
import getpass
import os
import re
import subprocess
import threading
from collections.abc import Callable, Iterable

#: reasons a pending job keeps until someone changes the job or the cluster (squeue(1), JOB REASON
#: CODES): a request over its partition's limits, a per-job limit of its association or QOS, an
#: account or QOS that does not exist, constraints no node has, a dependency that failed
NEVER_REASONS = frozenset({
    "PartitionConfig", "PartitionTimeLimit", "InvalidAccount", "InvalidQOS", "BadConstraints",
    "DependencyNeverSatisfied",
})
#: per-job limits (``AssocMaxCpuPerJobLimit``, ``QOSMaxMemoryPerJob``, ...): never, unlike the
#: aggregate ``AssocGrp*``/``QOSGrp*`` limits that clear as other jobs end
NEVER_PATTERN = re.compile(r"^(Assoc|QOS)Max\w*(PerJob|PerNode)\w*$")

#: squeue's output: job id, reason, working directory, comment (the plugin's ``rule_<name>...``),
#: CPUs, minimum memory, time limit; fields separated by a character no field contains
SQUEUE_FORMAT = "%i\x1f%r\x1f%Z\x1f%k\x1f%C\x1f%m\x1f%l"


@dataclasses.dataclass(frozen=True)
class PendingJob:
    job_id: str
    reason: str
    workdir: str
    comment: str
    cpus: str
    memory: str
    time_limit: str

    @property
    def rule(self) -> str:
        """The rule or group the executor plugin named in the job's comment (``rule_NAME[_wildcards_...]``)."""
        name = self.comment.removeprefix("rule_").split("_wildcards_")[0]
        return name if self.comment.startswith("rule_") else self.comment

    def describe(self) -> str:
        return (
            f"SLURM job {self.job_id} ({self.rule}) can never start: squeue gives reason {self.reason} for "
            f"its request of {self.cpus} CPUs, {self.memory} memory, time limit {self.time_limit}. "
            "It is cancelled, so the run fails now rather than waiting forever. Lower the request "
            "(profiles/slurm: `cores`, `resources: mem_mb`, set-resources) or choose another "
            "partition (SBATCH_PARTITION), then resume with the same command."
        )


def never_starts(reason: str) -> bool:
    """Whether a pending job's squeue reason is one that does not clear with time."""
    return reason in NEVER_REASONS or bool(NEVER_PATTERN.match(reason))


def parse_squeue(text: str) -> list[PendingJob]:
    """The rows of ``squeue -h -o SQUEUE_FORMAT``; lines that do not have every field are skipped."""
    jobs = []
    for line in text.splitlines():
        fields = line.split("\x1f")
        if len(fields) == 7:
            jobs.append(PendingJob(*(f.strip() for f in fields)))
    return jobs


def doomed_jobs(jobs: Iterable[PendingJob], workdir: str) -> list[PendingJob]:
    """The pending jobs of the run in ``workdir`` (submitted by the executor plugin) that never start."""
    workdir = os.path.realpath(workdir)
    return [
        j for j in jobs
        if os.path.realpath(j.workdir) == workdir and j.comment.startswith("rule_") and never_starts(j.reason)
    ]


def squeue_pending(user: str) -> str:
    """This user's pending jobs in SQUEUE_FORMAT (empty when squeue fails: the next poll tries again)."""
    try:
        r = subprocess.run(["squeue", "-h", "-u", user, "-t", "PENDING", "-o", SQUEUE_FORMAT],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return r.stdout if r.returncode == 0 else ""


def scancel(job_id: str) -> None:
    try:
        subprocess.run(["scancel", job_id], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        pass


class PendingWatch(threading.Thread):
    """A daemon thread that cancels the run's never-starting jobs every ``interval`` seconds."""

    def __init__(self, workdir: str, interval: float, report: Callable[[str], None],
                 query: Callable[[], str] | None = None, cancel: Callable[[str], None] = scancel):
        super().__init__(name="smtlib-slurm-watch", daemon=True)
        user = getpass.getuser()
        self.workdir, self.interval, self.report = workdir, interval, report
        self.query = query or (lambda: squeue_pending(user))
        self.cancel = cancel
        self.cancelled: set[str] = set()
        self.stopped = threading.Event()

    def poll(self) -> list[PendingJob]:
        """One look at the queue: the jobs cancelled now."""
        found = [j for j in doomed_jobs(parse_squeue(self.query()), self.workdir) if j.job_id not in self.cancelled]
        for job in found:
            self.report(job.describe())
            self.cancel(job.job_id)
            self.cancelled.add(job.job_id)
        return found

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            self.poll()


def start_watch(workdir: str, report: Callable[[str], None], environ=os.environ) -> PendingWatch | None:
    """Start the watch (SMTLIB_SLURM_WATCH_SECONDS: poll interval, default 30; 0 disables it)."""
    interval = float(environ.get("SMTLIB_SLURM_WATCH_SECONDS", "30"))
    if interval <= 0:
        return None
    watch = PendingWatch(workdir, interval, report)
    watch.start()
    return watch
