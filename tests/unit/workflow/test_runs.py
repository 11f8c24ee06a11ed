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


def test_a_seed_only_replica_is_a_setting_no_table_run_has():
    assert runs.replica_setting(3) == "seed=3" and runs.replica_seed("seed=3") == 3
    assert runs.replica_seed("default") is None and runs.replica_seed("C=0.1") is None
    assert runs.replica_seed("default@chrf") is None and runs.replica_seed("seeds=2") is None
    # no tuner takes a hyper-parameter of that name, so no sweep point can be read as a seed
    from smtlib.tuners.registry import get_tuner_class, list_tuners

    assert all(runs.SEED_PARAM not in get_tuner_class(m).defaults for m in list_tuners())


def test_the_stability_replicas_are_the_full_dev_set_once_per_seed_in_directories_of_their_own():
    config = load_config({"stability": {"methods": ["mert", "pro"], "feature_sets": ["medium", "big"],
                                        "seeds": [4, 9]}})
    replicas = runs.stability_runs(config, "ja-en")
    assert replicas == [
        ("medium", "mert", 4, "results/tune/ja-en/medium/mert/seed=4/s0"),
        ("medium", "mert", 9, "results/tune/ja-en/medium/mert/seed=9/s0"),
        ("medium", "pro", 4, "results/tune/ja-en/medium/pro/seed=4/s0"),
        ("medium", "pro", 9, "results/tune/ja-en/medium/pro/seed=9/s0"),
        ("big", "pro", 4, "results/tune/ja-en/big/pro/seed=4/s0"),  # MERT does not apply to Big
        ("big", "pro", 9, "results/tune/ja-en/big/pro/seed=9/s0"),
    ]
    every_table_run = {r for t in runs.tables(config) for e in (False, True) for r in runs.table_runs(config, t, e)}
    every_table_run |= set(runs.sweep_runs(config)) | {r for _, r in runs.matrix_runs(config)}
    assert not every_table_run & {r for *_, r in replicas}
    assert all(t.startswith("results/stability") is False for t in runs.all_targets(config))  # not in the default


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
