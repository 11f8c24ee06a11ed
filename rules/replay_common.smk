# Helpers of rules/replay.smk (the replay of Moses's recorded n-best lists): where the copied data
# lies, the pool of each iteration and the loop's base case. Included from the Snakefile after
# rules/common.smk.

from smtlib.workflow.paths import REPLAY_NAMES, replay_file


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
    """`--set` options: the method's configured hyper-parameters (the replay has no pair)."""
    return options.set_options(config["method_settings"].get(wildcards.method, {}))


def replay_seed(wildcards):
    return options.tune_seed(config["replay"]["seed"], wildcards.it)
