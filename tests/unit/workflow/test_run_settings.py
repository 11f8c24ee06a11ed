"""A report describes the run in results/: the settings a run records and a report call adopts, and
the report's home page that names them."""

from __future__ import annotations

import json
import pathlib

import pytest
import yaml

from smtlib.errors import InputError
from smtlib.workflow import run_settings

REPO = pathlib.Path(__file__).resolve().parents[3]


def _merged(*files: str) -> dict:
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    for name in files:
        config.update(yaml.safe_load((REPO / name).read_text()))
    return config


def test_a_report_call_without_a_configfile_adopts_the_runs(tmp_path):
    record = str(tmp_path / "run_settings.json")
    ran = _merged("config/tiny.yaml")
    run_settings.record({**ran, "_report": {"x": 1}}, ["config/tiny.yaml"], record)
    assert "_report" not in json.loads(pathlib.Path(record).read_text())["config"]
    config, said = _merged(), []
    assert run_settings.adopt_for_report(config, [], record, log=said.append) == ["config/tiny.yaml"]
    assert config == ran and "config/tiny.yaml" in said[0]
    # the same files: nothing to adopt; other files: an error naming both
    assert run_settings.adopt_for_report(_merged("config/tiny.yaml"), ["./config/tiny.yaml"], record) == \
        ["config/tiny.yaml"]
    with pytest.raises(InputError, match=r"used config/tiny.yaml, this report call config/quick.yaml"):
        run_settings.adopt_for_report(_merged("config/quick.yaml"), ["config/quick.yaml"], record)
    # no run recorded: the call's own settings
    assert run_settings.adopt_for_report(config, ["a.yaml"], str(tmp_path / "none.json")) == ["a.yaml"]


def test_the_home_page_names_the_runs_settings():
    jinja2 = pytest.importorskip("jinja2")
    config = _merged("config/tiny.yaml")
    config[run_settings.REPORT_KEY] = {"settings": run_settings.describe(["config/tiny.yaml"])}

    class Snakemake:  # what snakemake's report passes the workflow description
        pass

    Snakemake.config = config
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)  # snakemake's report environment
    text = env.from_string((REPO / "config/report/workflow.rst").read_text()).render(snakemake=Snakemake)
    flat = " ".join(text.split())
    assert "config/config.yaml with config/tiny.yaml over it" in flat
    assert "methods mert, kbmira, lbmira" in flat and "2 iterations, k = 20" in flat
    assert "training pairs 2000, dev sentences 30" in flat
