# Stage 4b: a finished run restored from its published record (config restore_runs) instead of tuned:
# its kept weights and learning curve are the record's; rules/evaluate.smk then decodes its test sets
# again and its summary must reproduce the record's test BLEU exactly (run_summary --expect).
# A run without a record falls back to the tuning loop's select_best (restore_input).


rule restore_run:
    input:
        restore_input,
    output:
        weights=run_path("best.weights"),
        curve=run_path("curve.tsv"),
    wildcard_constraints:
        setting=HYPER_SETTING,
    params:
        meta=run_meta,
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("restore.log"),
    benchmark:
        run_benchmark("restore.tsv")
    shell:
        "smtlib report restore --record {input} --meta {params.meta} --out-weights {output.weights} "
        "--out-curve {output.curve} > {log} 2>&1"


ruleorder: restore_run > select_best
