# Helpers of rules/simianer.smk (Simianer, Riezler & Dyer 2012, Table 2): the configuration check, path
# builders and input functions of the sharded loop. Included from the Snakefile after rules/common.smk.

import glob

SIM = config["simianer"]
SIM_ROOT = "results/simianer/{pair}"
# Everything that depends on the random shard split (its seed): the shards, the jackknife folds and
# their models. A run directory carries the split it trained on (Algorithm 1 on dev has no random
# choice: its runs sit under the configured split only).
SIM_SPLIT = "results/simianer/{pair}/split{split}"
SIM_RUN = "results/simianer/{pair}/{fgroup}/{algo}-{tdata}/split{split}"
# the files of a published run record (smtlib report publish-simianer) that a restore reads
SIM_RECORD_FILES = ("chosen.json", "test.bleu.json", "test.out.gz")


# ---------------------------------------------------------------- helpers


def sim_shard_files(ext):
    """The ``ext`` file ("src", "ref" or "ids") of every training shard, in shard order."""
    return [f"{SIM_SPLIT}/shards/shard{z}.{ext}" for z in range(SIM["shards"])]


def sim_fold_path(name):
    """A file of jackknife fold f{fold} of a split: its work files ("work/...") and medium model
    ("medium/...")."""
    return f"{SIM_SPLIT}/folds/f{{fold}}/{name}"


def sim_fold_log(name):
    return f"logs/{SIM_SPLIT.removeprefix('results/')}/folds/f{{fold}}/{name}"


def sim_fold_benchmark(name):
    return f"results/benchmarks/{SIM_SPLIT.removeprefix('results/')}/folds/f{{fold}}/{name}"


def sim_models_path(name):
    """A file of a feature group's model: the full-corpus (model "full") or a fold's ("split{s}/f{k}")."""
    return f"{SIM_ROOT}/models/{{model}}/{{fgroup}}/{name}"


def sim_path(name):
    """A file of a run directory, as a wildcard pattern (``sim_path("ep{epoch}/weights")``)."""
    return f"{SIM_RUN}/{name}"


def sim_log(name):
    return f"logs/{SIM_RUN.removeprefix('results/')}/{name}"


def sim_benchmark(name):
    return f"results/benchmarks/{SIM_RUN.removeprefix('results/')}/{name}"


def sim_folds():
    return SIM["folds"] or SIM["shards"]


def sim_shard_count(wildcards):
    """Shards of a run: the training shards, or the dev set as one shard (Algorithm 1 on dev)."""
    return SIM["shards"] if wildcards.tdata == "train" else 1


def sim_group_templates(name):
    for group in SIM["groups"]:
        if group["name"] == name:
            return group["templates"]
    raise ValueError(f"config: simianer group {name!r} is not in simianer.groups")


def sim_runs():
    """(algorithm, data, group) of every configured run, in the configured order."""
    return [(r["algorithm"], r["data"], g) for r in SIM["runs"] for g in r["groups"]]


def sim_replica_runs():
    """(algorithm, data, group, split seed) of every replica: the configured runs again on the shard
    splits of ``simianer.replicas.seeds``."""
    replicas = SIM.get("replicas") or {}
    return [
        (r["algorithm"], r["data"], g, seed)
        for seed in replicas.get("seeds", [])
        for r in replicas.get("runs", [])
        for g in r["groups"]
    ]


def sim_run_dir(algo, tdata, fgroup, split=None):
    split = SIM["seed"] if split is None else split
    return SIM_RUN.format(
        pair=SIM["pair"], fgroup=fgroup, algo=algo, tdata=tdata, split=split
    )


def _sim_check_config():
    for algo, tdata, fgroup in sim_runs():
        sim_group_templates(fgroup)
        if (algo == "sgd") != (tdata == "dev"):
            raise ValueError(
                f"config: simianer run {algo} on {tdata}: Algorithm 1 (sgd) tunes on dev, "
                "the distributed algorithms (mixsgd, itermixsgd, iterselsgd) on the training shards"
            )
    configured = set(sim_runs())
    for algo, tdata, fgroup, seed in sim_replica_runs():
        if (algo, tdata, fgroup) not in configured:
            raise ValueError(
                f"config: simianer replica {algo} on {tdata} with {fgroup} is not a run of simianer.runs"
            )
        if tdata == "dev":
            raise ValueError(
                f"config: simianer replica {algo} on dev: Algorithm 1 on the dev set has no random "
                "choice (no shard split), so every replica would repeat the same bytes"
            )
        if seed == SIM["seed"]:
            raise ValueError(
                f"config: simianer.replicas.seeds repeats the table's split seed {seed}"
            )
    baseline = SIM["batch_baseline"]
    if baseline and (baseline not in list_tuners() or input_kind(baseline) != "kbest"):
        raise ValueError(
            f"config: simianer.batch_baseline {baseline!r} is not a tuner of k-best lists "
            "(smtlib tune --list)"
        )
    records = SIM.get("restore_runs")
    found = (
        glob.glob(os.path.join(records, "*", "*-*", "split*", "chosen.json"))
        if records
        else []
    )
    if records and not found:
        raise ValueError(
            f"config: simianer.restore_runs {records!r} holds no run record "
            "(<group>/<algo>-<data>/split<seed>/chosen.json, as smtlib report publish-simianer writes them)"
        )
    # an incomplete record is an error, not a silent run of the loop instead
    for chosen in found:
        missing = [
            name
            for name in SIM_RECORD_FILES
            if not os.path.isfile(os.path.join(os.path.dirname(chosen), name))
        ]
        if missing:
            raise ValueError(
                f"config: simianer.restore_runs: the record {os.path.dirname(chosen)} has no "
                f"{', '.join(missing)}"
            )
    tests = test_sets(SIM["pair"])
    for key in ("devtest", "test"):
        if SIM[key] not in tests:
            raise ValueError(
                f"config: simianer.{key} {SIM[key]!r} is not a test set of {SIM['pair']} ({tests})"
            )


