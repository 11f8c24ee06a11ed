# Simianer, Riezler & Dyer (2012), Table 2: pairwise-ranking SGD (Algorithms 1-4) on the training set in
# shards, with sparse rule templates, jackknifed phrase tables and l1/l2 feature selection between epochs.
#
#   snakemake --cores 2 --configfile config/simianer_quick.yaml --config data_dir=../shared/data \
#       -- results/simianer_table2.tsv results/figures/simianer_epochs.png
#
# Stages (config `simianer:`; every command is `smtlib sgd ...`, `smtlib train ...`, `smtlib decode`):
#   1. the pair's prepared corpus (rules/system.smk's work dir) is split into `shards` random shards;
#   2. jackknifing: per fold (shard z is in fold z mod folds) a work dir without the fold's sentences,
#      its phrase tables, LMs (simianer.fold_lms; else the full corpus's) and medium model (the alignment
#      is shared: smtlib/system/jackknife.py);
#      the full-corpus medium model (rules/system.smk) translates dev, devtest and test;
#   3. a feature group adds rule templates (id, ng, shape: smtlib/system/sparse.py) to a medium model;
#   4. per epoch and shard: one pass of Algorithm 1 over the shard (smtlib sgd pass: each sentence decoded,
#      100-best distinct, with the weights left by the sentences before it, then its pair updates), starting
#      from the epoch's start (zero at epoch 1); then a mixing / selection job;
#      devtest BLEU of every epoch's returned vector; the epoch chosen on devtest; test BLEU;
#   5. results/simianer_table2.tsv (with approximate randomization) and the per-epoch figure.
# A run directory is results/simianer/{pair}/{fgroup}/{algo}-{tdata}; Algorithm 1 ("sgd") tunes on the
# dev set as one shard with the full model, the others on the training shards.


# ---------------------------------------------------------------- targets
rule simianer:
    input:
        "results/simianer_table2.tsv",
        "results/figures/simianer_epochs.png",


# ---------------------------------------------------------------- 1. shards
rule simianer_shards:
    input:
        rules.train_prepare.output,
    output:
        expand(
            "results/simianer/{{pair}}/shards/shard{z}.{ext}",
            z=range(SIM["shards"]),
            ext=("src", "ref", "ids"),
        ),
    params:
        work=input_dir_of,
        shards=SIM["shards"],
        seed=SIM["seed"],
        out=dir_of,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/simianer/{pair}/shards.log",
    shell:
        "smtlib sgd shards --work {params.work} --shards {params.shards} --seed {params.seed} "
        "--out-dir {params.out} > {log} 2>&1"


# ---------------------------------------------------------------- 2. jackknifed folds
rule simianer_fold_work:
    input:
        prepared=rules.train_prepare.output,
        aligned=rules.train_align.output.aligned,
        lm=expand(
            work_path("{{pair}}", "lm.{index}.{ext}"),
            index=("0", "1"),
            ext=("arpa.gz", "json"),
        ),
        ids=sim_fold_ids,
    output:
        corpus=multiext(
            "results/simianer/{pair}/folds/f{fold}/work/corpus.", "src", "tgt"
        ),
        info="results/simianer/{pair}/folds/f{fold}/work/fold.json",
        shared=multiext(
            "results/simianer/{pair}/folds/f{fold}/work/",
            "prepare.json",
            "lm.0.arpa.gz",
            "lm.0.json",
            "lm.1.arpa.gz",
            "lm.1.json",
        ),
    params:
        work=input_dir_of,
        alignments=" ".join(ALIGNMENTS),
        out=dir_of,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/simianer/{pair}/folds/f{fold}/work.log",
    resources:
        mem_mb=1000,
    shell:
        "smtlib sgd fold --work {params.work} --held-out {input.ids} --alignments {params.alignments} "
        "--out {params.out} > {log} 2>&1"


rule simianer_fold_phrases0:
    input:
        rules.simianer_fold_work.output,
    output:
        table="results/simianer/{pair}/folds/f{fold}/work/phrase-table.0.gz",
        reordering="results/simianer/{pair}/folds/f{fold}/work/reordering-table.0.gz",
        info="results/simianer/{pair}/folds/f{fold}/work/phrases.0.json",
    params:
        work=dir_of,
        length=config["system"]["max_phrase_length"],
        limit=config["system"]["table_limit"],
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/simianer/{pair}/folds/f{fold}/phrases.0.log",
    benchmark:
        "results/benchmarks/simianer/{pair}/folds/f{fold}/phrases.0.tsv"
    resources:
        mem_mb=3000,
    shell:
        "smtlib train phrases --work {params.work} --index 0 --symmetrization grow-diag-final-and "
        "--reordering --max-phrase-length {params.length} --table-limit {params.limit} > {log} 2>&1"


