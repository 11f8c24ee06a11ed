# Helpers of rules/tables.smk and rules/figures.smk (the stages that run `smtlib report`): each
# table's runs, their outputs and starting points, and the options of the tables' commands.
# Included from the Snakefile after rules/common.smk.


def table_summaries(wildcards):
    return [f"{r}/summary.json" for r in runs.table_runs(config, wildcards.table)]


def extended_summaries(wildcards):
    return [
        f"{r}/summary.json"
        for r in runs.table_runs(config, wildcards.table, extended=True)
    ]


def _run_outputs(table, extended):
    """The 1-best test outputs of a table's runs: for each run, in the order of its summaries, one
    per test set of the pair (the order of ``table_ref_arguments``)."""
    tests = test_sets(TABLES[table])
    return [
        f"{r}/test.{t}.1best"
        for r in runs.table_runs(config, table, extended)
        for t in tests
    ]


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
    return options.significance_options(config["significance"])


def pair_curves(wildcards):
    """The curves of a pair's paper-table runs (curves_<pair>.png): no run of the extended
    methods (the extended table's, and curves_<pair>_extended.png's)."""
    return method_curves(wildcards.pair, config["methods"])


def pair_curves_extended(wildcards):
    return method_curves(wildcards.pair, TABLE_METHODS)


def method_curves(pair, methods):
    setting = runs.run_setting(DEFAULT, TABLE_METRIC)
    pair_runs = runs.runs_of(config, pair, methods, settings=(setting,))
    return [f"{r}/curve.tsv" for r in pair_runs]


def sweep_summaries(wildcards):
    return [f"{r}/summary.json" for r in runs.sweep_runs(config)]


def table_methods(wildcards):
    return " ".join(config["methods"])


def extended_methods(wildcards):
    return " ".join(TABLE_METHODS)


def not_applicable_cells():
    return options.not_applicable_cells(config["not_applicable"])


def _tuned_toward():
    """The titles' note of a tuning metric other than BLEU (none for BLEU, the paper's)."""
    return "" if TABLE_METRIC == "bleu" else f", tuned toward {TABLE_METRIC}"


def table_title(wildcards):
    pair = TABLES[wildcards.table]
    return f"{wildcards.table}: {pair}, the methods of Cherry & Foster (2012)'s tables{_tuned_toward()}"


def extended_title(wildcards):
    pair = TABLES[wildcards.table]
    extra = [m for m in TABLE_METHODS if m not in config["methods"]]
    rows = (
        f"the paper's methods and {', '.join(extra)}"
        if extra
        else "the paper's methods"
    )
    return f"{wildcards.table} extended: {pair}, {rows}{_tuned_toward()}"


def extended_against(wildcards):
    """`--against METHOD` of the extended tables (config extended_against), if it is one of their rows."""
    method = config["extended_against"]
    return f"--against {method}" if method in TABLE_METHODS else ""


def matrix_arguments(wildcards):
    """`--run TUNING_METRIC=SUMMARY` arguments of the metric matrix."""
    return " ".join(
        f"{metric}={run}/summary.json" for metric, run in runs.matrix_runs(config)
    )


def matrix_summaries(wildcards):
    return [f"{run}/summary.json" for _, run in runs.matrix_runs(config)]


def table_settings():
    return options.table_settings(config)


# ---------------------------------------------------------------- Tan et al. (2013): cmira's findings
def cmira_runs(table):
    """The table's runs of cmira, kb-mira and kb-mert (smtlib.report.cmira.METHODS): the extended
    table's run directories of those methods, every feature set and sub-sample they apply to.
    """
    setting = runs.run_setting(DEFAULT, TABLE_METRIC)
    return runs.runs_of(config, TABLES[table], CMIRA_METHODS, settings=(setting,))


def cmira_summaries(wildcards):
    return [f"{r}/summary.json" for r in cmira_runs(wildcards.table)]


def cmira_outputs(wildcards):
    """Each run's 1-best test outputs, one per test set in the order of ``table_ref_arguments``."""
    tests = test_sets(TABLES[wildcards.table])
    return [f"{r}/test.{t}.1best" for r in cmira_runs(wildcards.table) for t in tests]


def _restored(run):
    """Whether a run directory of cmira_runs is restored from its published record (restore_runs)."""
    pair, fs, method, setting, sample = run.split("/")[2:7]
    fields = dict(pair=pair, fs=fs, method=method, setting=setting, sample=sample[1:])
    return published_record(SimpleNamespace(**fields)) is not None


def cmira_tune_info(wildcards):
    """Every tuning step's `smtlib tune --info`: each tuned run's iterations 1..N, in the summaries'
    order (a restored run's steps are its record's, cmira_restored_steps)."""
    return [
        f"{r}/it{it}/tune.json"
        for r in cmira_runs(wildcards.table)
        if not _restored(r)
        for it in range(1, ITERATIONS + 1)
    ]


def cmira_benchmarks(wildcards):
    """Every tuning step's benchmark file (rules tune_first and tune), in the order of cmira_tune_info."""
    return [
        paths.Tree(r).benchmark(f"it{it}/tune.tsv")
        for r in cmira_runs(wildcards.table)
        if not _restored(r)
        for it in range(1, ITERATIONS + 1)
    ]


def cmira_restored_steps(wildcards):
    """The tuning steps of the runs restored from their records (rule restore_run)."""
    return [f"{r}/steps.json" for r in cmira_runs(wildcards.table) if _restored(r)]


def cmira_title(wildcards):
    return f"{wildcards.table} ({TABLES[wildcards.table]})"
