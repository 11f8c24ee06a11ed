"""smtlib.slurm_watch: a SLURM job that can never start is cancelled with its reason (issue 27).

The live case (a real single-node cluster, a job asking for more CPUs than the node has) is in
tests/integration/workflow/test_slurm.py; here the decisions, on squeue's output as SLURM 22.05 prints it.
"""

from __future__ import annotations

import threading

import pytest

from smtlib.slurm_watch import PendingWatch, doomed_jobs, never_starts, parse_squeue, start_watch

WORK = "/scratch/run1"


def row(job_id, reason, workdir=WORK, comment="rule_decode_dev_wildcards_pair=fr-en", cpus="16", mem="32000M",
        limit="5:00"):
    return "\x1f".join([job_id, reason, workdir, comment, cpus, mem, limit])


@pytest.mark.parametrize("reason", ["PartitionConfig", "PartitionTimeLimit", "InvalidAccount", "InvalidQOS",
                                    "BadConstraints", "DependencyNeverSatisfied", "AssocMaxCpuPerJobLimit",
                                    "QOSMaxMemoryPerJob", "QOSMaxCpuPerNode"])
def test_reasons_that_never_clear(reason):
    assert never_starts(reason)


@pytest.mark.parametrize("reason", ["Resources", "Priority", "None", "WaitingForScheduling", "BeginTime",
                                    "AssocGrpCpuLimit", "QOSGrpMemLimit", "ReqNodeNotAvail", "PartitionDown",
                                    "PartitionNodeLimit", "JobHeldUser", "QOSJobLimit", "Dependency"])
def test_reasons_that_clear_with_time_are_left_alone(reason):
    assert not never_starts(reason)


def test_only_this_runs_plugin_jobs_are_doomed():
    text = "\n".join([
        row("11", "PartitionConfig"),
        row("12", "Resources"),
        row("13", "PartitionConfig", workdir="/scratch/other"),  # another run of the same user
        row("14", "PartitionConfig", comment="(null)"),  # a job the user submitted by hand
        row("15", "QOSMaxCpuPerJobLimit", comment="rule_group_loop"),
        "garbage line",
    ])
    jobs = parse_squeue(text)
    assert [j.job_id for j in jobs] == ["11", "12", "13", "14", "15"]
    assert [j.job_id for j in doomed_jobs(jobs, WORK + "/")] == ["11", "15"]
    assert jobs[0].rule == "decode_dev" and jobs[4].rule == "group_loop"


def test_the_watch_cancels_each_doomed_job_once_and_says_why():
    queue = [row("21", "PartitionConfig"), row("22", "Priority")]
    reports, cancelled = [], []
    watch = PendingWatch(WORK, 1.0, reports.append, query=lambda: "\n".join(queue), cancel=cancelled.append)
    assert [j.job_id for j in watch.poll()] == ["21"]
    assert watch.poll() == []  # squeue may still list it until the cancel lands: not twice
    assert cancelled == ["21"] and len(reports) == 1
    assert "SLURM job 21 (decode_dev) can never start" in reports[0]
    assert "PartitionConfig" in reports[0] and "16 CPUs" in reports[0] and "32000M" in reports[0]
    assert "profiles/slurm" in reports[0]


def test_an_unreadable_queue_is_retried_not_fatal():
    watch = PendingWatch(WORK, 1.0, print, query=lambda: "", cancel=lambda _: pytest.fail("nothing to cancel"))
    assert watch.poll() == []


def test_start_watch_polls_in_the_background_and_can_be_turned_off():
    assert start_watch(WORK, print, environ={"SMTLIB_SLURM_WATCH_SECONDS": "0"}) is None
    seen = threading.Event()
    watch = PendingWatch(WORK, 0.01, lambda m: seen.set(), query=lambda: row("31", "PartitionConfig"),
                         cancel=lambda _: None)
    watch.start()
    try:
        assert seen.wait(5)
    finally:
        watch.stopped.set()
        watch.join(5)
    assert watch.daemon and not watch.is_alive()
