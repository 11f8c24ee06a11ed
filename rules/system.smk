# Stage 3: one system per (pair, feature set), built once and shared by every tuning run
# (smtlib train, stage by stage; Cherry & Foster 2012 §4.2). Every stage is given exactly the files
# it reads and writes (work_path: the names `smtlib train build` uses in its work directory).
# small, medium and big share the alignment, TM1 and the LMs; phrase-table.0 carries the big
# set's sparse field when big is built (a small/medium model ignores that field).
# With decoder.backend moses, export_moses writes each system as a Moses system for the decode jobs.
# A system directory holds two weight files: default.weights (train_assemble: the system's own,
# Moses's hand-set training defaults, for decoding it untuned) and init.weights (init_weights: where
# every tuning run starts, Cherry & Foster's §4.2). A system directory built by older code has weights.init
# instead of default.weights; no rule reads either, so such a system is not rebuilt for the name.


rule train_prepare:
    input:
        src=rules.data_train.output.src,
        tgt=rules.data_train.output.tgt,
    output:
        src=work_path("{pair}", "corpus.src"),
        tgt=work_path("{pair}", "corpus.tgt"),
        info=work_path("{pair}", "prepare.json"),
    params:
        src_lang=src_lang,
        tgt_lang=tgt_lang,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/prepare.log",
    benchmark:
        "results/benchmarks/systems/{pair}/prepare.tsv"
    resources:
        mem_mb=2000,
    shell:
        "smtlib train prepare --src {input.src} --tgt {input.tgt} --src-lang {params.src_lang} "
        "--tgt-lang {params.tgt_lang} --corpus-src {output.src} --corpus-tgt {output.tgt} "
        "--prepare-info {output.info} > {log} 2>&1"


rule train_align:
    input:
        src=rules.train_prepare.output.src,
        tgt=rules.train_prepare.output.tgt,
    output:
        fwd=work_path("{pair}", "align.fwd"),
        rev=work_path("{pair}", "align.rev"),
        aligned=expand(work_path("{{pair}}", "aligned.{sym}"), sym=ALIGNMENTS),
        info=work_path("{pair}", "align.json"),
    params:
        symmetrize=" ".join(ALIGNMENTS),
        seed=config["system"]["seed"],
    threads: 2
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/align.log",
    benchmark:
        "results/benchmarks/systems/{pair}/align.tsv"
    resources:
        mem_mb=2000,
    shell:
        "smtlib train align --corpus-src {input.src} --corpus-tgt {input.tgt} --symmetrize {params.symmetrize} "
        "--aligned {output.aligned} --forward {output.fwd} --reverse {output.rev} --align-info {output.info} "
        "--seed {params.seed} --threads {threads} > {log} 2>&1"


rule train_phrases0:
    input:
        src=rules.train_prepare.output.src,
        tgt=rules.train_prepare.output.tgt,
        aligned=work_path("{pair}", "aligned.grow-diag-final-and"),
    output:
        table=work_path("{pair}", "phrase-table.0.gz"),
        reordering=work_path("{pair}", "reordering-table.0.gz"),
        info=work_path("{pair}", "phrases.0.json"),
    params:
        sparse=needs_sparse,
        length=config["system"]["max_phrase_length"],
        limit=config["system"]["table_limit"],
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/phrases.0.log",
    benchmark:
        "results/benchmarks/systems/{pair}/phrases.0.tsv"
    resources:
        mem_mb=3000,
    shell:
        "smtlib train phrases --corpus-src {input.src} --corpus-tgt {input.tgt} --aligned {input.aligned} "
        "--symmetrization grow-diag-final-and --phrase-table {output.table} --phrases-info {output.info} "
        "--reordering-table {output.reordering} {params.sparse} --max-phrase-length {params.length} "
        "--table-limit {params.limit} > {log} 2>&1"


rule train_phrases1:
    input:
        src=rules.train_prepare.output.src,
        tgt=rules.train_prepare.output.tgt,
        aligned=work_path("{pair}", TM1_ALIGNED),
    output:
        table=work_path("{pair}", "phrase-table.1.gz"),
        info=work_path("{pair}", "phrases.1.json"),
    params:
        tm1=TM1_SYMMETRIZATION,
        length=config["system"]["max_phrase_length"],
        limit=config["system"]["table_limit"],
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/phrases.1.log",
    benchmark:
        "results/benchmarks/systems/{pair}/phrases.1.tsv"
    resources:
        mem_mb=3000,
    shell:
        "smtlib train phrases --corpus-src {input.src} --corpus-tgt {input.tgt} --aligned {input.aligned} "
        "--symmetrization {params.tm1} --phrase-table {output.table} --phrases-info {output.info} "
        "--max-phrase-length {params.length} --table-limit {params.limit} > {log} 2>&1"


rule train_lm:
    input:
        tgt=rules.train_prepare.output.tgt,
    output:
        lm=work_path("{pair}", "lm.{index}.arpa.gz"),
        info=work_path("{pair}", "lm.{index}.json"),
    params:
        order=lm_order,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/lm.{index}.log",
    benchmark:
        "results/benchmarks/systems/{pair}/lm.{index}.tsv"
    resources:
        mem_mb=2000,
    shell:
        "smtlib train lm --corpus-tgt {input.tgt} --order {params.order} --lm {output.lm} "
        "--lm-info {output.info} > {log} 2>&1"


# The model directory's tables and LMs are hard links of the work files above (copies where the
# file system has none); being links, they keep their source's time, so they are not declared
# (Snakemake would see them older than the job's other inputs and rerun it forever).
rule train_assemble:
    input:
        prepare=rules.train_prepare.output.info,
        align=rules.train_align.output.info,
        tables=component_files("phrase-table.{}.gz"),
        table_infos=component_files("phrases.{}.json"),
        lms=component_files("lm.{}.arpa.gz"),
        lm_infos=component_files("lm.{}.json"),
        reordering=reordering_file(),
    output:
        spec=model_dir("{pair}", "{fs}", "model.yaml"),
        weights=model_dir("{pair}", "{fs}", DEFAULT_WEIGHTS),
        compiled=model_dir("{pair}", "{fs}", "compiled.bin"),
    params:
        reordering=reordering_option,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/assemble.{fs}.log",
    benchmark:
        "results/benchmarks/systems/{pair}/assemble.{fs}.tsv"
    resources:
        mem_mb=3000,
    shell:
        "smtlib train assemble --feature-set {wildcards.fs} --prepare-info {input.prepare} "
        "--align-info {input.align} --phrase-table {input.tables} --phrases-info {input.table_infos} "
        "--lm {input.lms} --lm-info {input.lm_infos} {params.reordering} --out {output.spec} > {log} 2>&1"


rule init_weights:
    input:
        rules.train_assemble.output.spec,
    output:
        initial_weights("{pair}", "{fs}"),
    params:
        ones=" ".join(config["tuning"]["init_ones"]),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/init_weights.{fs}.log",
    shell:
        "smtlib data init-weights --model {input} --out {output} --ones {params.ones} > {log} 2>&1"


rule export_moses:
    input:
        spec=rules.train_assemble.output.spec,
    output:
        ini=model_dir("{pair}", "{fs}", "moses/moses.ini"),
        table=model_dir("{pair}", "{fs}", "moses/phrase-table.gz"),
    params:
        out=model_dir("{pair}", "{fs}", "moses"),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/export_moses.{fs}.log",
    benchmark:
        "results/benchmarks/systems/{pair}/export_moses.{fs}.tsv"
    resources:
        mem_mb=2000,
    shell:
        "smtlib train export-moses --model {input.spec} --out {params.out} > {log} 2>&1"
