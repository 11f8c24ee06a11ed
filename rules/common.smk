# Every helper of the workflow: configuration checks, path builders, the experiment's run lists,
# input functions (the tuning loop's base cases live here) and wildcard constraints.
# The rules call these by name; no rule holds a lambda or logic of its own.

import difflib
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import PurePosixPath
from types import SimpleNamespace

from snakemake.utils import validate

from smtlib.bleu.metrics import METRICS, parse_mixture
from smtlib.bleu.stats import tokenizers
from smtlib.data.corpora import PAIRS, REPLAY_ITERATIONS
from smtlib.errors import InputError
from smtlib.system.align import canonical_symmetrization
from smtlib.system.feature_sets import FEATURE_SETS
from smtlib.tuners.registry import (
    check_metric,
    get_tuner_class,
    input_kind,
    list_tuners,
)


validate(config, schema="../config/schema/config.schema.yaml")


def _unknown_names(kind, used, known, where):
    """One line per name in ``used`` that is not in ``known`` (its owner's list), with a guess."""
    lines = []
    for name in sorted(set(used) - set(known)):
        guess = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {guess[0]!r}?)" if guess else ""
        lines.append(
            f"config: {name!r} is not {kind}{hint}; {where}: {', '.join(known)}"
        )
    return lines


def tuning_metrics():
    """`tuning.metric` as a list: one metric, or the sweep's (the first is the tables' metric)."""
    metric = config["tuning"]["metric"]
    return metric if isinstance(metric, list) else [metric]


def _metric_errors():
    """Lines for the metrics the registries do not know (smtlib.bleu.metrics for the names, the tuner
    registry for which metrics each table method takes, as `smtlib tune --list` shows them).
    """
    errors = []
    methods = list(dict.fromkeys(config["methods"] + config["extended_methods"]))
    for spec in tuning_metrics():
        try:
            names = parse_mixture(spec).names
        except InputError as e:
            errors.append(f"config: tuning.metric {spec!r}: {e}")
            continue
        for method in methods:
            try:
                check_metric(method, names)
            except InputError as e:
                errors.append(
                    f"config: tuning.metric {spec!r} for the tables' methods: {e} (smtlib tune --list)"
                )
    evaluation = config["evaluation"]["metrics"]
    errors += _unknown_names(
        "a metric", evaluation, list(METRICS), "smtlib score --metric"
    )
    if "bleu" not in evaluation:
        errors.append(
            f"config: evaluation.metrics {evaluation} lacks bleu (the tables' primary score)"
        )
    return errors


def _check_config():
    """Checks the schema cannot express: method, feature-set, tokenizer and metric names against
    their owners (the tuner registry, smtlib/system/feature_sets.py, sacrebleu, smtlib.bleu.metrics),
    the tables' methods against the tuning metric, table pairs, sweep targets.
    """
    methods = set(config["methods"]) | set(config["extended_methods"])
    methods |= set(config["replay"]["methods"]) | {
        g["method"] for g in config["sweep"]["grid"]
    }
    methods |= set(config["not_applicable"]) | set(config["method_settings"])
    for settings in config["pair_method_settings"].values():
        methods |= set(settings)
    feature_sets = set(config["feature_sets"]) | {config["sweep"]["feature_set"]}
    for sets in config["not_applicable"].values():
        feature_sets |= set(sets)
    errors = _unknown_names(
        "a registered tuner", methods, list_tuners(), "smtlib tune --list"
    )
    errors += _unknown_names(
        "a feature set",
        feature_sets,
        list(FEATURE_SETS),
        "smtlib/system/feature_sets.py",
    )
    errors += _unknown_names(
        "a sacrebleu tokenizer",
        {config["bleu"]["tokenize"], config["replay"]["tokenize"]},
        list(tokenizers()),
        "sacrebleu",
    )
    errors += _metric_errors()
    if errors:
        raise ValueError("\n".join(errors))
    names = [t["name"] for t in config["tables"]]
    if len(set(names)) != len(names):
        raise ValueError(f"config: table names must be unique, got {names}")
    if config["data_dir"] is not None and not os.path.isdir(config["data_dir"]):
        raise ValueError(
            f"config: data_dir {config['data_dir']!r} is not a directory (give a copy laid out like "
            "../shared/data, or leave data_dir unset to download)"
        )
    for method in config["replay"]["methods"]:
        if input_kind(method) != "kbest":
            raise ValueError(
                f"config: replay.methods has {method!r}, which does not tune on k-best lists "
                "(the replay has Moses's n-best lists only)"
            )
    if config["decoder"]["backend"] == "moses" and not (
        config["decoder"]["moses"] and os.access(config["decoder"]["moses"], os.X_OK)
    ):
        raise ValueError(
            f"config: decoder.backend is moses but decoder.moses ({config['decoder']['moses']!r}) "
            "is not an executable moses or moses2 binary"
        )
    for sample in config["sweep"]["samples"]:
        if sample > config["subsample"]["count"]:
            raise ValueError(
                f"config: sweep.samples has {sample}, but subsample.count is {config['subsample']['count']}"
            )


