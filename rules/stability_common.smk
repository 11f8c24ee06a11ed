# Helpers of rules/stability.smk (Hopkins & May 2011, Figures 5 and 6: seed-only replicas and their
# test BLEU at every iteration). Included from the Snakefile after rules/common.smk.

STABILITY = config["stability"]


def stability_targets():
    """The findings, table and figure of every configured stability pair (the target `stability`)."""
    return [
        f"results/stability/{pair}.{ext}"
        for pair in STABILITY["pairs"]
        for ext in ("md", "tsv", "png")
    ]


def iteration_test_bleu(wildcards, it, testset):
    """BLEU of ``testset`` decoded with the weights decoded at iteration ``it``: at it=1 the initial
    weights' (decode_test_initial, shared by every run of the system), later decode_test_iteration's.
    """
    if it == 1:
        return model_dir(
            wildcards.pair, wildcards.fs, f"initial/test.{testset}.bleu.json"
        )
    return f"{run_of(wildcards)}/it{it}/test.{testset}.bleu.json"


def _iteration_tests(wildcards):
    """(test set, BLEU JSON) of the weights 0..N, each test set's in iteration order."""
    return [
        (t, iteration_test_bleu(wildcards, it, t))
        for t in test_sets(wildcards.pair)
        for it in range(1, ITERATIONS + 2)
    ]


def test_curve_scores(wildcards):
    return [path for _, path in _iteration_tests(wildcards)]


def test_curve_arguments(wildcards):
    """`--test NAME=BLEU_JSON ...` of `smtlib report test-curve`: each test set's BLEU of the weights
    0..N, in order (a name given again is the next weights')."""
    return " ".join(f"{t}={path}" for t, path in _iteration_tests(wildcards))


def stability_curves(wildcards):
    """The test curves of a pair's seed-only replicas (smtlib.workflow.runs.stability_runs)."""
    return [
        f"{run}/test_curve.tsv"
        for _, _, _, run in runs.stability_runs(config, wildcards.pair)
    ]


def stability_methods():
    return " ".join(STABILITY["methods"])
