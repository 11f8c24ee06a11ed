"""The system's training settings have one owner, smtlib.system.build.BuildOptions (the `smtlib train
build` flags); the config schema's `system` defaults, config/config.yaml and config/README.md copy them
and are held to it here, as test_decoder_defaults.py holds the decoder's. The seed is the workflow's
own choice (1; the command's default is 0)."""

import yaml

from smtlib.system.align import ALIASES, SYMMETRIZATIONS
from smtlib.system.build import BuildOptions
from tests.support.repo import REPO, config_readme_defaults

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
    assert config_readme_defaults("system") == {name: str(spec["default"]) for name, spec in SYSTEM.items()}