def _drop_unconfigured_pairs():
    """Tables, learning curves and the Figure 1 sweep of pairs not in ``pairs`` are dropped, one line
    each on stderr, so that setting ``pairs`` alone selects a sub-experiment (``pairs: [fr-en]``).
    """
    pairs = config["pairs"]
    for t in [t for t in config["tables"] if t["pair"] not in pairs]:
        print(
            f"config: {t['name']} dropped (its pair {t['pair']} is not in pairs {pairs})",
            file=sys.stderr,
        )
    config["tables"] = [t for t in config["tables"] if t["pair"] in pairs]
    config["curves"]["pairs"] = [p for p in config["curves"]["pairs"] if p in pairs]
    if config["sweep"]["grid"] and config["sweep"]["pair"] not in pairs:
        print(
            f"config: Figure 1's sweep dropped (its pair {config['sweep']['pair']} is not in pairs {pairs})",
            file=sys.stderr,
        )
        config["sweep"]["grid"] = []


_drop_unconfigured_pairs()
_check_config()


# ---------------------------------------------------------------- the experiment's dimensions
ITERATIONS = config["tuning"]["iterations"]
SAMPLES = list(
    range(config["subsample"]["count"] + 1)
)  # 0 = the whole dev set (Cherry & Foster §4.3)
TABLE_METHODS = list(dict.fromkeys(config["methods"] + config["extended_methods"]))
TABLES = {t["name"]: t["pair"] for t in config["tables"]}
PAPER_TABLES = (
    "table4",
    "table5",
    "table6",
)  # Cherry & Foster's, in smtlib/report/cherry_foster_2012.tsv
SWEEP_METHODS = [g["method"] for g in config["sweep"]["grid"]]
ALL_METHODS = sorted(
    set(TABLE_METHODS) | set(SWEEP_METHODS) | set(config["replay"]["methods"])
)
DEFAULT = "default"  # the {setting} of runs with the configured hyper-parameters
# the tuning metrics (tuning.metric): the first is the tables' and curves'; with a list, the metric
# matrix has them all; Figure 1's sweep and the replay reproduce the paper's BLEU experiments
TUNING_METRICS = tuning_metrics()
TABLE_METRIC = TUNING_METRICS[0]
# the metrics of the test scores: bleu (the tables' score) and others
EVALUATION_METRICS = config["evaluation"]["metrics"]
# between a run's hyper-parameter setting and a tuning metric other than BLEU
METRIC_MARK = "@"


def applies(method, feature_set):
    """False where a method does not apply to a feature set (n/a in the tables: MERT on Big)."""
    return feature_set not in config["not_applicable"].get(method, [])


def test_sets(pair):
    """The test-set names of a pair (Multi30k: test2016 and test2017; the others: test)."""
    return sorted(PAIRS[pair].tests)


def run_setting(hyper, metric):
    """A run's {setting}: its hyper-parameters (DEFAULT or PARAM=VALUE), then @METRIC when it tunes
    toward a metric other than BLEU (BLEU's runs keep the paths they always had)."""
    return hyper if metric == "bleu" else f"{hyper}{METRIC_MARK}{metric}"


def setting_parts(setting):
    """(hyper-parameter setting, tuning metric) of a run's {setting} (the inverse of run_setting)."""
    hyper, _, metric = setting.partition(METRIC_MARK)
    return hyper, metric or "bleu"


def sweep_settings():
    """Figure 1's grid as (method, "param=value") pairs, in the configured order."""
    return [
        (g["method"], f"{g['param']}={value:g}")
        for g in config["sweep"]["grid"]
        for value in g["values"]
    ]


