# The replay experiment: Moses's recorded 200-best lists of the mert-moses-new-aggregate regression
# test (14 iterations, 5 sentences, 3 references). Iteration it merges runs 1..it (replay_runs) and
# each method tunes from its weights of it-1 (replay_prev_weights; it=1: the moses.ini weights),
# then reranks the pool; the BLEU is set next to the best BLEU Moses's MERT recorded per iteration.
# The loop has the same shape as the real one, without the decoder.


rule replay_data:
    output:
        [replay_file(n) for n in REPLAY_NAMES],
    params:
        files=replay_keys(),
        where=data_dir_option(),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/replay/data.log",
    shell:
        "smtlib data copy {params.files} --out {output} {params.where} > {log} 2>&1"


rule replay_init:
    input:
        replay_file("moses.ini"),
    output:
        "results/replay/init.weights",
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/replay/init.log",
    shell:
        "smtlib weights from-moses-ini {input} --out {output} > {log} 2>&1"


rule replay_pool:
    input:
        replay_runs,
    output:
        "results/replay/pool/it{it}.kbest.gz",
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/replay/pool.it{it}.log",
    shell:
        "smtlib kbest merge --out {output} {input} > {log} 2>&1"


rule replay_tune:
    input:
        pool=rules.replay_pool.output,
        refs=replay_refs(),
        init=replay_prev_weights,
    output:
        weights="results/replay/{method}/it{it}/weights",
        info="results/replay/{method}/it{it}/tune.json",
    params:
        settings=replay_method_settings,
        seed=replay_seed,
        bleu=bleu_options("replay"),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/replay/{method}/it{it}/tune.log",
    benchmark:
        "results/benchmarks/replay/{method}/it{it}/tune.tsv"
    shell:
        "smtlib tune {wildcards.method} --kbest {input.pool} --refs {input.refs} --init {input.init} "
        "--out {output.weights} --info {output.info} --seed {params.seed} {params.settings} {params.bleu} "
        "> {log} 2>&1"


rule replay_rerank:
    input:
        pool=rules.replay_pool.output,
        weights=rules.replay_tune.output.weights,
        refs=replay_refs(),
    output:
        best="results/replay/{method}/it{it}/1best",
        bleu="results/replay/{method}/it{it}/bleu.json",
    params:
        bleu=bleu_options("replay"),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/replay/{method}/it{it}/rerank.log",
    shell:
        "(smtlib rerank --kbest {input.pool} --weights {input.weights} --out {output.best} "
        "&& smtlib bleu --refs {input.refs} --hyps {output.best} {params.bleu} > {output.bleu}.tmp "
        "&& mv {output.bleu}.tmp {output.bleu}) > {log} 2>&1"


rule replay_table:
    input:
        truth=replay_file("truth/results.dat"),
        bleus=replay_bleus,
    output:
        tsv=report(
            "results/replay/table.tsv",
            caption="../config/report/replay.rst",
            category="Replay",
        ),
        png="results/replay/bleu_by_iteration.png",
    params:
        scores=replay_score_arguments,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/replay/table.log",
    shell:
        "smtlib report replay --truth {input.truth} --score {params.scores} --out {output.tsv} "
        "--figure {output.png} > {log} 2>&1"
