"""``benchmarks/startup.py``: short commands are timed with their bytecode compiled, as an installed package's."""

from __future__ import annotations

import importlib.util

from tests.support.repo import REPO


def _startup():
    spec = importlib.util.spec_from_file_location("startup_bench", REPO / "benchmarks" / "startup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_command_writes_its_bytecode_under_the_working_directory_even_when_the_shell_forbids_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    result = _startup().run(REPO, ["--help"], tmp_path, check=True)
    assert result["status"] == 0 and result["cpu"] > 0
    compiled = {p.name for p in (tmp_path / "pycache").rglob("*.pyc")}
    assert any(name.startswith("__main__.") for name in compiled)
