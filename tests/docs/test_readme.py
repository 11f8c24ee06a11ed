"""The README is a short front page: at most 160 lines, and exactly two command blocks, the install
and main job and the test command that .ci/run runs."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MAIN_JOB = 'pip install -e ".[workflow,system]" && snakemake --cores 8 --config data_dir=../shared/data -- results/table4.tsv'
TESTS = 'pip install -e ".[test]" && python -m pytest -q -n auto'


def test_the_readme_is_short():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 160, len(lines)


def test_the_readme_has_exactly_the_two_commands():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    assert [b.strip() for b in blocks] == [MAIN_JOB, TESTS]
    assert not re.search(r"^(    |\t)\S", text, flags=re.M), "an indented code block"


def test_ci_runs_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest -q -n auto -p no:cacheprovider" in ci
    assert ci.index("python -m pytest") < ci.index("python -m sphinx")
