"""The code's comments, docstrings, configuration and README describe the project as it is: no issue
numbers ("issue 25", "(issue 25)", "issue 25's", "until issue 22"). Upstream bugs are cited as
owner/repo#N."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PATTERN = re.compile(r"issues? #?[0-9]|until issue", re.IGNORECASE)


def _text_files():
    for root in ("smtlib", "rules", "config"):
        for path in sorted((REPO / root).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in {".pyc", ".nbi", ".nbc", ".so"}:
                yield path
    yield REPO / "README.md"
    yield REPO / "Snakefile"


def test_no_issue_numbers_in_code_config_or_readme():
    found = []
    for path in _text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{path.relative_to(REPO)}:{n}: {line.strip()}"
                  for n, line in enumerate(text.splitlines(), 1) if PATTERN.search(line)]
    assert not found, "\n".join(found)