_sim_check_config()


def sim_model(pair, model, fgroup):
    """model.yaml of the full-corpus (model "full") or a fold's ("split{s}/f{k}") model of a feature
    group."""
    if sim_group_templates(fgroup):
        return sim_models_path("model.yaml").format(
            pair=pair, model=model, fgroup=fgroup
        )
    return sim_medium_model(pair, model)


def sim_medium_model(pair, model):
    """model.yaml of the full-corpus (model "full") or a fold's ("split{s}/f{k}") medium model."""
    if model == "full":
        return model_dir(pair, "medium", "model.yaml")
    split_name, fold_name = model.split("/")
    split, fold = split_name.removeprefix("split"), fold_name.removeprefix("f")
    return sim_fold_path("medium/model.yaml").format(pair=pair, split=split, fold=fold)


def sim_medium_of(wildcards):
    """The medium model a feature group's templates are added to."""
    return sim_medium_model(wildcards.pair, wildcards.model)


def sim_fold_lm_files(wildcards, ext):
    """A fold's own LM files (LM0, LM1 of the medium set) when simianer.fold_lms, else none."""
    if not SIM["fold_lms"]:
        return []
    root = SIM_SPLIT.format(pair=wildcards.pair, split=wildcards.split)
    return [
        f"{root}/folds/f{wildcards.fold}/lm/lm.{k}.{ext}"
        for k in FEATURE_SETS["medium"].indices()
    ]


def sim_fold_lm_inputs(ext):
    """An input function: the LM files (``ext`` arpa.gz or json) a fold's medium model uses, the fold's own
    (simianer.fold_lms) or else the full corpus's."""
    full = component_files(f"lm.{{}}.{ext}", "medium")

    def files(wildcards):
        return sim_fold_lm_files(wildcards, ext) or full(wildcards)

    return files


def sim_groups_option(wildcards):
    return " ".join(sim_group_templates(wildcards.fgroup))


def sim_full_model(wildcards):
    return sim_model(wildcards.pair, "full", wildcards.fgroup)


def sim_shard_model(wildcards):
    """Dev (Algorithm 1): the full model; a training shard: the model of its jackknife fold."""
    if wildcards.tdata == "dev":
        return sim_full_model(wildcards)
    fold = int(wildcards.shard) % sim_folds()
    return sim_model(
        wildcards.pair, f"split{wildcards.split}/f{fold}", wildcards.fgroup
    )


def sim_run_of(wildcards):
    return SIM_RUN.format(**dict(wildcards.items()))


def sim_averaging(algo):
    """Algorithms 1 and 2: every shard goes on from its own weights (mixing only for the output)."""
    return algo in ("sgd", "mixsgd")


def sim_shard_start(wildcards):
    """The weights a shard's epoch starts from: zero at epoch 1, then the shard's own weights
    (Algorithms 1, 2) or the mixed vector (Algorithms 3, 4) of the previous epoch."""
    run = sim_run_of(wildcards)
    epoch = int(wildcards.epoch)
    if epoch == 1:
        return f"{run}/ep0/next.weights"
    if sim_averaging(wildcards.algo):
        return f"{run}/ep{epoch - 1}/shard{wildcards.shard}.weights"
    return f"{run}/ep{epoch - 1}/next.weights"


def sim_shard_src(wildcards):
    if wildcards.tdata == "dev":
        return data_path(wildcards.pair, "dev.src")
    return f"{SIM_SPLIT.format(pair=wildcards.pair, split=wildcards.split)}/shards/shard{wildcards.shard}.src"


def sim_shard_ref(wildcards):
    if wildcards.tdata == "dev":
        return data_path(wildcards.pair, "dev.ref")
    return f"{SIM_SPLIT.format(pair=wildcards.pair, split=wildcards.split)}/shards/shard{wildcards.shard}.ref"


