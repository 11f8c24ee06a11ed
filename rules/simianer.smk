# Simianer, Riezler & Dyer (2012), Table 2: pairwise-ranking SGD (Algorithms 1-4) on the training set in
# shards, with sparse rule templates, jackknifed phrase tables and l1/l2 feature selection between epochs.
#
#   snakemake --cores 2 --configfile config/simianer_quick.yaml --config data_dir=../shared/data \
#       -- results/simianer_table2.tsv results/figures/simianer_epochs.png
#
# Stages (config `simianer:`; every command is `smtlib sgd ...`, `smtlib train ...`, `smtlib decode`):
#   1. the pair's prepared corpus (rules/system.smk's work dir) is split into `shards` random shards
#      (the split's seed: simianer.seed for the table, simianer.replicas.seeds for replicas);
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
# A run with a published record (simianer.restore_runs) is restored from it instead of run (stage 4's
# rule simianer_restore): a lost run directory costs only its runs in flight.
# A run directory is results/simianer/{pair}/{fgroup}/{algo}-{tdata}/split{seed}; Algorithm 1 ("sgd")
# tunes on the dev set as one shard with the full model, the others on the training shards of the split
# (results/simianer/{pair}/split{seed}: shards, folds, fold models).


# ---------------------------------------------------------------- targets
rule simianer:
    input:
        "results/simianer_table2.tsv",
        "results/simianer_findings.md",
        "results/figures/simianer_epochs.png",


# ---------------------------------------------------------------- 1. shards
rule simianer_shards:
    input:
        src=rules.train_prepare.output.src,
        tgt=rules.train_prepare.output.tgt,
    output:
        src=sim_shard_files("src"),
        ref=sim_shard_files("ref"),
        ids=sim_shard_files("ids"),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/simianer/{pair}/split{split}/shards.log",
    shell:
        "smtlib sgd shards --corpus-src {input.src} --corpus-tgt {input.tgt} --seed {wildcards.split} "
        "--shard-src {output.src} --shard-ref {output.ref} --shard-ids {output.ids} > {log} 2>&1"


# ---------------------------------------------------------------- 2. jackknifed folds
# A fold's work files: the corpus without the fold's shards and its alignments; the fold's tables
# come from them, its medium model shares the full corpus's LMs and alignment info (read in place).
rule simianer_fold_work:
    input:
        src=rules.train_prepare.output.src,
        tgt=rules.train_prepare.output.tgt,
        aligned=rules.train_align.output.aligned,
        prepare=rules.train_prepare.output.info,
        ids=sim_fold_ids,
    output:
        src=sim_fold_path("work/corpus.src"),
        tgt=sim_fold_path("work/corpus.tgt"),
        aligned=expand(
            sim_fold_path("work/aligned.{sym}"), sym=ALIGNMENTS, allow_missing=True
        ),
        prepare=sim_fold_path("work/prepare.json"),
        info=sim_fold_path("work/fold.json"),
    conda:
        "../envs/smtlib.yaml"
    log:
        sim_fold_log("work.log"),
    resources:
        mem_mb=1000,
    shell:
        "smtlib sgd fold --corpus-src {input.src} --corpus-tgt {input.tgt} --aligned {input.aligned} "
        "--prepare-info {input.prepare} --held-out {input.ids} --fold-src {output.src} --fold-tgt {output.tgt} "
        "--fold-aligned {output.aligned} --fold-prepare-info {output.prepare} --fold-info {output.info} "
        "> {log} 2>&1"


rule simianer_fold_phrases0:
    input:
        src=rules.simianer_fold_work.output.src,
        tgt=rules.simianer_fold_work.output.tgt,
        aligned=sim_fold_path("work/aligned.grow-diag-final-and"),
    output:
        table=sim_fold_path("work/phrase-table.0.gz"),
        reordering=sim_fold_path("work/reordering-table.0.gz"),
        info=sim_fold_path("work/phrases.0.json"),
    params:
        length=config["system"]["max_phrase_length"],
        limit=config["system"]["table_limit"],
    conda:
        "../envs/smtlib.yaml"
    log:
        sim_fold_log("phrases.0.log"),
    benchmark:
        sim_fold_benchmark("phrases.0.tsv")
    resources:
        mem_mb=3000,
    shell:
        "smtlib train phrases --corpus-src {input.src} --corpus-tgt {input.tgt} --aligned {input.aligned} "
        "--symmetrization grow-diag-final-and --phrase-table {output.table} --phrases-info {output.info} "
        "--reordering-table {output.reordering} --max-phrase-length {params.length} "
        "--table-limit {params.limit} > {log} 2>&1"


rule simianer_fold_phrases1:
    input:
        src=rules.simianer_fold_work.output.src,
        tgt=rules.simianer_fold_work.output.tgt,
        aligned=sim_fold_path(f"work/{TM1_ALIGNED}"),
    output:
        table=sim_fold_path("work/phrase-table.1.gz"),
        info=sim_fold_path("work/phrases.1.json"),
    params:
        tm1=TM1_SYMMETRIZATION,
        length=config["system"]["max_phrase_length"],
        limit=config["system"]["table_limit"],
    conda:
        "../envs/smtlib.yaml"
    log:
        sim_fold_log("phrases.1.log"),
    benchmark:
        sim_fold_benchmark("phrases.1.tsv")
    resources:
        mem_mb=3000,
    shell:
        "smtlib train phrases --corpus-src {input.src} --corpus-tgt {input.tgt} --aligned {input.aligned} "
        "--symmetrization {params.tm1} --phrase-table {output.table} --phrases-info {output.info} "
        "--max-phrase-length {params.length} --table-limit {params.limit} > {log} 2>&1"