# ---------------------------------------------------------------- path builders
def data_path(pair, name=None):
    """A corpus file of a pair (`smtlib data fetch`), or their directory."""
    return f"results/data/{pair}" if name is None else f"results/data/{pair}/{name}"


def work_path(pair, name):
    """A stage file of a pair's system (`smtlib train STAGE`, under the names `smtlib train build` uses)."""
    return f"results/systems/{pair}/work/{name}"


def model_dir(pair, feature_set, name=None):
    """A system's model directory (`smtlib train assemble --out`), or the file ``name`` in it."""
    directory = f"results/systems/{pair}/{feature_set}"
    return directory if name is None else f"{directory}/{name}"


# the wildcard pattern of a run directory (the rules of rules/tune.smk and rules/evaluate.smk)
RUN = "results/tune/{pair}/{fs}/{method}/{setting}/s{sample}"


def run_path(name):
    """A file of a run directory, as a wildcard pattern (e.g. ``run_path("it{it}/weights")``)."""
    return f"{RUN}/{name}"


def run_log(name):
    return f"logs/{RUN.removeprefix('results/')}/{name}"


def run_benchmark(name):
    return f"results/benchmarks/{RUN.removeprefix('results/')}/{name}"


# the first decode of a (pair, feature set), shared by all its runs, and each sub-sample's share of it
FIRST = "results/tune/{pair}/{fs}/first"


def first_path(name):
    """A file of the shared first decode, as a wildcard pattern (e.g. ``first_path("s{sample}/dev.pool")``)."""
    return f"{FIRST}/{name}"


def first_log(name):
    return f"logs/{FIRST.removeprefix('results/')}/{name}"


def first_benchmark(name):
    return f"results/benchmarks/{FIRST.removeprefix('results/')}/{name}"


def run_dir(pair, feature_set, method, setting, sample):
    """One tuning run: (pair, feature set, method, hyper-parameter setting, dev sub-sample)."""
    return f"results/tune/{pair}/{feature_set}/{method}/{setting}/s{sample}"


def runs_of(pair, methods, feature_sets=None, settings=(DEFAULT,), samples=None):
    """The run directories of a table (or sweep): every applicable combination, as one product."""
    feature_sets = config["feature_sets"] if feature_sets is None else feature_sets
    samples = SAMPLES if samples is None else samples
    return [
        run_dir(pair, fs, method, setting, sample)
        for fs, method, setting, sample in itertools.product(
            feature_sets, methods, settings, samples
        )
        if applies(method, fs)
    ]


def table_runs(table, extended=False):
    methods = TABLE_METHODS if extended else config["methods"]
    return runs_of(
        TABLES[table], methods, settings=(run_setting(DEFAULT, TABLE_METRIC),)
    )


def matrix_runs():
    """(tuning metric, run directory) of the metric matrix: every table pair's runs (the extended
    tables' methods), once per tuning metric."""
    return [
        (metric, run)
        for pair in dict.fromkeys(TABLES.values())
        for metric in TUNING_METRICS
        for run in runs_of(
            pair, TABLE_METHODS, settings=(run_setting(DEFAULT, metric),)
        )
    ]


def sweep_runs():
    sw = config["sweep"]
    return [
        run_dir(sw["pair"], sw["feature_set"], method, setting, sample)
        for method, setting in sweep_settings()
        for sample in sw["samples"]
    ]


def curve_pairs():
    return config["curves"]["pairs"] or config["pairs"]


# ---------------------------------------------------------------- targets
def all_targets():
    """The default target: every table (paper and extended), the figures and the replay table."""
    targets = [f"results/{t}.tsv" for t in TABLES]
    targets += [f"results/{t}_extended.tsv" for t in TABLES]
    targets += [f"results/{t}_vs_paper.tsv" for t in TABLES if t in PAPER_TABLES]
    targets += [f"results/{t}_findings.md" for t in TABLES if t in PAPER_TABLES]
    targets += [f"results/figures/curves_{p}.png" for p in curve_pairs()]
    if config["sweep"]["grid"]:
        targets.append("results/figures/figure1.png")
    if isinstance(config["tuning"]["metric"], list):
        targets.append("results/metric_matrix.tsv")
    targets.append("results/replay/table.tsv")
    targets.append("results/figures/pro_mert.png")
    return targets


