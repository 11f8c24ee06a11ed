"""docs/loop.md's reranking recipe, as written there: its rescoring script tunes a fixed n-best list."""

from __future__ import annotations

import json
import re
import shlex
import sys

from smtlib.weights import read_weights
from tests.integration.loop.conftest import curve, loop_in_process
from tests.support import fake_decoder
from tests.support.repo import REPO


def test_the_reranking_recipe_tunes_a_fixed_list(example, tmp_path):
    doc = (REPO / "docs" / "loop.md").read_text(encoding="utf-8")
    script = re.search(r"```python\n(#!/usr/bin/env python3\n\"\"\"rescore\.py.*?)```", doc, re.S).group(1)
    (tmp_path / "rescore.py").write_text(script, encoding="utf-8")
    fixed = tmp_path / "fixed.nbest"
    assert fake_decoder.main(["--weights", example["init.weights"], "-i", example["dev.src"], "-n-best-list",
                              str(fixed), "8"]) == 0
    decoder = f"{shlex.quote(sys.executable)} {shlex.quote(str(tmp_path / 'rescore.py'))} {shlex.quote(str(fixed))} {{weights}}"
    work = tmp_path / "rerank"
    code, err = loop_in_process(["loop", "--source", example["dev.src"], "--refs", example["dev.en"], "--init",
                                 example["init.weights"], "--work-dir", work, "--decoder", decoder,
                                 "--max-iterations", "2"])
    assert code == 0, err
    rows = curve(work)
    assert float(rows[1]["dev_bleu"]) > float(rows[0]["dev_bleu"]) + 20
    sizes = [json.loads((work / f"it{n}" / "scores.json").read_text())["hypotheses"] for n in (1, 2)]
    assert sizes[0] == sizes[1] == 95  # the same 12 sentences' candidates: the pool never grows
    assert read_weights(work / "best.weights") == read_weights(work / "it2" / "weights")
