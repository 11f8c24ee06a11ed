"""Snakemake's job scheduler with its timed wake-ups kept to one at a time (applied by the Snakefile).

Snakemake 9 (read in 9.27.1, the newest release) limits job submissions per timespan
(``--max-jobs-per-timespan``, on by default at 100/1s). After every pass of its scheduling loop that
leaves ready jobs waiting, it starts a ``threading.Timer`` that wakes the loop one timespan later
(``JobScheduler._schedule_reevalutation``). A job that finishes wakes the loop as well, and that pass
starts a timer of its own. Timers are never merged, and a timer's pass starts the next one, so for as
long as jobs wait for free cores every finished job adds one timer that wakes the loop each second. Near
the end of a 327-job phase of the Tables 4/5 run, 241 threads woke the loop about 235 times a second, and
Snakemake's own process used 46 % of a core (``benchmarks/results/snakemake_overhead.md``). In a whole
table run as one ``snakemake`` call, thousands of jobs with ready ones nearly always waiting, they
would go on growing.

A pass wakes for a pending timer or a finished job and looks at every ready job, so one pending timer
wakes it as the rate limiter needs. This keeps at most one pending per scheduler and drops the rest.
Nothing else changes: which jobs run, in what order, and with what resources. The timer is a daemon
thread, so the process does not wait up to a timespan at its end. If a Snakemake release no longer has
the method, nothing is patched.
"""

from __future__ import annotations

import threading


def _one_pending(self, delay: float) -> None:
    """``JobScheduler._schedule_reevalutation``: release ``_open_jobs`` after ``delay`` seconds, unless
    such a release is already pending."""
    lock = self.__dict__.setdefault("_smtlib_wakeup_lock", threading.Lock())
    with lock:
        if self.__dict__.get("_smtlib_wakeup_pending"):
            return
        self._smtlib_wakeup_pending = True

    def wake() -> None:
        with lock:
            self._smtlib_wakeup_pending = False
        self._open_jobs.release()

    timer = threading.Timer(delay, wake)
    timer.daemon = True
    timer.start()


def keep_one_pending_wakeup() -> bool:
    """Patch Snakemake's ``JobScheduler`` in this process; True if it is now patched."""
    try:
        from snakemake.scheduling.job_scheduler import JobScheduler
    except ImportError:
        return False
    if not hasattr(JobScheduler, "_schedule_reevalutation"):
        return False
    JobScheduler._schedule_reevalutation = _one_pending
    return True