# ---------------------------------------------------------------- start of a run
def warm_up_numba():
    """`smtlib warmup` (smtlib.warmup) with this Python, before the first job: a cold installation
    compiles its numba kernels once, saying so, instead of in every first job at once. A failure only
    warns: the jobs compile what they need themselves. SMTLIB_WARMUP=0 skips it (the tests do).
    """
    if os.environ.get("SMTLIB_WARMUP", "1") == "0":
        return
    status = subprocess.run([sys.executable, "-m", "smtlib", "warmup"]).returncode
    if status != 0:
        print(
            f"smtlib warmup failed ({status}); the jobs compile numba's kernels themselves",
            file=sys.stderr,
        )


def watch_slurm_queue():
    """On a SLURM run, cancel (and explain) any job of this run that can never start, e.g. one asking
    for more than its partition allows: the executor plugin would wait for it forever
    (smtlib.slurm_watch; SMTLIB_SLURM_WATCH_SECONDS sets the poll interval, 0 turns it off).
    """
    plugin = workflow.executor_plugin
    if plugin is None or plugin.name != "slurm":
        return
    from smtlib.slurm_watch import start_watch

    start_watch(
        workflow.workdir_init,
        lambda message: print(f"smtlib: {message}", file=sys.stderr, flush=True),
    )


# ---------------------------------------------------------------- options rendered for the shell
TM1_SYMMETRIZATION = canonical_symmetrization(config["system"]["tm1_symmetrization"])
# the symmetrized alignments `smtlib train align` writes: TM0's diag-and and TM1's (once each)
ALIGNMENTS = list(dict.fromkeys(["grow-diag-final-and", TM1_SYMMETRIZATION]))
TM1_ALIGNED = f"aligned.{TM1_SYMMETRIZATION}"  # the alignment TM1 is extracted from


def src_lang(wildcards):
    return PAIRS[wildcards.pair].src


def tgt_lang(wildcards):
    return PAIRS[wildcards.pair].tgt


def lm_order(wildcards):
    """LM0 is the 4-gram of §4.2; LM1 (medium, big) stands in for the paper's second LM."""
    return config["system"]["lm_order" if wildcards.index == "0" else "lm1_order"]


def component_files(name, feature_set=None):
    """An input function of `smtlib train assemble`: the stage file ``name`` ("phrase-table.{}.gz",
    "lm.{}.json", ...) of each TM/LM index of the feature set (TM0, LM0; + TM1, LM1), for the rule's
    {fs} or the given ``feature_set``."""

    def files(wildcards):
        fs = FEATURE_SETS[feature_set or wildcards.fs]
        return [work_path(wildcards.pair, name.format(k)) for k in fs.indices()]

    return files


def reordering_file(feature_set=None):
    """An input function: LexicalReordering0's table, for the feature sets with reordering."""

    def files(wildcards):
        fs = FEATURE_SETS[feature_set or wildcards.fs]
        return (
            [work_path(wildcards.pair, "reordering-table.0.gz")]
            if fs.reordering
            else []
        )

    return files


def reordering_option(wildcards, input):
    """`--reordering-table FILE` when the feature set has one."""
    return f"--reordering-table {input.reordering}" if input.reordering else ""


def limit_options():
    """The data limits as options, in a fixed order: the order of the keys in a config file is not a
    parameter of the science (in the file's order, a config written with sorted keys reran every job).
    """
    names = {"train": "--max-train", "dev": "--max-dev", "test": "--max-test"}
    limits = config["limits"]
    return " ".join(
        f"{option} {limits[k]}"
        for k, option in names.items()
        if limits.get(k) is not None
    )


def data_dir_option():
    """Download switch of `smtlib data`. The data's location is not a parameter of the science (every
    file is checked against its SHA-256), so it is not passed here, where a new spelling of the same
    directory would rerun every job ("Params have changed"), but through the environment.
    """
    return "" if config["download"] else "--no-download"


# `smtlib data` reads the local copy from the environment (see data_dir_option); set for local and
# cluster jobs alike, since a cluster job re-reads this file with the same config.
if config["data_dir"] is not None:
    os.environ.update(SMTLIB_DATA_DIR=os.path.abspath(config["data_dir"]))
else:
    os.environ.pop("SMTLIB_DATA_DIR", None)


