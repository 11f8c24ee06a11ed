# Stage 8: Hopkins & May (2011), Figures 5 and 6 on real systems. Seed-only replicas: each method of
# `stability.methods` tuned on the full dev set once per seed of `stability.seeds`, with the
# configured hyper-parameters (and `stability.method_settings`: PRO's Psi = 0.1, H&M §5.4.3); the
# runs are the tuning loop of rules/tune.smk at the {setting} seed=N (smtlib.workflow.runs), so
# they differ from each other only in `smtlib tune --seed`. Every iteration's weights also decode
# the test sets (decode_test_iteration, decode_test's command on other weights; the initial
# weights' test scores are decode_test_initial's), each run's dev and test BLEU by iteration are
# one curve (test_curve), and the curves of a pair give its findings: the SD of the final test
# BLEU per method against PRO's (F-test), the steadiness of the test curves against PRO's (exact
# permutation test), a figure like H&M's Figure 5 (smtlib.report.stability).
#
#   snakemake --cores 2 --config data_dir=../shared/data -- stability


# the test sets decoded with the weights decoded at iteration it (it >= 2; it=1 is the initial weights)
use rule decode_test as decode_test_iteration with:
    input:
        model=model_dir("{pair}", "{fs}", "model.yaml"),
        weights=prev_weights,
        src=test_src,
        ref=test_ref,
        moses=moses_system,
    output:
        best=run_path("it{it}/test.{testset}.1best"),
        bleu=run_path("it{it}/test.{testset}.bleu.json"),
    wildcard_constraints:
        it=LATER_ITERATION,
    log:
        run_log("it{it}/test.{testset}.log"),
    benchmark:
        run_benchmark("it{it}/test.{testset}.decode.tsv")


rule test_curve:
    input:
        curve=rules.select_best.output.curve,
        tests=test_curve_scores,
    output:
        run_path("test_curve.tsv"),
    params:
        tests=test_curve_arguments,
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("test_curve.log"),
    shell:
        "smtlib report test-curve --curve {input.curve} --test {params.tests} --out {output} "
        "> {log} 2>&1"


rule stability_findings:
    input:
        stability_curves,
    output:
        md=report(
            "results/stability/{pair}.md",
            caption="../config/report/stability.rst",
            category="Findings",
            subcategory="stability",
        ),
        tsv="results/stability/{pair}.tsv",
        png=report(
            "results/stability/{pair}.png",
            caption="../config/report/stability.rst",
            category="Figures",
        ),
    params:
        methods=stability_methods(),
        drop=STABILITY["drop"],
        permutations=STABILITY["permutations"],
        seed=STABILITY["test_seed"],
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/stability/{pair}.log",
    benchmark:
        "results/benchmarks/stability/{pair}.tsv"
    shell:
        "smtlib report stability --curves {input} --methods {params.methods} --drop {params.drop} "
        "--permutations {params.permutations} --seed {params.seed} --out {output.md} "
        "--tsv {output.tsv} --figure {output.png} > {log} 2>&1"


# the target: every configured pair's findings, table and figure
rule stability:
    input:
        stability_targets(),
