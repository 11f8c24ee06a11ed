# Stage 4: the tuning loop of one run (pair, feature set, method, setting, dev sub-sample), as a path:
# iteration it decodes the dev sub-sample with the weights of it-1 (prev_weights; it=1: the initial
# weights of §4.2) and scores the 1-best, merges the k-best lists of iterations 1..it (kbest_pool)
# and runs one optimizer step; iteration N+1 only decodes, to score the last weights. (Decoding
# and scoring, merging and tuning share a job: fewer, longer jobs; each command logs to the job's log.) The weights with the best
# dev BLEU are kept (Cherry & Foster 2012, §4).


rule decode_dev:
    input:
        model=model_dir("{pair}", "{fs}", "model.yaml"),
        weights=prev_weights,
        src=dev_src,
        ref=dev_ref,
        moses=moses_system,
    output:
        kbest=run_path("it{it}/dev.kbest.gz"),
        best=run_path("it{it}/dev.1best"),
        bleu=run_path("it{it}/dev.bleu.json"),
    params:
        model=model_of,
        k=config["tuning"]["k"],
        search=decoder_options,
        bleu=bleu_options(),
    threads: 2
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("it{it}/decode.log"),
    benchmark:
        run_benchmark("it{it}/decode.tsv")
    resources:
        mem_mb=3000,
    shell:
        "(smtlib decode --model {params.model} --weights {input.weights} --input {input.src} "
        "--kbest {output.kbest} --k {params.k} --output {output.best} --jobs {threads} {params.search} --quiet "
        "&& smtlib bleu --refs {input.ref} --hyps {output.best} {params.bleu} > {output.bleu}.tmp "
        "&& mv {output.bleu}.tmp {output.bleu}) > {log} 2>&1"


rule tune:
    input:
        kbest=kbest_pool,
        ref=dev_ref,
        init=prev_weights,
    output:
        pool=run_path("it{it}/pool.kbest.gz"),
        weights=run_path("it{it}/weights"),
        info=run_path("it{it}/tune.json"),
    params:
        settings=tune_settings,
        seed=tune_seed,
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("it{it}/tune.log"),
    benchmark:
        run_benchmark("it{it}/tune.tsv")
    resources:
        mem_mb=2000,
    shell:
        "(smtlib kbest merge --out {output.pool} {input.kbest} "
        "&& smtlib tune {wildcards.method} --kbest {output.pool} --refs {input.ref} --init {input.init} "
        "--out {output.weights} --info {output.info} --seed {params.seed} {params.settings} {params.bleu}) "
        "> {log} 2>&1"


rule select_best:
    input:
        bleus=dev_bleus,
        weights=loop_weights,
    output:
        weights=run_path("best.weights"),
        curve=run_path("curve.tsv"),
    params:
        meta=run_meta,
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("select_best.log"),
    shell:
        "smtlib report best --dev-bleu {input.bleus} --weights {input.weights} --out-weights {output.weights} "
        "--out-curve {output.curve} --meta {params.meta} > {log} 2>&1"