def bleu_options(section="bleu"):
    opts = f"--tokenize {config[section]['tokenize']}"
    return opts + (" --lowercase" if config[section]["lowercase"] else "")


def scoring_options(wildcards):
    """The options of a k-best tuning step's `smtlib kbest add` and `smtlib tune` (both take them):
    BLEU's, and `--metric` when the run's {setting} names a metric other than BLEU (the pool keeps
    that metric's statistics, the tuner optimizes it). BLEU's runs get what they always had.
    """
    _, metric = setting_parts(wildcards.setting)
    return bleu_options() + ("" if metric == "bleu" else f" --metric {metric}")


def decoder_options(wildcards=None, input=None):
    """smtlib decode's search settings; with decoder.backend moses, also the Moses binary and the
    model's exported moses.ini (the decode rule's ``moses`` input, see ``moses_system``).
    """
    d = config["decoder"]
    opts = f"--stack-size {d['stack_size']} --distortion-limit {d['distortion_limit']} --table-limit {d['table_limit']}"
    if d["search"] != "stack":
        opts += f" --search {d['search']} --pop-limit {d['pop_limit']}"
    if d["backend"] == "moses" and input is not None:
        opts += f" --backend moses --moses-bin {d['moses']} --moses-ini {input.moses}"
    return opts


def moses_system(wildcards):
    """The model's Moses export (written by export_moses) when Moses decodes (backend moses)."""
    if config["decoder"]["backend"] != "moses":
        return []
    return model_dir(wildcards.pair, wildcards.fs, "moses/moses.ini")


def needs_sparse(wildcards):
    """phrase-table.0 carries the sparse field when Big (or Figure 1's over-fitting set, built from
    it) is built for this pair (Medium ignores it)."""
    sparse_runs = any(FEATURE_SETS[fs].sparse for fs in config["feature_sets"]) or (
        config["sweep"]["grid"]
        and config["sweep"]["pair"] == wildcards.pair
        and FEATURE_SETS[config["sweep"]["feature_set"]].sparse
    )
    return "--sparse" if sparse_runs else ""


def tune_settings(wildcards):
    """`--set` options: the method's configured hyper-parameters, those of the method for this
    pair (pair_method_settings), then the run's own {setting}."""
    settings = dict(config["method_settings"].get(wildcards.method, {}))
    settings.update(
        config["pair_method_settings"].get(wildcards.pair, {}).get(wildcards.method, {})
    )
    hyper, _ = setting_parts(wildcards.setting)
    if hyper != DEFAULT:
        key, value = hyper.split("=", 1)
        settings[key] = value
    return " ".join(f"--set {k}={v}" for k, v in settings.items())


def tune_seed(wildcards):
    """A different seed per iteration: the runs differ by their dev sub-sample, not by seed (§4.3)."""
    return config["tuning"]["seed"] * 1000 + int(wildcards.it)


# ---------------------------------------------------------------- input functions: the tuning loop
def dev_src(wildcards):
    return data_path(wildcards.pair, f"dev/s{wildcards.sample}.src")


def dev_ref(wildcards):
    return data_path(wildcards.pair, f"dev/s{wildcards.sample}.ref")


def run_of(wildcards):
    return run_dir(
        wildcards.pair,
        wildcards.fs,
        wildcards.method,
        wildcards.setting,
        wildcards.sample,
    )


def prev_weights(wildcards):
    """Weights decoded at iteration it: the initial weights (§4.2) at it=1, else those tuned at it-1."""
    it = int(wildcards.it)
    if it == 1:
        return model_dir(wildcards.pair, wildcards.fs, "init.weights")
    return f"{run_of(wildcards)}/it{it - 1}/weights"


def first_dir(wildcards):
    """The run's sub-sample's share of the shared first decode."""
    return f"{FIRST.format(pair=wildcards.pair, fs=wildcards.fs)}/s{wildcards.sample}"


def first_pool(wildcards):
    """The pool of iteration 1: the shared first decode's k-best list of the run's sub-sample."""
    return f"{first_dir(wildcards)}/dev.pool"


def kbest_pool(wildcards):
    """The pool of iteration it-1, which iteration it extends (base case: the shared pool of it=1)."""
    it = int(wildcards.it)
    if it == 2:
        return first_pool(wildcards)
    return f"{run_of(wildcards)}/it{it - 1}/dev.pool"


