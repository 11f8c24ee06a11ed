# Stage 4c: online MIRA with the decoder in the loop (Cherry & Foster 2012, §2.1, §4), parallelized by
# iterative parameter mixing (McDonald et al. 2010): iteration it is one epoch; each of the method's
# `shards` shards is a job that decodes its sentences one by one from the mixture of epoch it-1
# (mira_start; it=1: the initial weights), updating after each, and a mixing job averages the shards:
# it{it}/weights is the average of the weights seen in epoch it (`average: epoch`, as Moses; `all`: since
# epoch 1), what the loop scores and keeps (decode_dev of it+1 and select_best in rules/tune.smk),
# it{it}/mixed.weights the next epoch's start, it{it}/mira.json the sums and each shard's pseudo-document.


rule mira_shard:
    input:
        model=model_dir("{pair}", "{fs}", "model.yaml"),
        init=mira_start,
        state=mira_prev_state,
        src=dev_src,
        ref=dev_ref,
    output:
        run_path("it{it}/mira.shard{shard}.json"),
    wildcard_constraints:
        setting=HYPER_SETTING,
        method=methods_regex("online"),
    params:
        state=state_option,
        settings=tune_settings,
        seed=tune_seed,
        search=decoder_options(),
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("it{it}/mira.shard{shard}.log"),
    benchmark:
        run_benchmark("it{it}/mira.shard{shard}.tsv")
    resources:
        mem_mb=3000,
    shell:
        "smtlib tune {wildcards.method} --model {input.model} --source {input.src} --refs {input.ref} "
        "--init {input.init} {params.state} --shard {wildcards.shard} --out {output} --seed {params.seed} "
        "{params.settings} {params.search} {params.bleu} > {log} 2>&1"


rule mira_mix:
    input:
        shards=mira_shard_results,
        state=mira_prev_state,
    output:
        weights=run_path("it{it}/weights"),
        mixed=run_path("it{it}/mixed.weights"),
        state=run_path("it{it}/mira.json"),
        info=run_path("it{it}/tune.json"),
    wildcard_constraints:
        setting=HYPER_SETTING,
        method=methods_regex("online"),
    params:
        state=state_option,
        settings=tune_settings,
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("it{it}/mira.mix.log"),
    benchmark:
        run_benchmark("it{it}/mira.mix.tsv")
    shell:
        "smtlib tune {wildcards.method} --mix {input.shards} {params.state} {params.settings} "
        "--out {output.weights} --mixed-out {output.mixed} --state-out {output.state} --info {output.info} "
        "> {log} 2>&1"
