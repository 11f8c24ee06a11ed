# Stage 4: the tuning loop of one run (pair, feature set, method, setting, dev sub-sample), as a path.
#
# Iteration 1 of every run of a (pair, feature set) decodes with the same initial weights (§4.2),
# and a dev sub-sample is a subset of the dev set; so the full dev set is decoded once with them
# (decode_first: k-best and 1-best) and each sub-sample's
# iteration-1 files are cut from it (first_sample: k-best and 1-best sliced by the sub-sample's ids,
# the 1-best's BLEU, and the binary pool of iteration 1 with its BLEU statistics), shared by every
# method and setting. Iteration it >= 2 decodes the run's sub-sample with the weights of it-1
# (prev_weights) and scores the 1-best; every iteration adds its k-best list to the pool of it-1
# (kbest_pool; smtlib kbest add parses only the new list and scores only its new hypotheses) and
# runs one optimizer step on it; iteration N+1 only decodes, to score the last weights. A run's pools
# are temporary: each is read by the next iteration, then removed (extending a finished run by more
# iterations recomputes them). The weights with the best dev BLEU are kept (Cherry & Foster 2012, §4).
# A run whose {setting} ends in @METRIC (tuning.metric, see run_setting) tunes toward that metric:
# the tuning steps' `params.bleu` (scoring_options) adds `--metric METRIC` to `smtlib kbest add`
# (the pool keeps that metric's statistics; iteration 1's shared pool has BLEU's only, and the tuner
# computes the metric's for it) and to `smtlib tune`. (The parameter keeps its name so that BLEU's
# runs keep their recorded commands.) Such a run keeps the weights with the best dev score in its
# tuning metric (the lowest TER for TER): score_first_dev and score_dev score each iteration's dev
# 1-best with each of its metrics besides BLEU, and select_best_metric picks by them; BLEU's runs keep
# select_best, its command unchanged.


include: "tune_metric.smk"


rule decode_first:
    input:
        model=model_dir("{pair}", "{fs}", "model.yaml"),
        weights=initial_weights("{pair}", "{fs}"),
        src=data_path("{pair}", "dev.src"),
        moses=moses_system,
    output:
        kbest=first_path("dev.kbest.gz"),
        best=first_path("dev.1best"),
    params:
        k=config["tuning"]["k"],
        search=decoder_options,
    threads: 2
    conda:
        "../envs/smtlib.yaml"
    log:
        first_log("decode.log"),
    benchmark:
        first_benchmark("decode.tsv")
    resources:
        mem_mb=3000,
    shell:
        "smtlib decode --model {input.model} --weights {input.weights} --input {input.src} "
        "--kbest {output.kbest} --k {params.k} --output {output.best} --jobs {threads} {params.search} "
        "> {log} 2>&1"


rule first_sample:
    input:
        kbest=rules.decode_first.output.kbest,
        best=rules.decode_first.output.best,
        ids=data_path("{pair}", "dev/s{sample}.ids"),
        ref=dev_ref,
    output:
        kbest=first_path("s{sample}/dev.kbest.gz"),
        best=first_path("s{sample}/dev.1best"),
        bleu=first_path("s{sample}/dev.bleu.json"),
        pool=first_path("s{sample}/dev.pool"),
    params:
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        first_log("s{sample}/first_sample.log"),
    benchmark:
        first_benchmark("s{sample}/first_sample.tsv")
    resources:
        mem_mb=2000,
    shell:
        "(smtlib kbest slice --ids {input.ids} --kbest {input.kbest} {output.kbest} "
        "--lines {input.best} {output.best} "
        "&& smtlib bleu --refs {input.ref} --hyps {output.best} {params.bleu} > {output.bleu}.tmp "
        "&& mv {output.bleu}.tmp {output.bleu} "
        "&& smtlib kbest add --kbest {output.kbest} --refs {input.ref} {params.bleu} --out {output.pool}) "
        "> {log} 2>&1"


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
    wildcard_constraints:
        it=LATER_ITERATION,
        method=methods_regex("kbest", "online"),
    params:
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
        "(smtlib decode --model {input.model} --weights {input.weights} --input {input.src} "
        "--kbest {output.kbest} --k {params.k} --output {output.best} --jobs {threads} {params.search} "
        "&& smtlib bleu --refs {input.ref} --hyps {output.best} {params.bleu} > {output.bleu}.tmp "
        "&& mv {output.bleu}.tmp {output.bleu}) > {log} 2>&1"


