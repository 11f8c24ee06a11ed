"""``benchmarks/decode_trees.py``: a decode timed against another tree, in pairs, its outputs compared."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from smtlib.weights import write_weights
from tests.support.decoder_toy import random_source, start_weights, write_toy_model
from tests.support.repo import REPO


def test_a_tree_against_itself_gives_the_same_bytes_and_a_paired_row(tmp_path):
    spec = write_toy_model(tmp_path / "model", "medium", seed=3)
    write_weights(tmp_path / "w", start_weights(spec))
    (tmp_path / "src").write_text("\n".join(random_source(np.random.default_rng(3), 4, (2, 7))) + "\n")
    out = subprocess.run([sys.executable, str(REPO / "benchmarks" / "decode_trees.py"), "--old", str(REPO),
                          "--model", str(tmp_path / "model" / "model.yaml"), "--weights", str(tmp_path / "w"),
                          "--input", str(tmp_path / "src"), "--k", "5", "--repeats", "1", "--json",
                          str(tmp_path / "m.json")], capture_output=True, text=True, check=True)
    row = json.loads((tmp_path / "m.json").read_text())["row"]
    assert row["same_output"] is True
    assert row["new_faster_in"] in (0, 1) and row["old_cpu"] > 0 and row["new_cpu"] > 0
    assert "(4 sentences), 5-best" in out.stdout and "| yes |" in out.stdout
