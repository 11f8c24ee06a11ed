# Stage 4b: a finished run restored from its published record (config restore_runs) instead of tuned:
# its kept weights, learning curve and tuning steps (for Tan et al.'s costs, rule cmira_findings) are
# the record's, once its steps' hyper-parameters are checked against the run's settings (a record of
# other settings is refused); its published test outputs are scored
# (restore_test_output; restore_outputs: false, or a record without them, decodes the test sets again,
# rules/evaluate.smk) and its summary must reproduce the record's test BLEU exactly (run_summary
# --expect). A run without a record falls back to the tuning loop's select_best (restore_input).


rule restore_run:
    input:
        restore_input,
    output:
        weights=run_path("best.weights"),
        curve=run_path("curve.tsv"),
        steps=run_path("steps.json"),
    wildcard_constraints:
        setting=HYPER_SETTING,
    params:
        meta=run_meta,
        settings=tune_settings,
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("restore.log"),
    benchmark:
        run_benchmark("restore.tsv")
    shell:
        "smtlib report restore --record {input} --meta {params.meta} {params.settings} "
        "--out-weights {output.weights} --out-curve {output.curve} --out-steps {output.steps} > {log} 2>&1"


ruleorder: restore_run > select_best


# the published outputs scored with the same BLEU settings as a decode's (rules/evaluate.smk)
rule restore_test_output:
    input:
        best=published_output,
        ref=test_ref,
    output:
        best=run_path("test.{testset}.1best"),
        bleu=run_path("test.{testset}.bleu.json"),
    wildcard_constraints:
        setting=HYPER_SETTING,
    params:
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("test.{testset}.restore.log"),
    shell:
        "(gzip -dc {input.best} > {output.best} "
        "&& smtlib bleu --refs {input.ref} --hyps {output.best} {params.bleu} > {output.bleu}.tmp "
        "&& mv {output.bleu}.tmp {output.bleu}) > {log} 2>&1"


rule restore_test_initial:
    input:
        best=published_initial_output,
        ref=test_ref,
    output:
        best=model_dir("{pair}", "{fs}", "initial/test.{testset}.1best"),
        bleu=model_dir("{pair}", "{fs}", "initial/test.{testset}.bleu.json"),
    params:
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/{fs}/initial.test.{testset}.restore.log",
    shell:
        "(gzip -dc {input.best} > {output.best} "
        "&& smtlib bleu --refs {input.ref} --hyps {output.best} {params.bleu} > {output.bleu}.tmp "
        "&& mv {output.bleu}.tmp {output.bleu}) > {log} 2>&1"


ruleorder: restore_test_output > decode_test
ruleorder: restore_test_initial > decode_test_initial