def dev_bleu(wildcards, it):
    """Dev BLEU of the weights decoded at iteration it (it=1: the shared first decode's, except for
    the lattice tuners, which decode their own lattices from iteration 1 on)."""
    if it == 1 and input_kind(wildcards.method) != "lattice":
        return f"{first_dir(wildcards)}/dev.bleu.json"
    return f"{run_of(wildcards)}/it{it}/dev.bleu.json"


def dev_bleus(wildcards):
    """Dev BLEU of the weights of iterations 0..N (decoded at iterations 1..N+1)."""
    return [dev_bleu(wildcards, i) for i in range(1, ITERATIONS + 2)]


def loop_weights(wildcards):
    """Weights 0..N: the initial ones, then the tuner's after each iteration."""
    return [prev_weights(wildcards_at(wildcards, i)) for i in range(1, ITERATIONS + 2)]


def wildcards_at(wildcards, it):
    """``wildcards`` with ``it`` replaced (for calling the loop's input functions at another iteration)."""
    return SimpleNamespace(**{**dict(wildcards.items()), "it": str(it)})


def test_scores(wildcards):
    """The scores of the run's test outputs: each test set's, in each evaluation metric (BLEU's by
    decode_test, the others' by score_test)."""
    return [
        f"{run_of(wildcards)}/test.{t}.{m}.json"
        for t in test_sets(wildcards.pair)
        for m in EVALUATION_METRICS
    ]


def test_arguments(wildcards):
    """`--test NAME=FILE` arguments of a run summary: each test set of the pair, in each metric."""
    return " ".join(
        f"{t}={run_of(wildcards)}/test.{t}.{m}.json"
        for t in test_sets(wildcards.pair)
        for m in EVALUATION_METRICS
    )


def run_meta(wildcards):
    """The run's identity, written into its learning curve and summary."""
    return " ".join(
        f"{k}={getattr(wildcards, k)}"
        for k in ("pair", "fs", "method", "setting", "sample")
    )


def test_src(wildcards):
    return data_path(wildcards.pair, f"test.{wildcards.testset}.src")


def test_ref(wildcards):
    return data_path(wildcards.pair, f"test.{wildcards.testset}.ref")


def table_summaries(wildcards):
    return [f"{r}/summary.json" for r in table_runs(wildcards.table, extended=False)]


def extended_summaries(wildcards):
    return [f"{r}/summary.json" for r in table_runs(wildcards.table, extended=True)]


def _run_outputs(table, extended):
    """The 1-best test outputs of a table's runs: for each run, in the order of its summaries, one
    per test set of the pair (the order of ``table_ref_arguments``)."""
    tests = test_sets(TABLES[table])
    return [f"{r}/test.{t}.1best" for r in table_runs(table, extended) for t in tests]


def table_outputs(wildcards):
    return _run_outputs(wildcards.table, extended=False)


def extended_outputs(wildcards):
    return _run_outputs(wildcards.table, extended=True)


def table_refs(wildcards):
    """The references of the table's test sets (their outputs are concatenated in this order)."""
    pair = TABLES[wildcards.table]
    return [data_path(pair, f"test.{t}.ref") for t in test_sets(pair)]


def _table_initial(table):
    """(feature set, test set, BLEU JSON of the initial weights) for each feature set and test set of
    the table's pair (rule decode_test_initial)."""
    pair = TABLES[table]
    return [
        (fs, t, model_dir(pair, fs, f"initial/test.{t}.bleu.json"))
        for fs in config["feature_sets"]
        for t in test_sets(pair)
    ]


def table_initial_scores(wildcards):
    return [path for _, _, path in _table_initial(wildcards.table)]


def table_initial_arguments(wildcards):
    """`--initial FEATURE_SET:TEST_SET=BLEU_JSON ...` of `smtlib report table`."""
    return " ".join(
        f"{fs}:{t}={path}" for fs, t, path in _table_initial(wildcards.table)
    )


def table_ref_arguments(wildcards):
    """`--test-refs NAME=REF` arguments: each test set of the table's pair with its reference."""
    pair = TABLES[wildcards.table]
    return " ".join(f"{t}={data_path(pair, f'test.{t}.ref')}" for t in test_sets(pair))


def significance_options():
    """The randomization test of every cell against its column's best (`smtlib report table`)."""
    s = config["significance"]
    return (
        f"--ar-shuffles {s['ar_shuffles']} --boot-samples {s['boot_samples']} "
        f"--seed {s['seed']}"
    )


