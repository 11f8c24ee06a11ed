# Stage 5: decode each test set with the kept weights and score it (sacrebleu-equal corpus BLEU
# with its signature; score_test: each other metric of evaluation.metrics, chrF, chrF++, TER, with
# theirs); one summary per run.


rule decode_test:
    input:
        model=model_dir("{pair}", "{fs}", "model.yaml"),
        weights=rules.select_best.output.weights,
        src=test_src,
        ref=test_ref,
        moses=moses_system,
    output:
        best=run_path("test.{testset}.1best"),
        bleu=run_path("test.{testset}.bleu.json"),
    params:
        search=decoder_options,
        bleu=bleu_options(),
    threads: 2
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("test.{testset}.log"),
    benchmark:
        run_benchmark("test.{testset}.decode.tsv")
    resources:
        mem_mb=3000,
    shell:
        "(smtlib decode --model {input.model} --weights {input.weights} --input {input.src} "
        "--output {output.best} --jobs {threads} {params.search} "
        "&& smtlib bleu --refs {input.ref} --hyps {output.best} {params.bleu} > {output.bleu}.tmp "
        "&& mv {output.bleu}.tmp {output.bleu}) > {log} 2>&1"


# the tuning loop's starting point scored like the tuned weights (same decoder and BLEU settings): the
# tables' companions put every cell beside it, so a table says whether tuning helped at all
rule decode_test_initial:
    input:
        model=model_dir("{pair}", "{fs}", "model.yaml"),
        weights=rules.init_weights.output,
        src=test_src,
        ref=test_ref,
        moses=moses_system,
    output:
        best=model_dir("{pair}", "{fs}", "initial/test.{testset}.1best"),
        bleu=model_dir("{pair}", "{fs}", "initial/test.{testset}.bleu.json"),
    params:
        search=decoder_options,
        bleu=bleu_options(),
    threads: 2
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/{fs}/initial.test.{testset}.log",
    benchmark:
        "results/benchmarks/systems/{pair}/{fs}/initial.test.{testset}.tsv"
    resources:
        mem_mb=3000,
    shell:
        "(smtlib decode --model {input.model} --weights {input.weights} --input {input.src} "
        "--output {output.best} --jobs {threads} {params.search} "
        "&& smtlib bleu --refs {input.ref} --hyps {output.best} {params.bleu} > {output.bleu}.tmp "
        "&& mv {output.bleu}.tmp {output.bleu}) > {log} 2>&1"


rule score_test:
    input:
        best=rules.decode_test.output.best,
        ref=test_ref,
    output:
        run_path("test.{testset}.{evalmetric}.json"),
    params:
        bleu=bleu_options(),  # --lowercase applies to chrF too; TER lowercases, as sacrebleu's
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("test.{testset}.{evalmetric}.log"),
    shell:
        "(smtlib score --metric {wildcards.evalmetric} --refs {input.ref} --hyps {input.best} {params.bleu} "
        "> {output}.tmp && mv {output}.tmp {output}) > {log} 2>&1"


rule run_summary:
    input:
        curve=rules.select_best.output.curve,
        tests=test_scores,
        record=expected_record,
    output:
        run_path("summary.json"),
    params:
        tests=test_arguments,
        expect=expect_argument,
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("summary.log"),
    benchmark:
        run_benchmark("summary.tsv")
    shell:
        "smtlib report summary --curve {input.curve} --test {params.tests} {params.expect} --out {output} "
        "> {log} 2>&1"
