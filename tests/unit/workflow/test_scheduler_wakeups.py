"""Snakemake's scheduler keeps one pending timed wake-up at a time (smtlib.workflow.scheduler_wakeups)."""

from __future__ import annotations

import threading
import time

from smtlib.workflow.scheduler_wakeups import _one_pending, keep_one_pending_wakeup


class _Scheduler:
    """What the patched method touches of a ``JobScheduler``: the semaphore its loop waits on."""

    def __init__(self):
        self._open_jobs = threading.Semaphore(0)


def _wakeups(scheduler, wait_s):
    """How many times the loop's semaphore is released within ``wait_s`` seconds."""
    count, deadline = 0, time.monotonic() + wait_s
    while scheduler._open_jobs.acquire(timeout=max(0.0, deadline - time.monotonic())):
        count += 1
    return count


def test_many_requests_while_one_is_pending_wake_the_loop_once():
    scheduler = _Scheduler()
    for _ in range(50):
        _one_pending(scheduler, 0.05)
    assert _wakeups(scheduler, 0.5) == 1


def test_a_request_after_the_wakeup_is_served_again():
    scheduler = _Scheduler()
    _one_pending(scheduler, 0.02)
    assert _wakeups(scheduler, 0.3) == 1
    _one_pending(scheduler, 0.02)
    _one_pending(scheduler, 0.02)
    assert _wakeups(scheduler, 0.3) == 1


def test_the_timer_does_not_keep_the_process_alive():
    scheduler = _Scheduler()
    before = set(threading.enumerate())
    _one_pending(scheduler, 60)
    (timer,) = set(threading.enumerate()) - before
    assert timer.daemon
    timer.cancel()


def test_the_installed_snakemake_is_patched():
    from snakemake.scheduling.job_scheduler import JobScheduler

    assert keep_one_pending_wakeup()
    assert JobScheduler._schedule_reevalutation is _one_pending
    assert keep_one_pending_wakeup()  # a second call leaves it as it is
    assert JobScheduler._schedule_reevalutation is _one_pending
