"""The experiment's runs, from the validated config (a plain dict, ``config/config.yaml`` with the
schema's defaults and the pairs not configured dropped): hyper-parameter settings, the run
directories of the tables, of the metric matrix and of Figure 1's sweep, and the default target.

A run is a (pair, feature set, method, setting, dev sub-sample); sub-sample 0 is the whole dev set
(Cherry & Foster 2012, §4.3) and a setting is ``default`` or ``PARAM=VALUE`` (a sweep's point), then
``@METRIC`` when the run tunes toward a metric other than BLEU. The setting ``seed=N`` is a seed-only
replica (:func:`replica_setting`): the full dev set, the method's configured hyper-parameters, and the
optimizer's seed N in place of ``tuning.seed`` (Hopkins & May 2011, §5.5: the stability experiment,
:func:`stability_runs`); no tuner has a hyper-parameter called ``seed``, so the name cannot collide with
a sweep's point, and the tables' runs (``default``) keep their paths.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from smtlib.errors import InputError
from smtlib.workflow.paths import run_dir

#: the {setting} of runs with the configured hyper-parameters
DEFAULT = "default"
#: between a run's hyper-parameter setting and a tuning metric other than BLEU
METRIC_MARK = "@"
#: Cherry & Foster's tables, in smtlib/report/cherry_foster_2012.tsv
PAPER_TABLES = ("table4", "table5", "table6")
#: the parameter of a seed-only replica's {setting}, ``seed=N`` (no tuner has a hyper-parameter of this name)
SEED_PARAM = "seed"
#: the dev sub-sample of the whole dev set, which the seed-only replicas tune on
FULL_DEV = 0


def run_setting(hyper: str, metric: str) -> str:
    """A run's {setting}: its hyper-parameters (DEFAULT or PARAM=VALUE), then @METRIC when it tunes
    toward a metric other than BLEU (BLEU's runs keep the paths they always had)."""
    return hyper if metric == "bleu" else f"{hyper}{METRIC_MARK}{metric}"


def setting_parts(setting: str) -> tuple[str, str]:
    """(hyper-parameter setting, tuning metric) of a run's {setting} (the inverse of run_setting)."""
    hyper, _, metric = setting.partition(METRIC_MARK)
    return hyper, metric or "bleu"


def replica_setting(seed: int) -> str:
    """The {setting} of the seed-only replica with optimizer seed ``seed`` (``seed=3``)."""
    return f"{SEED_PARAM}={int(seed)}"


def replica_seed(setting: str) -> int | None:
    """The optimizer seed of a seed-only replica's {setting} (``seed=N``); None for any other setting.

    Raises
    ------
    InputError
        For ``seed=`` followed by anything but a non-negative integer.
    """
    hyper, _ = setting_parts(setting)
    key, sep, value = hyper.partition("=")
    if key != SEED_PARAM or not sep:
        return None
    if not value.isdigit():
        raise InputError(f"setting {setting!r}: a seed-only replica's seed is a non-negative integer")
    return int(value)


def tuning_metrics(config: dict) -> list[str]:
    """`tuning.metric` as a list: one metric, or the sweep's (the first is the tables' metric)."""
    metric = config["tuning"]["metric"]
    return metric if isinstance(metric, list) else [metric]


def samples(config: dict) -> list[int]:
    """The dev sub-samples: 0 (the whole dev set) and 1..subsample.count."""
    return list(range(config["subsample"]["count"] + 1))


def table_methods(config: dict) -> list[str]:
    """The methods of the extended tables: the paper tables' ones, then the extended ones."""
    return list(dict.fromkeys(config["methods"] + config["extended_methods"]))


def tables(config: dict) -> dict[str, str]:
    """Table name -> its pair."""
    return {t["name"]: t["pair"] for t in config["tables"]}


def applies(config: dict, method: str, feature_set: str) -> bool:
    """False where a method does not apply to a feature set (n/a in the tables: MERT on Big)."""
    return feature_set not in config["not_applicable"].get(method, [])


def sweep_settings(config: dict) -> list[tuple[str, str]]:
    """Figure 1's grid as (method, "param=value") pairs, in the configured order."""
    return [
        (g["method"], f"{g['param']}={value:g}") for g in config["sweep"]["grid"] for value in g["values"]
    ]


def runs_of(
    config: dict,
    pair: str,
    methods: Iterable[str],
    feature_sets: Sequence[str] | None = None,
    settings: Sequence[str] = (DEFAULT,),
    sample_list: Sequence[int] | None = None,
) -> list[str]:
    """The run directories of a table (or sweep): every applicable combination, as one product."""
    feature_sets = config["feature_sets"] if feature_sets is None else feature_sets
    sample_list = samples(config) if sample_list is None else sample_list
    return [
        run_dir(pair, fs, method, setting, sample)
        for fs, method, setting, sample in itertools.product(feature_sets, methods, settings, sample_list)
        if applies(config, method, fs)
    ]


def table_runs(config: dict, table: str, extended: bool = False) -> list[str]:
    """The runs of a table (its pair, the tables' tuning metric): the paper's methods, or every method."""
    methods = table_methods(config) if extended else config["methods"]
    return runs_of(config, tables(config)[table], methods, settings=(run_setting(DEFAULT, tuning_metrics(config)[0]),))


def matrix_runs(config: dict) -> list[tuple[str, str]]:
    """(tuning metric, run directory) of the metric matrix: every table pair's runs (the extended
    tables' methods), once per tuning metric."""
    return [
        (metric, run)
        for pair in dict.fromkeys(tables(config).values())
        for metric in tuning_metrics(config)
        for run in runs_of(config, pair, table_methods(config), settings=(run_setting(DEFAULT, metric),))
    ]


def sweep_runs(config: dict) -> list[str]:
    """The run directories of Figure 1's sweep."""
    sw = config["sweep"]
    return [
        run_dir(sw["pair"], sw["feature_set"], method, setting, sample)
        for method, setting in sweep_settings(config)
        for sample in sw["samples"]
    ]


def stability_runs(config: dict, pair: str) -> list[tuple[str, str, int, str]]:
    """The seed-only replicas of a pair (config ``stability:``) as (feature set, method, seed, run
    directory): every applicable feature set and method, once per seed, on the full dev set.

    Hopkins & May (2011), §5.5 and Figure 6: the same experiment repeated five times, the runs differing
    only in the optimizer's random choices. Here they differ only in the seed of ``smtlib tune`` (MERT's
    random restarts, PRO's pair sampling, kb-mira's sentence order); the first decode, with the initial
    weights, is the tables' (shared by every run of the system).
    """
    st = config["stability"]
    return [
        (fs, method, seed, run_dir(pair, fs, method, replica_setting(seed), FULL_DEV))
        for fs, method, seed in itertools.product(st["feature_sets"], st["methods"], st["seeds"])
        if applies(config, method, fs)
    ]


def curve_pairs(config: dict) -> list[str]:
    """The pairs with learning curves (curves.pairs, else every pair)."""
    return config["curves"]["pairs"] or config["pairs"]


def all_targets(config: dict) -> list[str]:
    """The default target: every table (paper and extended), the figures and the replay table."""
    names = list(tables(config))
    targets = [f"results/{t}.tsv" for t in names]
    targets += [f"results/{t}_extended.tsv" for t in names]
    targets += [f"results/{t}_vs_paper.tsv" for t in names if t in PAPER_TABLES]
    targets += [f"results/{t}_findings.md" for t in names if t in PAPER_TABLES]
    targets += [f"results/{t}.html" for t in names if t in PAPER_TABLES]
    targets += [f"results/figures/curves_{p}{suffix}.png" for p in curve_pairs(config) for suffix in ("", "_extended")]
    if config["sweep"]["grid"]:
        targets.append("results/figures/figure1.png")
    if isinstance(config["tuning"]["metric"], list):
        targets.append("results/metric_matrix.tsv")
    targets.append("results/replay/table.tsv")
    targets.append("results/figures/pro_mert.png")
    return targets
