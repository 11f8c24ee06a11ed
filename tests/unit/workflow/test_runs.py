"""smtlib.workflow.runs: settings, run lists and targets from a validated config."""

import pytest

from smtlib.workflow import runs

from .conftest import load_config


@pytest.mark.parametrize("hyper, metric, setting", [
    ("default", "bleu", "default"), ("default", "chrf", "default@chrf"), ("C=0.01", "ter", "C=0.01@ter"),
])
def test_a_setting_names_its_hyper_parameters_and_metric(hyper, metric, setting):
    assert runs.run_setting(hyper, metric) == setting
    assert runs.setting_parts(setting) == (hyper, metric)


def test_a_table_is_every_applicable_feature_set_method_and_sample():
    config = load_config({"methods": ["mert", "kbmira"], "feature_sets": ["small", "big"],
                          "subsample": {"count": 1}, "not_applicable": {"mert": ["big"]}})
    assert runs.table_runs(config, "table4") == [
        "results/tune/fr-en/small/mert/default/s0", "results/tune/fr-en/small/mert/default/s1",
        "results/tune/fr-en/small/kbmira/default/s0", "results/tune/fr-en/small/kbmira/default/s1",
        "results/tune/fr-en/big/kbmira/default/s0", "results/tune/fr-en/big/kbmira/default/s1",
    ]


def test_the_extended_table_adds_its_methods_once():
    config = load_config({"methods": ["mert", "pro"], "extended_methods": ["pro", "svm"]})
    assert runs.table_methods(config) == ["mert", "pro", "svm"]
    methods = {r.split("/")[4] for r in runs.table_runs(config, "table4", extended=True)}
    assert methods == {"mert", "pro", "svm"}


def test_the_tables_tune_toward_the_first_metric_and_the_matrix_toward_each():
    config = load_config({"tuning": {"metric": ["chrf", "bleu"]}, "methods": ["kbmira"], "extended_methods": [],
                          "feature_sets": ["small"], "subsample": {"count": 0},
                          "tables": [{"name": "table4", "pair": "fr-en"}]})
    assert runs.table_runs(config, "table4") == ["results/tune/fr-en/small/kbmira/default@chrf/s0"]
    assert runs.matrix_runs(config) == [("chrf", "results/tune/fr-en/small/kbmira/default@chrf/s0"),
                                        ("bleu", "results/tune/fr-en/small/kbmira/default/s0")]
    assert "results/metric_matrix.tsv" in runs.all_targets(config)
    assert "results/metric_matrix.tsv" not in runs.all_targets(load_config())


def test_the_sweep_is_its_grid_times_its_samples():
    config = load_config({"sweep": {"pair": "fr-en", "feature_set": "small", "samples": [0, 2],
                                    "grid": [{"method": "kbmira", "param": "C", "values": [0.1, 1e-3]}]}})
    assert runs.sweep_settings(config) == [("kbmira", "C=0.1"), ("kbmira", "C=0.001")]
    assert runs.sweep_runs(config) == [f"results/tune/fr-en/small/kbmira/{s}/s{k}"
                                       for s in ("C=0.1", "C=0.001") for k in (0, 2)]
    assert "results/figures/figure1.png" in runs.all_targets(config)
    config["sweep"]["grid"] = []
    assert "results/figures/figure1.png" not in runs.all_targets(config)


def test_the_default_target_has_each_tables_files_and_the_figures():
    targets = runs.all_targets(load_config("tiny.yaml"))
    assert targets == ["results/table4.tsv", "results/table4_extended.tsv", "results/table4_vs_paper.tsv",
                       "results/table4_findings.md", "results/table4.html", "results/figures/curves_fr-en.png",
                       "results/figures/curves_fr-en_extended.png",
                       "results/figures/figure1.png", "results/replay/table.tsv", "results/figures/pro_mert.png"]
