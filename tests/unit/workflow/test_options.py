"""smtlib.workflow.options: the option strings the rules pass to smtlib.

The decoder's search options are checked the strong way: parsed back by the parser of every command
that decodes (smtlib.cli.common.add_search_options), they must give exactly the configured search.
"""

import argparse
import json
import re
import shlex

import pytest

from smtlib.cli.common import add_search_options, search_options
from smtlib.decoder.settings import SEARCHES
from smtlib.errors import InputError
from smtlib.tuners.registry import get_tuner_class
from smtlib.workflow import options

from .conftest import load_config


def _parsed(option_text: str) -> dict:
    parser = argparse.ArgumentParser()
    add_search_options(parser)
    return search_options(parser.parse_args(shlex.split(option_text)))


@pytest.mark.parametrize("search", SEARCHES)
@pytest.mark.parametrize("pop_limit", [1, 200, 1000])
def test_the_decoders_options_give_the_configured_search(search, pop_limit):
    decoder = load_config({"decoder": {"search": search, "pop_limit": pop_limit, "stack_size": 7,
                                       "distortion_limit": -1, "table_limit": 0}})["decoder"]
    parsed = _parsed(options.decoder_options(decoder))
    expected = {k: decoder[k] for k in ("stack_size", "distortion_limit", "table_limit", "search", "pop_limit")}
    if search == "stack":  # the stack search pops nothing: its pop limit is not passed, nor used
        del parsed["pop_limit"], expected["pop_limit"]
    assert parsed == expected


def test_the_stack_searchs_commands_are_the_ones_recorded_before_cube_pruning():
    decoder = load_config({"decoder": {"search": "stack"}})["decoder"]
    assert options.decoder_options(decoder) == "--stack-size 100 --distortion-limit 6 --table-limit 20"


def test_moses_decodes_with_the_models_export():
    decoder = load_config({"decoder": {"backend": "moses", "moses": "/opt/moses/bin/moses"}})["decoder"]
    assert options.decoder_options(decoder, "results/systems/fr-en/small/moses/moses.ini").endswith(
        " --backend moses --moses-bin /opt/moses/bin/moses --moses-ini results/systems/fr-en/small/moses/moses.ini")
    assert "--backend" not in options.decoder_options(decoder)  # a command without the export (mira's)


def test_a_decoder_command_reaches_smtlib_decode_as_one_argument_with_the_model_in_it():
    command = "my-decoder --model {model} -w {weights} < {input} > {nbest} 'a b'"
    decoder = load_config({"decoder": {"backend": "command", "command": command, "dialect": "cdec"}})["decoder"]
    text = options.decoder_options(decoder, None, "results/systems/fr-en/small/model.yaml")
    words = shlex.split(text)
    at = words.index("--decoder")
    assert words[at - 2:at] == ["--backend", "command"]
    assert words[at + 1] == command.replace("{model}", "results/systems/fr-en/small/model.yaml")
    assert words[at + 2:] == ["--dialect", "cdec"]
    assert not options.command_uses_ini(decoder)
    with_ini = load_config({"decoder": {"backend": "command", "command": "moses2 -f {ini} -n-best-list {nbest} {k}"}})
    assert options.command_uses_ini(with_ini["decoder"])
    assert options.decoder_options(with_ini["decoder"], "m/moses.ini", "m/model.yaml").endswith(" --decoder-ini m/moses.ini")


@pytest.mark.parametrize("decoder, methods, message", [
    ({"backend": "command"}, ["kbmira"], "decoder.command is not set"),
    ({"backend": "command", "command": "dec {input}"}, ["kbmira"], "passes no weights"),
    ({"backend": "command", "command": "dec {weights} {oops}"}, ["kbmira"], "unknown placeholder {oops}"),
    ({"backend": "command", "command": "dec {weights}"}, ["kbmira", "lbmert", "mira"], "methods lbmert, mira need our decoder"),
])
def test_a_command_backend_the_workflow_cannot_run_is_refused(decoder, methods, message):
    config = load_config({"decoder": decoder, "methods": methods, "extended_methods": ["kbmira"]})
    with pytest.raises(ValueError, match=re.escape(message)):
        options.check_command_backend(config)


def test_the_data_limits_come_in_a_fixed_order():
    assert options.limit_options({"test": 30, "train": 2000, "dev": None}) == "--max-train 2000 --max-test 30"
    assert options.data_dir_option(True) == "" and options.data_dir_option(False) == "--no-download"