rule simianer_fold_lm:
    input:
        rules.simianer_fold_work.output.tgt,
    output:
        lm=sim_fold_path("lm/lm.{index}.arpa.gz"),
        info=sim_fold_path("lm/lm.{index}.json"),
    params:
        order=lm_order,
    conda:
        "../envs/smtlib.yaml"
    log:
        sim_fold_log("lm.{index}.log"),
    benchmark:
        sim_fold_benchmark("lm.{index}.tsv")
    resources:
        mem_mb=2000,
    shell:
        "smtlib train lm --corpus-tgt {input} --order {params.order} --lm {output.lm} "
        "--lm-info {output.info} > {log} 2>&1"


# As rules/system.smk's train_assemble, the model directory's tables and LMs are hard links (not declared).
rule simianer_fold_assemble:
    input:
        prepare=rules.simianer_fold_work.output.prepare,
        align=rules.train_align.output.info,
        tables=[
            rules.simianer_fold_phrases0.output.table,
            rules.simianer_fold_phrases1.output.table,
        ],
        table_infos=[
            rules.simianer_fold_phrases0.output.info,
            rules.simianer_fold_phrases1.output.info,
        ],
        lms=sim_fold_lm_inputs("arpa.gz"),
        lm_infos=sim_fold_lm_inputs("json"),
        reordering=rules.simianer_fold_phrases0.output.reordering,
    output:
        spec=sim_fold_path("medium/model.yaml"),
        weights=sim_fold_path(f"medium/{DEFAULT_WEIGHTS}"),
        compiled=sim_fold_path("medium/compiled.bin"),
    conda:
        "../envs/smtlib.yaml"
    log:
        sim_fold_log("assemble.log"),
    benchmark:
        sim_fold_benchmark("assemble.tsv")
    resources:
        mem_mb=3000,
    shell:
        "smtlib train assemble --feature-set medium --prepare-info {input.prepare} --align-info {input.align} "
        "--phrase-table {input.tables} --phrases-info {input.table_infos} --lm {input.lms} "
        "--lm-info {input.lm_infos} --reordering-table {input.reordering} --out {output.spec} > {log} 2>&1"


# ---------------------------------------------------------------- 3. feature groups (rule templates)
# TranslationModel0's table is rewritten with the templates; the other tables and LMs are hard links.
rule simianer_templates:
    input:
        sim_medium_of,
    output:
        spec=sim_models_path("model.yaml"),
        weights=sim_models_path(DEFAULT_WEIGHTS),
        table=sim_models_path("phrase-table.0.gz"),
        compiled=sim_models_path("compiled.bin"),
    params:
        groups=sim_groups_option,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/simianer/{pair}/models/{model}/{fgroup}.log",
    benchmark:
        "results/benchmarks/simianer/{pair}/models/{model}/{fgroup}.tsv"
    resources:
        mem_mb=3000,
    shell:
        "smtlib sgd templates --model {input} --groups {params.groups} --out {output.spec} > {log} 2>&1"


# ---------------------------------------------------------------- 4. the sharded loop
rule simianer_zero:
    input:
        sim_full_model,
    output:
        sim_path("ep0/next.weights"),
    conda:
        "../envs/smtlib.yaml"
    log:
        sim_log("zero.log"),
    shell:
        "smtlib sgd zero --model {input} --out {output} > {log} 2>&1"


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


# A finished run restored from its published record (simianer.restore_runs) instead of run, as a lost
# run directory's finished runs are: its chosen epoch and test output as recorded, its test BLEU scored
# again with the same settings (smtlib sgd restore refuses a record it does not reproduce).
rule simianer_restore:
    input:
        unpack(sim_restore_inputs),
    output:
        chosen=sim_path("chosen.json"),
        best=sim_path("test.out"),
        bleu=sim_path("test.bleu.json"),
        info=sim_path("restored.json"),
    params:
        record=sim_record_dir,
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        sim_log("restore.log"),
    shell:
        "smtlib sgd restore --record {params.record} --test-refs {input.ref} --chosen {output.chosen} "
        "--test-out {output.best} --test-bleu {output.bleu} --info {output.info} {params.bleu} > {log} 2>&1"


ruleorder: simianer_restore > simianer_choose
ruleorder: simianer_restore > simianer_test


# ---------------------------------------------------------------- 5. table and figure
rule simianer_table:
    input:
        runs=sim_table_inputs,
        baselines=sim_baseline_inputs,
        ref=sim_table_refs,
    output:
        "results/simianer_table2.tsv",
    params:
        runs=sim_run_options,
        baselines=sim_baseline_options,
        trials=SIM["ar_trials"],
        seed=SIM["seed"],
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/simianer/table2.log",
    shell:
        "smtlib sgd table --run {params.runs} {params.baselines} --test-refs {input.ref} --trials {params.trials} "
        "--seed {params.seed} {params.bleu} --out {output} > {log} 2>&1"


# the findings of §5.2 decided on the table's runs (smtlib.report.simianer_findings), with the table's
# inputs and test
rule simianer_findings:
    input:
        runs=sim_table_inputs,
        baselines=sim_baseline_inputs,
        ref=sim_table_refs,
    output:
        report(
            "results/simianer_findings.md",
            caption="../config/report/simianer_findings.rst",
            category="Findings",
            subcategory="simianer",
        ),
    params:
        runs=sim_run_options,
        baselines=sim_baseline_options,
        trials=SIM["ar_trials"],
        seed=SIM["seed"],
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/simianer/findings.log",
    shell:
        "smtlib sgd findings --run {params.runs} {params.baselines} --test-refs {input.ref} "
        "--trials {params.trials} --seed {params.seed} {params.bleu} --out {output} > {log} 2>&1"


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
    model=r"full|split\d+/f\d+",
    split=r"\d+",
