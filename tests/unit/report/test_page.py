"""A table's HTML page for the report: TSV files as tables (their # lines as notes), text escaped."""

from __future__ import annotations

import pytest

from smtlib.errors import InputError
from smtlib.report.page import table_page


def test_tsv_becomes_a_table_and_text_stays_text(tmp_path):
    (tmp_path / "t.tsv").write_text("# a note <here>\nmethod\tTest\nkb-mira\t32.52\n", encoding="utf-8")
    (tmp_path / "t.md").write_text("# t\n| a | b <c> |\n", encoding="utf-8")
    page = table_page("t & co", [tmp_path / "t.tsv", tmp_path / "t.md"])
    assert "<title>t &amp; co</title>" in page and '<p class="note">a note &lt;here&gt;</p>' in page
    assert "<th>method</th><th>Test</th>" in page and "<td>kb-mira</td><td>32.52</td>" in page
    assert "<pre># t\n| a | b &lt;c&gt; |\n</pre>" in page
    assert page.index("<h2>t.tsv</h2>") < page.index("<h2>t.md</h2>")


def test_a_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot be read"):
        table_page("t", [tmp_path / "missing.tsv"])
