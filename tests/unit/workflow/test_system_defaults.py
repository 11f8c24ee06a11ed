"""The system's training settings have one owner, smtlib.system.build.BuildOptions (the `smtlib train
build` flags); the config schema's `system` defaults, config/config.yaml and config/README.md copy them
and are held to it here, as test_decoder_defaults.py holds the decoder's. The seed is the workflow's
own choice (1; the command's default is 0)."""

import re

import yaml

from smtlib.system.align import ALIASES, SYMMETRIZATIONS
from smtlib.system.build import BuildOptions
from tests.support.repo import REPO

SCHEMA = yaml.safe_load((REPO / "config/schema/config.schema.yaml").read_text(encoding="utf-8"))
SYSTEM = SCHEMA["properties"]["system"]["properties"]
WORKFLOW_CHOICES = {"seed": 1}


def _build_defaults() -> dict:
    options = BuildOptions(src_lang="fr", tgt_lang="en")
    return {name: getattr(options, name) for name in SYSTEM}


def test_the_schemas_defaults_are_the_builds_but_the_workflows_choices():
    assert {name: spec["default"] for name, spec in SYSTEM.items()} == {**_build_defaults(), **WORKFLOW_CHOICES}


def test_the_schemas_symmetrizations_are_the_aligners():
    choices = SYSTEM["tm1_symmetrization"]["enum"]
    assert set(SYMMETRIZATIONS) <= set(choices) <= set(SYMMETRIZATIONS) | set(ALIASES)


def test_the_config_a_user_reads_states_the_schemas_defaults():
    config = yaml.safe_load((REPO / "config/config.yaml").read_text(encoding="utf-8"))
    assert config["system"] == {name: spec["default"] for name, spec in SYSTEM.items()}


def test_the_config_readme_states_the_schemas_defaults():
    rows = [line.split("|")[1:3] for line in (REPO / "config/README.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("| `system.")]
    documented = {re.search(r"`system\.(\w+)`", keys).group(1): re.search(r"`([^`]*)`", default).group(1)
                  for keys, default in rows}
    assert documented == {name: str(spec["default"]) for name, spec in SYSTEM.items()}
