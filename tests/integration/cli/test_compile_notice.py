"""The first numba compilation of a command run at a terminal is announced with one line; piped
output (tests, the workflow's logs) and a warm cache get none."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from smtlib.compile_notice import NOTICE

CODE = "import sys; from smtlib.cli import main; sys.exit(main(sys.argv[1:]))"


def _at_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    pid, fd = pty.fork()
    if pid == 0:  # the child: stdin, stdout and stderr are the terminal
        os.execve(sys.executable, [sys.executable, "-c", CODE, *args], env)
    out = b""
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:  # the terminal closes with the child
            break
        if not data:
            break
        out += data
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


@pytest.mark.slow
def test_a_cold_cache_is_announced_at_a_terminal_only(tmp_path):
    (tmp_path / "ref").write_text("a b c d e\nf g h i j\n", encoding="utf-8")
    (tmp_path / "hyp").write_text("a b c d x\nf g h i j\n", encoding="utf-8")
    args = ["bleu", "--refs", str(tmp_path / "ref"), "--hyps", str(tmp_path / "hyp"), "--score-only"]

    def env(cache: str) -> dict[str, str]:
        return dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / cache))

    piped = subprocess.run([sys.executable, "-c", CODE, *args], env=env("piped"), capture_output=True, text=True)
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    code, cold = _at_a_terminal(args, env("tty"))
    assert code == 0 and cold.count(NOTICE) == 1, cold
    code, warm = _at_a_terminal(args, env("tty"))
    assert code == 0 and NOTICE not in warm and piped.stdout.strip() in warm, warm
