"""Running ``python -m smtlib`` as a user does, for the tests that drive the command line (the ``cli``
fixture of ``tests/conftest.py`` hands out :func:`run_cli`)."""

from __future__ import annotations

import os
import subprocess
import sys


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