def pair_curves(wildcards):
    runs = runs_of(
        wildcards.pair, TABLE_METHODS, settings=(run_setting(DEFAULT, TABLE_METRIC),)
    )
    return [f"{r}/curve.tsv" for r in runs]


def sweep_summaries(wildcards):
    return [f"{r}/summary.json" for r in sweep_runs()]


def table_methods(wildcards):
    return " ".join(config["methods"])


def extended_methods(wildcards):
    return " ".join(TABLE_METHODS)


def not_applicable_cells():
    """`METHOD:FEATURE_SET` cells shown as n/a (MERT on Big, as in the paper)."""
    return " ".join(
        f"{m}:{fs}" for m, sets in config["not_applicable"].items() for fs in sets
    )


def _tuned_toward():
    """The titles' note of a tuning metric other than BLEU (none for BLEU, the paper's)."""
    return "" if TABLE_METRIC == "bleu" else f", tuned toward {TABLE_METRIC}"


def table_title(wildcards):
    pair = TABLES[wildcards.table]
    return f"{wildcards.table}: {pair}, the methods of Cherry & Foster (2012)'s tables{_tuned_toward()}"


def extended_title(wildcards):
    pair = TABLES[wildcards.table]
    return f"{wildcards.table} extended: {pair}, every method{_tuned_toward()}"


def matrix_arguments(wildcards):
    """`--run TUNING_METRIC=SUMMARY` arguments of the metric matrix."""
    return " ".join(f"{metric}={run}/summary.json" for metric, run in matrix_runs())


def matrix_summaries(wildcards):
    return [f"{run}/summary.json" for _, run in matrix_runs()]


def table_settings():
    """The settings recorded in each table's companion (JSON on one line; quoted in the shell with :q)."""
    keys = (
        "pairs",
        "feature_sets",
        "not_applicable",
        "method_settings",
        "pair_method_settings",
        "subsample",
        "tuning",
        "decoder",
    )
    keys += ("system", "bleu", "limits", "significance")
    settings = {k: config[k] for k in keys}
    # the metrics are recorded where they are not BLEU alone (BLEU-only tables keep their settings)
    if TUNING_METRICS == ["bleu"]:
        settings["tuning"] = {
            k: v for k, v in config["tuning"].items() if k != "metric"
        }
    if EVALUATION_METRICS != ["bleu"]:
        settings["evaluation"] = config["evaluation"]
    return json.dumps(settings, sort_keys=True)


# ---------------------------------------------------------------- input functions: the replay experiment
REPLAY_DATA = "results/replay/data"
REPLAY_NAMES = [f"data/run{i}.NBEST.out" for i in range(1, REPLAY_ITERATIONS + 1)]
REPLAY_NAMES += [
    "reference.0",
    "reference.1",
    "reference.2",
    "moses.ini",
    "truth/results.dat",
]


def replay_file(name):
    """Where the replay data file ``name`` (e.g. ``data/run3.NBEST.out``) is copied."""
    return os.path.join(REPLAY_DATA, "_".join(PurePosixPath(name).parts) + ".gz")


def replay_keys():
    return " ".join(f"replay/{n}" for n in REPLAY_NAMES)


def replay_refs(wildcards=None):
    return [replay_file(f"reference.{i}") for i in range(3)]


def replay_runs(wildcards):
    """Moses's recorded n-best lists of iterations 1..it (the pool of replay iteration it)."""
    return [
        replay_file(f"data/run{i}.NBEST.out") for i in range(1, int(wildcards.it) + 1)
    ]


def replay_prev_weights(wildcards):
    """Base case: the moses.ini weights; else the method's weights after iteration it-1."""
    it = int(wildcards.it)
    if it == 1:
        return "results/replay/init.weights"
    return f"results/replay/{wildcards.method}/it{it - 1}/weights"


def replay_bleus(wildcards):
    return [
        f"results/replay/{m}/it{i}/bleu.json"
        for m in config["replay"]["methods"]
        for i in range(1, config["replay"]["iterations"] + 1)
    ]


def replay_score_arguments(wildcards):
    """`--score METHOD:IT:FILE` arguments of the replay table."""
    return " ".join(
        f"{m}:{i}:results/replay/{m}/it{i}/bleu.json"
        for m in config["replay"]["methods"]
        for i in range(1, config["replay"]["iterations"] + 1)
    )


