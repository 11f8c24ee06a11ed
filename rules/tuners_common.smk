# Helpers of rules/tune_lattice.smk (lb-mert, lb-mira: the paths aggregated over iterations, the
# lattice beam) and rules/tune_online.smk (online MIRA: each epoch's start, mixing state and shards).
# Included from the Snakefile after rules/common.smk.


# ---------------------------------------------------------------- lattice tuners
def prev_paths(wildcards):
    """The paths aggregated up to iteration it-1 (lattice tuners); none at it=1."""
    it = int(wildcards.it)
    return [] if it == 1 else [f"{run_of(wildcards)}/it{it - 1}/paths.kbest.gz"]


def paths_option(wildcards, input):
    """`--kbest FILE` for the aggregated paths, when there are any."""
    return f"--kbest {input.paths}" if input.paths else ""


def lattice_tune_threads(wildcards):
    return options.lattice_tune_threads(wildcards.method)


def lattice_beam():
    return config["tuning"]["lattice_beam"]


# ---------------------------------------------------------------- online MIRA
def mira_start(wildcards):
    """The weights an online-MIRA epoch starts from: the initial weights, else the last mixture."""
    it = int(wildcards.it)
    if it == 1:
        return initial_weights(wildcards.pair, wildcards.fs)
    return f"{run_of(wildcards)}/it{it - 1}/mixed.weights"


def mira_prev_state(wildcards):
    """The mixing state (running average, pseudo-documents) of epoch it-1; none at it=1."""
    it = int(wildcards.it)
    return [] if it == 1 else [f"{run_of(wildcards)}/it{it - 1}/mira.json"]


def state_option(wildcards, input):
    return f"--state {input.state}" if input.state else ""


def mira_shard_results(wildcards):
    """The shard results of epoch it (iterative parameter mixing, McDonald et al. 2010): the run's
    `shards` (its settings, else the tuner's default)."""
    shards = options.tuner_param(
        config, wildcards.pair, wildcards.method, wildcards.setting, "shards"
    )
    return [
        f"{run_of(wildcards)}/it{wildcards.it}/mira.shard{k}.json"
        for k in range(int(shards))
    ]
