# Helpers of the runs tuned toward a metric other than BLEU (a {setting} ending in @METRIC, see
# smtlib.workflow.runs.run_setting): their kept weights are those with the best dev score in METRIC
# (rules score_first_dev, score_dev and select_best_metric of rules/tune.smk).

_TUNED_TOWARD = "|".join(re.escape(m) for m in TUNING_METRICS if m != "bleu")
METRIC_RUN_SETTING = (
    f"(?:{HYPER_SETTING}){re.escape(METRIC_MARK)}(?:{_TUNED_TOWARD})"
    if _TUNED_TOWARD
    else "(?!)"
)


def run_tuning_metric(wildcards):
    """The metric (or mixture) the run tunes toward, from its {setting} (`smtlib report best --metric`)."""
    return runs.setting_parts(wildcards.setting)[1]


def dev_metric_scores(wildcards):
    """The dev scores of weights 0..N in each metric of the run's tuning metric besides BLEU (BLEU's
    are dev_bleus), next to those BLEU files: each metric's, in iteration order."""
    names = [
        n for n in parse_mixture(run_tuning_metric(wildcards)).names if n != "bleu"
    ]
    return [
        os.path.join(os.path.dirname(dev_bleu(wildcards, i)), f"dev.{name}.json")
        for name in names
        for i in range(1, ITERATIONS + 2)
    ]