rule simianer_fold_phrases1:
    input:
        rules.simianer_fold_work.output,
    output:
        table="results/simianer/{pair}/folds/f{fold}/work/phrase-table.1.gz",
        info="results/simianer/{pair}/folds/f{fold}/work/phrases.1.json",
    params:
        work=dir_of,
        tm1=TM1_SYMMETRIZATION,
        length=config["system"]["max_phrase_length"],
        limit=config["system"]["table_limit"],
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/simianer/{pair}/folds/f{fold}/phrases.1.log",
    benchmark:
        "results/benchmarks/simianer/{pair}/folds/f{fold}/phrases.1.tsv"
    resources:
        mem_mb=3000,
    shell:
        "smtlib train phrases --work {params.work} --index 1 --symmetrization {params.tm1} "
        "--max-phrase-length {params.length} --table-limit {params.limit} > {log} 2>&1"


rule simianer_fold_lm:
    input:
        "results/simianer/{pair}/folds/f{fold}/work/corpus.tgt",
    output:
        lm="results/simianer/{pair}/folds/f{fold}/lm/lm.{index}.arpa.gz",
        info="results/simianer/{pair}/folds/f{fold}/lm/lm.{index}.json",
    params:
        order=lm_order,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/simianer/{pair}/folds/f{fold}/lm.{index}.log",
    benchmark:
        "results/benchmarks/simianer/{pair}/folds/f{fold}/lm.{index}.tsv"
    resources:
        mem_mb=2000,
    shell:
        "smtlib train lm --corpus-tgt {input} --order {params.order} --lm {output.lm} "
        "--lm-info {output.info} > {log} 2>&1"


rule simianer_fold_assemble:
    input:
        p0=rules.simianer_fold_phrases0.output,
        p1=rules.simianer_fold_phrases1.output,
        lms=sim_fold_lms,
    output:
        spec="results/simianer/{pair}/folds/f{fold}/medium/model.yaml",
        compiled="results/simianer/{pair}/folds/f{fold}/medium/compiled.bin",
    params:
        work=input_dir_of,
        lms=sim_fold_lm_option,
        out=dir_of,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/simianer/{pair}/folds/f{fold}/assemble.log",
    benchmark:
        "results/benchmarks/simianer/{pair}/folds/f{fold}/assemble.tsv"
    resources:
        mem_mb=3000,
    shell:
        "smtlib train assemble --work {params.work} --feature-set medium {params.lms} --out {params.out} "
        "> {log} 2>&1"


# ---------------------------------------------------------------- 3. feature groups (rule templates)
rule simianer_templates:
    input:
        sim_medium_of,
    output:
        spec="results/simianer/{pair}/models/{model}/{fgroup}/model.yaml",
        compiled="results/simianer/{pair}/models/{model}/{fgroup}/compiled.bin",
    params:
        model=input_dir_of,
        groups=sim_groups_option,
        out=dir_of,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/simianer/{pair}/models/{model}/{fgroup}.log",
    benchmark:
        "results/benchmarks/simianer/{pair}/models/{model}/{fgroup}.tsv"
    resources:
        mem_mb=3000,
    shell:
        "smtlib sgd templates --model {params.model} --groups {params.groups} --out {params.out} > {log} 2>&1"


# ---------------------------------------------------------------- 4. the sharded loop
rule simianer_zero:
    input:
        sim_full_model,
    output:
        sim_path("ep0/next.weights"),
    params:
        model=input_dir_of,
    conda:
        "../envs/smtlib.yaml"
    log:
        sim_log("zero.log"),
    shell:
        "smtlib sgd zero --model {params.model} --out {output} > {log} 2>&1"


rule simianer_shard_pass:
    input:
        model=sim_shard_model,
        weights=sim_shard_start,
        src=sim_shard_src,
        ref=sim_shard_ref,
    output:
        weights=sim_path("ep{epoch}/shard{shard}.weights"),
        info=sim_path("ep{epoch}/shard{shard}.json"),
    params:
        k=SIM["k"],
        eta=SIM["eta"],
        search=decoder_options(),
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        sim_log("ep{epoch}/pass.shard{shard}.log"),
    benchmark:
        sim_benchmark("ep{epoch}/pass.shard{shard}.tsv")
    resources:
        mem_mb=3000,
    shell:
        "smtlib sgd pass --model {input.model} --weights {input.weights} --input {input.src} "
        "--refs {input.ref} --out {output.weights} --info {output.info} --k {params.k} "
        "--eta {params.eta} {params.search} {params.bleu} --quiet > {log} 2>&1"


