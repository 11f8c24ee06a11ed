"""A table's page for the HTML report: the table, its comparison with the paper, its companion and
its findings, readable in the browser.

``snakemake --report`` shows images and HTML in the page and offers every other file (TSV,
Markdown) as a download; a table's own page puts the files a reader looks at first into one HTML
file that the report shows. TSV files become HTML tables (``#`` lines above them as notes), text
files (the Markdown companion and findings) preformatted text: the page adds no converter, and
Markdown reads as plain text.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence

from smtlib.errors import InputError

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #1e293b; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #cbd5e1; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f1f5f9; }
pre { white-space: pre-wrap; font-size: 0.85em; background: #f8fafc; padding: 1em; border: 1px solid #e2e8f0; }
p.note { font-size: 0.85em; color: #475569; }
"""


def _table(text: str) -> str:
    notes = [line[1:].strip() for line in text.splitlines() if line.startswith("#")]
    rows = [line.split("\t") for line in text.splitlines() if line.strip() and not line.startswith("#")]
    parts = [f'<p class="note">{html.escape(n)}</p>' for n in notes]
    if rows:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows[1:])
        parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    return "\n".join(parts)


def table_page(title: str, files: Sequence[str | os.PathLike]) -> str:
    """The HTML page of ``files`` in order, each under its file name: ``.tsv`` as a table, anything
    else as preformatted text."""
    sections = []
    for path in files:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot be read for the page ({exc})", path) from exc
        name = os.path.basename(os.fspath(path))
        content = _table(text) if name.endswith(".tsv") else f"<pre>{html.escape(text)}</pre>"
        sections.append(f"<h2>{html.escape(name)}</h2>\n{content}")
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{STYLE}</style></head>\n<body><h1>{html.escape(title)}</h1>\n" + "\n".join(sections)
            + "\n</body></html>\n")