rule tune_first:
    input:
        pool=first_pool,
        ref=dev_ref,
        init=prev_weights,
    output:
        weights=run_path("it{it}/weights"),
        info=run_path("it{it}/tune.json"),
    wildcard_constraints:
        it="1",
        method=methods_regex("kbest"),
    params:
        settings=tune_settings,
        seed=tune_seed,
        bleu=scoring_options,
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("it{it}/tune.log"),
    benchmark:
        run_benchmark("it{it}/tune.tsv")
    resources:
        mem_mb=2000,
    shell:
        "smtlib tune {wildcards.method} --pool {input.pool} --refs {input.ref} --init {input.init} "
        "--out {output.weights} --info {output.info} --seed {params.seed} {params.settings} {params.bleu} "
        "> {log} 2>&1"


rule tune:
    input:
        pool=kbest_pool,
        kbest=run_path("it{it}/dev.kbest.gz"),
        ref=dev_ref,
        init=prev_weights,
    output:
        pool=temp(run_path("it{it}/dev.pool")),
        weights=run_path("it{it}/weights"),
        info=run_path("it{it}/tune.json"),
    wildcard_constraints:
        it=LATER_ITERATION,
        method=methods_regex("kbest"),
    params:
        settings=tune_settings,
        seed=tune_seed,
        bleu=scoring_options,
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("it{it}/tune.log"),
    benchmark:
        run_benchmark("it{it}/tune.tsv")
    resources:
        mem_mb=3000,
    shell:
        "(smtlib kbest add --pool {input.pool} --kbest {input.kbest} --refs {input.ref} {params.bleu} "
        "--out {output.pool} "
        "&& smtlib tune {wildcards.method} --pool {output.pool} --refs {input.ref} --init {input.init} "
        "--out {output.weights} --info {output.info} --seed {params.seed} {params.settings} {params.bleu}) "
        "> {log} 2>&1"


rule select_best:
    input:
        bleus=dev_bleus,
        weights=loop_weights,
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
        run_log("select_best.log"),
    benchmark:
        run_benchmark("select_best.tsv")
    shell:
        "smtlib report best --dev-bleu {input.bleus} --weights {input.weights} --out-weights {output.weights} "
        "--out-curve {output.curve} --meta {params.meta} > {log} 2>&1"


# runs tuned toward another metric (helpers: rules/tune_metric.smk)
rule score_first_dev:
    input:
        best=rules.first_sample.output.best,
        ref=dev_ref,
    output:
        first_path("s{sample}/dev.{evalmetric}.json"),
    params:
        bleu=bleu_options(),  # --lowercase applies to chrF too; TER lowercases, as sacrebleu's
    conda:
        "../envs/smtlib.yaml"
    log:
        first_log("s{sample}/dev.{evalmetric}.log"),
    shell:
        "(smtlib score --metric {wildcards.evalmetric} --refs {input.ref} --hyps {input.best} {params.bleu} "
        "> {output}.tmp && mv {output}.tmp {output}) > {log} 2>&1"


rule score_dev:
    input:
        best=run_path("it{it}/dev.1best"),
        ref=dev_ref,
    output:
        run_path("it{it}/dev.{evalmetric}.json"),
    wildcard_constraints:
        setting=METRIC_RUN_SETTING,
    params:
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("it{it}/dev.{evalmetric}.log"),
    shell:
        "(smtlib score --metric {wildcards.evalmetric} --refs {input.ref} --hyps {input.best} {params.bleu} "
        "> {output}.tmp && mv {output}.tmp {output}) > {log} 2>&1"


rule select_best_metric:
    input:
        bleus=dev_bleus,
        scores=dev_metric_scores,
        weights=loop_weights,
    output:
        weights=run_path("best.weights"),
        curve=run_path("curve.tsv"),
    wildcard_constraints:
        setting=METRIC_RUN_SETTING,
    params:
        meta=run_meta,
        metric=run_tuning_metric,
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("select_best.log"),
    benchmark:
        run_benchmark("select_best.tsv")
    shell:
        "smtlib report best --dev-bleu {input.bleus} --metric {params.metric} --dev-score {input.scores} "
        "--weights {input.weights} --out-weights {output.weights} --out-curve {output.curve} --meta {params.meta} "
        "> {log} 2>&1"
