# The workflow's shared helpers: configuration checks, the experiment's dimensions, the input
# functions of the tuning loop (its base cases) and of the systems, and the wildcard constraints.
# The plain functions behind them (paths, run lists, command-line options) are the importable
# smtlib.workflow (tested in tests/unit/workflow/); here they are bound to `config` and to the jobs'
# wildcards. A stage's own helpers sit next to its rules, in a file of their own (snakemake --lint
# wants no functions among rules): the lattice and online-MIRA tuners' in rules/tuners_common.smk,
# the tables' and figures' in rules/report_common.smk, the replay's in rules/replay_common.smk,
# Simianer's in rules/simianer_common.smk.
# The rules call these by name; no rule holds a lambda or logic of its own.

import difflib
import os
import re
import subprocess
import sys
from types import SimpleNamespace

from snakemake.utils import validate

from smtlib.bleu.metrics import METRICS, parse_mixture
from smtlib.bleu.stats import tokenizers
from smtlib.data.corpora import PAIRS
from smtlib.errors import InputError
from smtlib.report.cmira import METHODS as CMIRA_METHODS
from smtlib.system.align import canonical_symmetrization
from smtlib.system.feature_sets import FEATURE_SETS
from smtlib.system.modeldir import DEFAULT_WEIGHTS
from smtlib.tuners.registry import check_metric, input_kind, list_tuners
from smtlib.workflow import options, paths, runs
from smtlib.workflow.paths import (
    data_path,
    first_benchmark,
    first_log,
    first_path,
    initial_weights,
    model_dir,
    run_benchmark,
    run_dir,
    run_log,
    run_path,
    work_path,
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


def _metric_errors():
    """Lines for the metrics the registries do not know (smtlib.bleu.metrics for the names, the tuner
    registry for which metrics each table method takes, as `smtlib tune --list` shows them).
    """
    errors = []
    methods = list(dict.fromkeys(config["methods"] + config["extended_methods"]))
    for spec in runs.tuning_metrics(config):
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


def restore_directories(pair):
    """The directories of run records config restore_runs gives a pair, in the order searched (one
    directory, or a list: a run's record is the first one's that has it)."""
    value = config["restore_runs"].get(pair) or []
    return [value] if isinstance(value, str) else list(value)


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
    methods |= set(config["stability"]["methods"])
    methods |= set(config["stability"]["method_settings"])
    if config["extended_against"]:
        methods.add(config["extended_against"])
    feature_sets = set(config["feature_sets"]) | {config["sweep"]["feature_set"]}
    feature_sets |= set(config["stability"]["feature_sets"])
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
    if config["decoder"]["backend"] == "command":
        options.check_command_backend(config)
    if config["decoder"]["backend"] == "moses" and not (
        config["decoder"]["moses"] and os.access(config["decoder"]["moses"], os.X_OK)
    ):
        raise ValueError(
            f"config: decoder.backend is moses but decoder.moses ({config['decoder']['moses']!r}) "
            "is not an executable moses or moses2 binary"
        )
    # a seed-only replica's {setting} is seed=N (smtlib.workflow.runs.replica_setting)
    for g in config["sweep"]["grid"]:
        if g["param"] == runs.SEED_PARAM:
            raise ValueError(
                f"config: sweep.grid sweeps {g['method']}'s {runs.SEED_PARAM!r}, which is the optimizer's "
                "seed, not a hyper-parameter (seed-only replicas: the stability section)"
            )
    for sample in config["sweep"]["samples"]:
        if sample > config["subsample"]["count"]:
            raise ValueError(
                f"config: sweep.samples has {sample}, but subsample.count is {config['subsample']['count']}"
            )
    # a misspelled directory would silently tune every run it was meant to restore
    for pair in config["restore_runs"]:
        if pair not in PAIRS:
            raise ValueError(
                f"config: restore_runs names {pair!r}, not a language pair ({', '.join(sorted(PAIRS))})"
            )
    for pair, directory in (
        (p, d) for p in config["restore_runs"] for d in restore_directories(p)
    ):
        if not os.path.isdir(directory) or not any(
            f.endswith(".json") for _, _, files in os.walk(directory) for f in files
        ):
            raise ValueError(
                f"config: restore_runs: {directory!r} ({pair}) is not a directory of run records "
                "(runs/<fs>/<method>/<setting>/s<N>.json, as smtlib report publish writes them)"
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
    stability = config["stability"]
    for pair in [p for p in stability["pairs"] if p not in pairs]:
        print(
            f"config: the stability replicas of {pair} dropped (not in pairs {pairs})",
            file=sys.stderr,
        )
    stability["pairs"] = [p for p in stability["pairs"] if p in pairs]


_drop_unconfigured_pairs()
_check_config()


# ---------------------------------------------------------------- the experiment's dimensions
ITERATIONS = config["tuning"]["iterations"]
SAMPLES = runs.samples(config)  # 0 = the whole dev set (Cherry & Foster §4.3)
TABLE_METHODS = runs.table_methods(config)
TABLES = runs.tables(config)
PAPER_TABLES = runs.PAPER_TABLES
SWEEP_METHODS = [g["method"] for g in config["sweep"]["grid"]]
# every method a run can be of: the tables', the sweep's, the replay's, the stability replicas' and
# those of Tan et al.'s findings on a table's runs (rule cmira_findings)
ALL_METHODS = sorted(
    set(TABLE_METHODS)
    | set(SWEEP_METHODS)
    | set(config["replay"]["methods"])
    | set(config["stability"]["methods"])
    | set(CMIRA_METHODS)
)
DEFAULT = runs.DEFAULT  # the {setting} of runs with the configured hyper-parameters
# the tuning metrics (tuning.metric): the first is the tables' and curves'; with a list, the metric
# matrix has them all; Figure 1's sweep and the replay reproduce the paper's BLEU experiments
TUNING_METRICS = runs.tuning_metrics(config)
TABLE_METRIC = TUNING_METRICS[0]
# the metrics of the test scores: bleu (the tables' score) and others
EVALUATION_METRICS = config["evaluation"]["metrics"]
# between a run's hyper-parameter setting and a tuning metric other than BLEU
METRIC_MARK = runs.METRIC_MARK


def test_sets(pair):
    """The test-set names of a pair (Multi30k: test2016 and test2017; the others: test)."""
    return sorted(PAIRS[pair].tests)


def all_targets():
    """The default target: every table (paper and extended), the figures and the replay table."""
    return runs.all_targets(config)


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


def announce_tables():
    """After a successful run, where its tables are (the first thing a newcomer looks for): each
    configured table that exists, with the companion, findings and paper comparison beside it.
    """
    for table in config["tables"]:
        name = table["name"]
        if not os.path.exists(f"results/{name}.tsv"):
            continue
        beside = [
            f"results/{name}{suffix}"
            for suffix in (".md", "_findings.md", "_vs_paper.tsv")
            if os.path.exists(f"results/{name}{suffix}")
        ]
        print(
            f"smtlib: {table['pair']}: results/{name}.tsv"
            + (f" (beside it {', '.join(beside)})" if beside else ""),
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
    return options.limit_options(config["limits"])


def data_dir_option():
    return options.data_dir_option(config["download"])


# `smtlib data` reads the local copy from the environment (see data_dir_option); set for local and
# cluster jobs alike, since a cluster job re-reads this file with the same config.
if config["data_dir"] is not None:
    os.environ.update(SMTLIB_DATA_DIR=os.path.abspath(config["data_dir"]))
else:
    os.environ.pop("SMTLIB_DATA_DIR", None)


def bleu_options(section="bleu"):
    return options.bleu_options(config[section])


def scoring_options(wildcards):
    return options.scoring_options(config["bleu"], wildcards.setting)


def decoder_options(wildcards=None, input=None):
    """smtlib decode's search settings; with decoder.backend moses, also the Moses binary and the
    model's exported moses.ini (the decode rule's ``moses`` input, see ``moses_system``).
    """
    moses = input is not None and (
        config["decoder"]["backend"] == "moses"
        or options.command_uses_ini(config["decoder"])
    )
    model = input.model if input is not None and "model" in input.keys() else None
    return options.decoder_options(
        config["decoder"], input.moses if moses else None, model
    )


def moses_system(wildcards):
    """The model's Moses export (written by export_moses) when Moses decodes (backend moses), or when
    the decoder command of backend command takes the weights in a moses.ini ({ini})."""
    if config["decoder"]["backend"] != "moses" and not options.command_uses_ini(
        config["decoder"]
    ):
        return []
    return model_dir(wildcards.pair, wildcards.fs, "moses/moses.ini")


def needs_sparse(wildcards):
    """phrase-table.0 carries the sparse field when Big (or Figure 1's over-fitting set, built from
    it) is built for this pair, by the tables, the sweep or the stability replicas (Medium ignores it).
    """
    stability = config["stability"]
    sparse_runs = (
        any(FEATURE_SETS[fs].sparse for fs in config["feature_sets"])
        or (
            config["sweep"]["grid"]
            and config["sweep"]["pair"] == wildcards.pair
            and FEATURE_SETS[config["sweep"]["feature_set"]].sparse
        )
        or (
            wildcards.pair in stability["pairs"]
            and any(FEATURE_SETS[fs].sparse for fs in stability["feature_sets"])
        )
    )
    return "--sparse" if sparse_runs else ""


def tune_settings(wildcards):
    return options.tune_settings(
        config, wildcards.pair, wildcards.method, wildcards.setting
    )


def tune_seed(wildcards):
    """The optimizer's seed at iteration it: from tuning.seed, or a seed-only replica's own (seed=N)."""
    seed = options.run_seed(config["tuning"]["seed"], wildcards.setting)
    return options.tune_seed(seed, wildcards.it)


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
        return initial_weights(wildcards.pair, wildcards.fs)
    return f"{run_of(wildcards)}/it{it - 1}/weights"


def first_dir(wildcards):
    """The run's sub-sample's share of the shared first decode."""
    return paths.first_dir(wildcards.pair, wildcards.fs, wildcards.sample)


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


def run_meta(wildcards):
    """The run's identity, written into its learning curve and summary."""
    return " ".join(
        f"{k}={getattr(wildcards, k)}"
        for k in ("pair", "fs", "method", "setting", "sample")
    )


# ---------------------------------------------------------------- input functions: restored runs
def published_record(wildcards):
    """The run's published record when `restore_runs` has one for it (a run tuned toward BLEU), else
    None: the run is then restored from it (rules/restore.smk) instead of tuned."""
    if not re.fullmatch(HYPER_SETTING, wildcards.setting):
        return None
    for directory in restore_directories(wildcards.pair):
        path = paths.record_path(
            directory,
            wildcards.fs,
            wildcards.method,
            wildcards.setting,
            wildcards.sample,
        )
        if os.path.isfile(path):
            return path
    return None


def restore_input(wildcards):
    """restore_run's input: the record, or a path no rule makes, so that Snakemake falls back to the
    tuning loop (ruleorder restore_run > select_best)."""
    return (
        published_record(wildcards)
        or f"{run_of(wildcards)}/(no published record to restore)"
    )


def published_output(wildcards):
    """restore_test_output's input: the restored run's published output on the test set (see
    restore_outputs), or a path no rule makes (ruleorder restore_test_output > decode_test).
    """
    record = published_record(wildcards) if config["restore_outputs"] else None
    if record:
        path = paths.record_output_path(record, wildcards.testset)
        if os.path.isfile(path):
            return path
    return f"{run_of(wildcards)}/(no published test output to restore)"


def published_initial_output(wildcards):
    """restore_test_initial's input: the initial weights' published output on the test set when
    restore_runs has the pair (the first of its runs/ directories whose sibling initial/ has it), else a
    path no rule makes.
    """
    for directory in (
        restore_directories(wildcards.pair) if config["restore_outputs"] else []
    ):
        path = paths.initial_output_path(directory, wildcards.fs, wildcards.testset)
        if os.path.isfile(path):
            return path
    return model_dir(
        wildcards.pair, wildcards.fs, "initial/(no published test output to restore)"
    )


def expected_record(wildcards):
    """A restored run's record, which its summary must reproduce (none for a tuned run)."""
    record = published_record(wildcards)
    return [record] if record else []


def expect_argument(wildcards):
    record = published_record(wildcards)
    return f"--expect {record}" if record else ""


# ---------------------------------------------------------------- input functions: a run's test sets
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


def test_src(wildcards):
    return data_path(wildcards.pair, f"test.{wildcards.testset}.src")


def test_ref(wildcards):
    return data_path(wildcards.pair, f"test.{wildcards.testset}.ref")


# ---------------------------------------------------------------- wildcard constraints
def methods_regex(*kinds):
    """The registered tuners that read ``kinds`` (see input_kind), as a wildcard constraint."""
    names = [m for m in list_tuners() if input_kind(m) in kinds]
    return "|".join(names) if names else "(?!)"


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