def sim_fold_ids(wildcards):
    """The .ids files of the shards of fold f{fold} (left out of its phrase tables)."""
    ids = [
        f.format(pair=wildcards.pair, split=wildcards.split)
        for f in sim_shard_files("ids")
    ]
    return [
        path for z, path in enumerate(ids) if z % sim_folds() == int(wildcards.fold)
    ]


def sim_epoch_shards(wildcards):
    run = sim_run_of(wildcards)
    return [
        f"{run}/ep{wildcards.epoch}/shard{z}.weights"
        for z in range(sim_shard_count(wildcards))
    ]


def sim_prev_state(wildcards):
    epoch = int(wildcards.epoch)
    return [] if epoch == 1 else [f"{sim_run_of(wildcards)}/ep{epoch - 1}/mix.json"]


def sim_state_option(wildcards, input):
    return f"--state {input.state}" if input.state else ""


def sim_select_option(wildcards):
    if wildcards.algo != "iterselsgd":
        return ""
    return f"--k {SIM['select_k']} --k-fraction {SIM['select_fraction']}"


def sim_record_dir(wildcards):
    """The published record of a run (simianer.restore_runs), or "" when it has none."""
    root = SIM.get("restore_runs")
    if not root:
        return ""
    record = os.path.join(
        root,
        wildcards.fgroup,
        f"{wildcards.algo}-{wildcards.tdata}",
        f"split{wildcards.split}",
    )
    return record if os.path.isfile(os.path.join(record, "chosen.json")) else ""


def sim_restore_inputs(wildcards):
    """simianer_restore's inputs: the run's record files and the test references, or a path no rule
    makes, so that Snakemake runs the loop instead (ruleorder simianer_restore > simianer_choose).
    """
    record = sim_record_dir(wildcards)
    if not record:
        return {"record": f"{sim_run_of(wildcards)}/(no published record to restore)"}
    chosen, bleu, best = (f"{record}/{name}" for name in SIM_RECORD_FILES)
    return {
        "chosen": chosen,
        "best": best,
        "bleu": bleu,
        "ref": sim_test_ref(wildcards),
    }


def sim_epoch_files(wildcards):
    run = sim_run_of(wildcards)
    return [
        f"{run}/ep{e}/{name}"
        for e in range(1, SIM["epochs"] + 1)
        for name in ("weights", "mix.json", "devtest.bleu.json")
    ]


def sim_epoch_dirs(wildcards):
    run = sim_run_of(wildcards)
    return " ".join(f"{run}/ep{e}" for e in range(1, SIM["epochs"] + 1))


def sim_devtest_src(wildcards):
    return data_path(wildcards.pair, f"test.{SIM['devtest']}.src")


def sim_devtest_ref(wildcards):
    return data_path(wildcards.pair, f"test.{SIM['devtest']}.ref")


def sim_test_src(wildcards):
    return data_path(wildcards.pair, f"test.{SIM['test']}.src")


def sim_test_ref(wildcards):
    return data_path(wildcards.pair, f"test.{SIM['test']}.ref")


def sim_table_runs():
    """(algorithm, data, group, run directory) of the table's runs, then of their replicas."""
    return [(a, d, g, sim_run_dir(a, d, g)) for a, d, g in sim_runs()] + [
        (a, d, g, sim_run_dir(a, d, g, seed)) for a, d, g, seed in sim_replica_runs()
    ]


def sim_table_inputs(wildcards):
    return [
        f"{run}/{name}"
        for _, _, _, run in sim_table_runs()
        for name in ("chosen.json", "test.bleu.json", "test.out")
    ]


def sim_baseline_runs():
    """The run directories of simianer.batch_baseline (the tables' protocol on the full medium system)."""
    method = SIM["batch_baseline"]
    if not method:
        return []
    return [
        run_dir(SIM["pair"], "medium", method, "default", sample)
        for sample in range(config["subsample"]["count"] + 1)
    ]


def sim_run_options(wildcards):
    """`--run` items of `smtlib sgd table`/`plot`: a name given twice has replicas."""
    return " ".join(f"{a}:{d}:{g}={run}" for a, d, g, run in sim_table_runs())


def sim_baseline_options(wildcards):
    runs = sim_baseline_runs()
    if not runs:
        return ""
    name = f"{SIM['batch_baseline']}:dev:default"
    return (
        f"--devtest-name {SIM['devtest']} --test-name {SIM['test']} --baseline "
        + " ".join(f"{name}={run}" for run in runs)
    )


def sim_baseline_inputs(wildcards):
    return [
        f"{run}/{name}"
        for run in sim_baseline_runs()
        for name in ("summary.json", "best.weights", f"test.{SIM['test']}.1best")
    ]


def sim_table_refs(wildcards):
    return data_path(SIM["pair"], f"test.{SIM['test']}.ref")


def sim_plot_inputs(wildcards):
    return [f"{sim_run_dir(a, d, g)}/chosen.json" for a, d, g in sim_runs()]