def test_bleus_runs_keep_their_options_and_another_metric_is_named():
    bleu = {"tokenize": "none", "lowercase": True}
    assert options.bleu_options(bleu) == "--tokenize none --lowercase"
    assert options.bleu_options({"tokenize": "13a", "lowercase": False}) == "--tokenize 13a"
    assert options.scoring_options(bleu, "default") == "--tokenize none --lowercase"
    assert options.scoring_options(bleu, "C=0.1@chrf") == "--tokenize none --lowercase --metric chrf"


def test_a_runs_settings_are_the_methods_then_the_pairs_then_its_own():
    config = load_config({"method_settings": {"pro": {"max_iter": 30, "gamma": 10}},
                          "pair_method_settings": {"de-en": {"pro": {"gamma": 50}}}})
    assert options.tune_settings(config, "fr-en", "pro", "default") == "--set max_iter=30 --set gamma=10"
    assert options.tune_settings(config, "de-en", "pro", "default") == "--set max_iter=30 --set gamma=50"
    assert options.tune_settings(config, "de-en", "pro", "max_iter=5@ter") == "--set max_iter=5 --set gamma=50"
    assert options.tune_settings(config, "de-en", "kbmira", "C=0.1") == "--set C=0.1"
    # Table 6 (ja-en): config.yaml's PRO settings of the pair over the method's
    assert options.tune_settings(config, "ja-en", "pro", "default") == "--set max_iter=100 --set gamma=50"


def test_a_runs_hyper_parameter_falls_back_to_the_tuners_default():
    """mira's shard count: the run's setting, else the pair's, else the method's, else the registry's
    default (the pair's used to be skipped, while its --set reached the mixing job)."""
    config = load_config({"method_settings": {"mira": {"shards": 4}},
                          "pair_method_settings": {"ja-en": {"mira": {"shards": 2}}}})
    assert options.tuner_param(config, "fr-en", "mira", "default", "shards") == 4
    assert options.tuner_param(config, "ja-en", "mira", "default", "shards") == 2
    assert options.tuner_param(config, "ja-en", "mira", "shards=3", "shards") == "3"
    default = get_tuner_class("mira").defaults["shards"]
    assert options.tuner_param(load_config(), "fr-en", "mira", "default", "shards") == default


def test_seeds_differ_per_iteration():
    assert options.tune_seed(1, "3") == 1003 and options.tune_seed(2, 1) == 2001
    assert options.lattice_tune_threads("lbmert") == 2 and options.lattice_tune_threads("lbmira") == 1


def test_a_seed_only_replica_differs_from_the_tables_run_in_its_seed_and_the_stability_settings_only():
    """seed=N: the optimizer's seed N at every iteration (1000 N + it) where every other run takes
    tuning.seed; the method's configured settings, then stability.method_settings (PRO's Psi = 0.1)."""
    config = load_config()
    assert options.run_seed(1, "default") == 1 and options.run_seed(7, "C=0.1@ter") == 7
    assert options.run_seed(1, "seed=3") == 3 and options.run_seed(1, "seed=0") == 0
    assert options.tune_seed(options.run_seed(1, "seed=3"), 2) == 3002
    assert options.tune_settings(config, "fr-en", "pro", "default") == "--set max_iter=30"
    assert options.tune_settings(config, "fr-en", "pro", "seed=3") == "--set max_iter=30 --set psi=0.1"
    assert options.tune_settings(config, "ja-en", "pro", "seed=3") == \
        "--set max_iter=100 --set gamma=50 --set psi=0.1"
    assert options.tune_settings(config, "fr-en", "mert", "seed=2") == options.tune_settings(
        config, "fr-en", "mert", "default") == ""
    config = load_config({"stability": {"method_settings": {"kbmira": {"C": 0.001}}}})
    assert options.tune_settings(config, "fr-en", "kbmira", "seed=2") == "--set C=0.001"
    with pytest.raises(InputError, match="non-negative integer"):
        options.run_seed(1, "seed=x")


def test_the_tables_record_their_settings_without_bleus_metric():
    config = load_config()
    settings = json.loads(options.table_settings(config))
    assert "metric" not in settings["tuning"] and "evaluation" not in settings
    assert settings["decoder"] == config["decoder"]
    config = load_config({"tuning": {"metric": "chrf"}, "evaluation": {"metrics": ["bleu", "ter"]}})
    settings = json.loads(options.table_settings(config))
    assert settings["tuning"]["metric"] == "chrf" and settings["evaluation"] == {"metrics": ["bleu", "ter"]}


def test_significance_and_not_applicable_cells():
    assert options.significance_options({"ar_shuffles": 10, "boot_samples": 5, "seed": 1}) == \
        "--ar-shuffles 10 --boot-samples 5 --seed 1"
    assert options.not_applicable_cells({"mert": ["big"], "lbmert": ["big", "medium"]}) == \
        "mert:big lbmert:big lbmert:medium"
