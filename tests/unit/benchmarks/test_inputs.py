"""``benchmarks/_inputs.py``: the benchmarks find or build their inputs, never read a fixed absolute path."""

from __future__ import annotations

import gzip
import importlib.util
import re
import sys

import pytest
from tests.support.repo import REPO



@pytest.fixture(scope="module")
def inputs():
    spec = importlib.util.spec_from_file_location("_inputs", REPO / "benchmarks" / "_inputs.py")
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve string annotations through sys.modules, so the module must be there first
    sys.modules["_inputs"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["_inputs"]


def test_no_benchmark_defaults_to_a_fixed_absolute_path():
    for script in sorted((REPO / "benchmarks").glob("*.py")):
        text = script.read_text(encoding="utf-8")
        assert not re.search(r"[\"'](/work|/home|/data|/tmp)/", text), script.name


def test_a_named_models_directory_is_looked_in_and_never_built_into(inputs, tmp_path):
    with pytest.raises(SystemExit, match=r"no model at .*fr-en-medium .*leave --models out"):
        inputs.find_model("medium", tmp_path)
    assert list(tmp_path.iterdir()) == []
    model = tmp_path / "fr-en-small"
    model.mkdir()
    (model / "model.yaml").write_text("{}\n", encoding="utf-8")
    assert inputs.find_model("small", tmp_path) == model


def test_missing_shared_data_names_the_option_to_pass(inputs, tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "TOK", tmp_path / "nowhere")
    with pytest.raises(SystemExit, match="SMTLIB_SHARED_DATA.*the input"):
        inputs.dev_set(tmp_path)


@pytest.mark.data
def test_the_dev_set_is_multi30k_val(inputs, shared_data, tmp_path, monkeypatch):
    tok = shared_data / "multi30k" / "tok"
    monkeypatch.setattr(inputs, "TOK", tok)
    src, ref = inputs.dev_set(tmp_path, limit=5)
    with gzip.open(tok / "val.lc.norm.tok.fr.gz", "rt", encoding="utf-8") as fh:
        assert src.read_text(encoding="utf-8").splitlines() == fh.read().splitlines()[:5]
    assert len(ref.read_text(encoding="utf-8").splitlines()) == 5
    src, ref = inputs.dev_set(tmp_path)
    assert len(src.read_text(encoding="utf-8").splitlines()) == len(ref.read_text(encoding="utf-8").splitlines()) == 1014