rule simianer_mix:
    input:
        shards=sim_epoch_shards,
        state=sim_prev_state,
    output:
        weights=sim_path("ep{epoch}/weights"),
        next=sim_path("ep{epoch}/next.weights"),
        state=sim_path("ep{epoch}/mix.json"),
    params:
        state=sim_state_option,
        select=sim_select_option,
    conda:
        "../envs/smtlib.yaml"
    log:
        sim_log("ep{epoch}/mix.log"),
    benchmark:
        sim_benchmark("ep{epoch}/mix.tsv")
    resources:
        mem_mb=2000,
    shell:
        "smtlib sgd mix --algorithm {wildcards.algo} --shard-weights {input.shards} {params.state} "
        "{params.select} --out {output.weights} --next {output.next} --state-out {output.state} > {log} 2>&1"


rule simianer_devtest:
    input:
        model=sim_full_model,
        weights=rules.simianer_mix.output.weights,
        src=sim_devtest_src,
        ref=sim_devtest_ref,
    output:
        best=sim_path("ep{epoch}/devtest.out"),
        bleu=sim_path("ep{epoch}/devtest.bleu.json"),
    params:
        search=decoder_options(),
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        sim_log("ep{epoch}/devtest.log"),
    benchmark:
        sim_benchmark("ep{epoch}/devtest.tsv")
    resources:
        mem_mb=3000,
    shell:
        "(smtlib decode --model {input.model} --weights {input.weights} --input {input.src} "
        "--output {output.best} {params.search} --quiet "
        "&& smtlib bleu --refs {input.ref} --hyps {output.best} {params.bleu} > {output.bleu}.tmp "
        "&& mv {output.bleu}.tmp {output.bleu}) > {log} 2>&1"


rule simianer_choose:
    input:
        sim_epoch_files,
    output:
        weights=sim_path("chosen.weights"),
        info=sim_path("chosen.json"),
    params:
        epochs=sim_epoch_dirs,
    conda:
        "../envs/smtlib.yaml"
    log:
        sim_log("choose.log"),
    shell:
        "smtlib sgd choose --epochs {params.epochs} --out {output.weights} --info {output.info} > {log} 2>&1"


rule simianer_test:
    input:
        model=sim_full_model,
        weights=rules.simianer_choose.output.weights,
        src=sim_test_src,
        ref=sim_test_ref,
    output:
        best=sim_path("test.out"),
        bleu=sim_path("test.bleu.json"),
    params:
        search=decoder_options(),
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        sim_log("test.log"),
    benchmark:
        sim_benchmark("test.tsv")
    resources:
        mem_mb=3000,
    shell:
        "(smtlib decode --model {input.model} --weights {input.weights} --input {input.src} "
        "--output {output.best} {params.search} --quiet "
        "&& smtlib bleu --refs {input.ref} --hyps {output.best} {params.bleu} > {output.bleu}.tmp "
        "&& mv {output.bleu}.tmp {output.bleu}) > {log} 2>&1"


# ---------------------------------------------------------------- 5. table and figure
rule simianer_table:
    input:
        runs=sim_table_inputs,
        ref=sim_table_refs,
    output:
        "results/simianer_table2.tsv",
    params:
        runs=sim_run_options,
        trials=SIM["ar_trials"],
        seed=SIM["seed"],
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/simianer/table2.log",
    shell:
        "smtlib sgd table --run {params.runs} --test-refs {input.ref} --trials {params.trials} "
        "--seed {params.seed} --out {output} > {log} 2>&1"


rule simianer_plot:
    input:
        sim_plot_inputs,
    output:
        "results/figures/simianer_epochs.png",
    params:
        runs=sim_run_options,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/simianer/epochs_plot.log",
    shell:
        "smtlib sgd plot --run {params.runs} --out {output} > {log} 2>&1"


wildcard_constraints:
    fgroup="[a-z][a-z0-9-]*",
    algo="sgd|mixsgd|itermixsgd|iterselsgd",
    tdata="dev|train",
    epoch=r"[1-9]\d*",
    fold=r"\d+",
    model=r"full|f\d+",
