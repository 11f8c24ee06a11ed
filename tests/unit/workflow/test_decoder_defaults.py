"""The decoder's search settings have one owner, smtlib.decoder.settings.DecoderConfig; the copies that
must stay (the config schema's defaults and enum, config/config.yaml and config/README.md that a user
reads) are held to it and to each other here, so that a drift fails a test instead of changing the runs
silently."""

import yaml

from smtlib.decoder.settings import SEARCH_SETTINGS, SEARCHES, DecoderConfig, search_defaults
from tests.support.repo import REPO, config_readme_defaults

SCHEMA = yaml.safe_load((REPO / "config/schema/config.schema.yaml").read_text(encoding="utf-8"))
DECODER = SCHEMA["properties"]["decoder"]["properties"]
# the workflow searches with cube pruning at 200 pops, not the decoder's stack search (measured against it
# under tuning: benchmarks/results/cube_vs_stack.md); every other search setting is the decoder's default
WORKFLOW_CHOICES = {"search": "cube", "pop_limit": 200}


def test_the_search_settings_are_the_decoders_config_fields():
    assert search_defaults() == {name: getattr(DecoderConfig(), name) for name in SEARCH_SETTINGS}


def test_the_schemas_search_enum_is_the_decoders():
    assert DECODER["search"]["enum"] == list(SEARCHES)


def test_the_schemas_defaults_are_the_decoders_but_the_workflows_choices():
    schema_defaults = {name: DECODER[name]["default"] for name in SEARCH_SETTINGS}
    assert schema_defaults == {**search_defaults(), **WORKFLOW_CHOICES}


def test_the_schemas_bounds_are_what_the_decoder_takes():
    """0 = no pruning (stack size, table limit), -1 = no distortion limit, a pop limit of at least 1."""
    assert DECODER["stack_size"]["minimum"] == 0 and DECODER["table_limit"]["minimum"] == 0
    assert DECODER["distortion_limit"]["minimum"] == -1 and DECODER["pop_limit"]["minimum"] == 1


def test_the_config_a_user_reads_states_the_schemas_defaults():
    config = yaml.safe_load((REPO / "config/config.yaml").read_text(encoding="utf-8"))
    assert config["decoder"] == {name: spec["default"] for name, spec in DECODER.items()}


def test_the_config_readme_states_the_schemas_defaults():
    assert config_readme_defaults("decoder") == {name: "null" if spec["default"] is None else str(spec["default"])
                                                 for name, spec in DECODER.items()}
