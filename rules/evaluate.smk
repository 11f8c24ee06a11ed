# Stage 5: decode each test set with the kept weights and score it (sacrebleu-equal corpus BLEU
# with its signature); one summary per run.


rule decode_test:
    input:
        model=model_dir("{pair}", "{fs}", "model.yaml"),
        weights=rules.select_best.output.weights,
        src=test_src,
    output:
        run_path("test.{testset}.1best"),
    params:
        model=model_of,
        search=decoder_options(),
    threads: 2
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("test.{testset}.decode.log"),
    benchmark:
        run_benchmark("test.{testset}.decode.tsv")
    resources:
        mem_mb=3000,
    shell:
        "smtlib decode --model {params.model} --weights {input.weights} --input {input.src} "
        "--output {output} --jobs {threads} {params.search} --quiet > {log} 2>&1"


rule test_bleu:
    input:
        hyps=rules.decode_test.output,
        ref=test_ref,
    output:
        run_path("test.{testset}.bleu.json"),
    params:
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("test.{testset}.bleu.log"),
    shell:
        "smtlib bleu --refs {input.ref} --hyps {input.hyps} {params.bleu} > {output}.tmp 2> {log} "
        "&& mv {output}.tmp {output}"


rule run_summary:
    input:
        curve=rules.select_best.output.curve,
        tests=test_bleus,
    output:
        run_path("summary.json"),
    params:
        tests=test_arguments,
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("summary.log"),
    shell:
        "smtlib report summary --curve {input.curve} --test {params.tests} --out {output} > {log} 2>&1"