def replay_method_settings(wildcards):
    settings = config["method_settings"].get(wildcards.method, {})
    return " ".join(f"--set {k}={v}" for k, v in settings.items())


def replay_seed(wildcards):
    return config["replay"]["seed"] * 1000 + int(wildcards.it)


# ---------------------------------------------------------------- lattice and online tuners
# (rules/tune_lattice.smk: lbmert, lbmira; rules/tune_online.smk: mira; rules/overfit.smk: Figure 1's set)
def methods_regex(*kinds):
    """The registered tuners that read ``kinds`` (see input_kind), as a wildcard constraint."""
    names = [m for m in list_tuners() if input_kind(m) in kinds]
    return "|".join(names) if names else "(?!)"


def prev_paths(wildcards):
    """The paths aggregated up to iteration it-1 (lattice tuners); none at it=1."""
    it = int(wildcards.it)
    return [] if it == 1 else [f"{run_of(wildcards)}/it{it - 1}/paths.kbest.gz"]


def paths_option(wildcards, input):
    """`--kbest FILE` for the aggregated paths, when there are any."""
    return f"--kbest {input.paths}" if input.paths else ""


def lattice_tune_threads(wildcards):
    """Threads of a lattice tuning step: lbmert runs its climbs on them (`--jobs`, results unchanged);
    lbmira is sequential."""
    return 2 if wildcards.method == "lbmert" else 1


def tuner_param(wildcards, key):
    """A hyper-parameter of the run's method: its {setting}, else method_settings, else the default."""
    hyper, _ = setting_parts(wildcards.setting)
    if hyper != DEFAULT and hyper.split("=", 1)[0] == key:
        return hyper.split("=", 1)[1]
    settings = config["method_settings"].get(wildcards.method, {})
    return settings.get(key, get_tuner_class(wildcards.method).defaults[key])


def mira_start(wildcards):
    """The weights an online-MIRA epoch starts from: the initial weights, else the last mixture."""
    it = int(wildcards.it)
    if it == 1:
        return model_dir(wildcards.pair, wildcards.fs, "init.weights")
    return f"{run_of(wildcards)}/it{it - 1}/mixed.weights"


def mira_prev_state(wildcards):
    """The mixing state (running average, pseudo-documents) of epoch it-1; none at it=1."""
    it = int(wildcards.it)
    return [] if it == 1 else [f"{run_of(wildcards)}/it{it - 1}/mira.json"]


def state_option(wildcards, input):
    return f"--state {input.state}" if input.state else ""


def mira_shard_results(wildcards):
    """The shard results of epoch it (iterative parameter mixing, McDonald et al. 2010)."""
    shards = int(tuner_param(wildcards, "shards"))
    return [
        f"{run_of(wildcards)}/it{wildcards.it}/mira.shard{k}.json"
        for k in range(shards)
    ]


def lattice_beam():
    return config["tuning"]["lattice_beam"]


# ---------------------------------------------------------------- wildcard constraints
# iterations after the shared first one (a rule-level constraint of the rules of it >= 2)
LATER_ITERATION = r"[2-9]|[1-9]\d+"
# a run's hyper-parameter setting; a {setting} may add @METRIC, a configured tuning metric other
# than BLEU (run_setting); the lattice and online tuners' rules take BLEU's settings only
HYPER_SETTING = DEFAULT + r"|[A-Za-z_][A-Za-z0-9_]*=[-+.A-Za-z0-9_]+"
_OTHER_METRICS = [re.escape(m) for m in TUNING_METRICS if m != "bleu"]
SETTING = f"(?:{HYPER_SETTING})" + (
    f"(?:{re.escape(METRIC_MARK)}(?:{'|'.join(_OTHER_METRICS)}))?"
    if _OTHER_METRICS
    else ""
)


wildcard_constraints:
    pair="|".join(PAIRS),
    fs="|".join(FEATURE_SETS),
    method="|".join(ALL_METHODS),
    setting=SETTING,
    sample=r"\d+",
    it=r"[1-9]\d*",
    index="[01]",
    testset="|".join(sorted({t for p in PAIRS.values() for t in p.tests})),
    table="|".join(TABLES),
    shard=r"\d+",
    evalmetric="|".join(re.escape(m) for m in METRICS if m != "bleu"),
