# Stage 3: one system per (pair, feature set), built once and shared by every tuning run
# (smtlib train, stage by stage in one work directory per pair; Cherry & Foster 2012 §4.2).
# small, medium and big share the alignment, TM1 and the LMs; phrase-table.0 carries the big
# set's sparse field when big is built (a small/medium model ignores that field).
# With decoder.backend moses, export_moses writes each system as a Moses system for the decode jobs.


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
        work=work_of,
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
        "--tgt-lang {params.tgt_lang} --work {params.work} > {log} 2>&1"


rule train_align:
    input:
        rules.train_prepare.output,
    output:
        fwd=work_path("{pair}", "align.fwd"),
        rev=work_path("{pair}", "align.rev"),
        aligned=expand(work_path("{{pair}}", "aligned.{sym}"), sym=ALIGNMENTS),
        info=work_path("{pair}", "align.json"),
    params:
        work=work_of,
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
        "smtlib train align --work {params.work} --symmetrize {params.symmetrize} "
        "--seed {params.seed} --threads {threads} > {log} 2>&1"


rule train_phrases0:
    input:
        rules.train_align.output,
    output:
        table=work_path("{pair}", "phrase-table.0.gz"),
        reordering=work_path("{pair}", "reordering-table.0.gz"),
        info=work_path("{pair}", "phrases.0.json"),
    params:
        work=work_of,
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
        "smtlib train phrases --work {params.work} --index 0 --symmetrization grow-diag-final-and "
        "--reordering {params.sparse} --max-phrase-length {params.length} --table-limit {params.limit} "
        "> {log} 2>&1"


rule train_phrases1:
    input:
        rules.train_align.output,
    output:
        table=work_path("{pair}", "phrase-table.1.gz"),
        info=work_path("{pair}", "phrases.1.json"),
    params:
        work=work_of,
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
        "smtlib train phrases --work {params.work} --index 1 --symmetrization {params.tm1} "
        "--max-phrase-length {params.length} --table-limit {params.limit} > {log} 2>&1"


rule train_lm:
    input:
        rules.train_prepare.output,
    output:
        lm=work_path("{pair}", "lm.{index}.arpa.gz"),
        info=work_path("{pair}", "lm.{index}.json"),
    params:
        work=work_of,
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
        "smtlib train lm --work {params.work} --index {wildcards.index} --order {params.order} > {log} 2>&1"


rule train_assemble:
    input:
        system_components,
    output:
        spec=model_dir("{pair}", "{fs}", "model.yaml"),
        weights=model_dir("{pair}", "{fs}", "weights.init"),
        compiled=model_dir("{pair}", "{fs}", "compiled.bin"),
    params:
        work=input_dir_of,
        out=dir_of,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/assemble.{fs}.log",
    benchmark:
        "results/benchmarks/systems/{pair}/assemble.{fs}.tsv"
    resources:
        mem_mb=3000,
    shell:
        "smtlib train assemble --work {params.work} --feature-set {wildcards.fs} --out {params.out} > {log} 2>&1"


rule init_weights:
    input:
        rules.train_assemble.output.spec,
    output:
        model_dir("{pair}", "{fs}", "init.weights"),
    params:
        model=dir_of,
        ones=" ".join(config["tuning"]["init_ones"]),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/init_weights.{fs}.log",
    shell:
        "smtlib data init-weights --model {params.model} --out {output} --ones {params.ones} > {log} 2>&1"


rule export_moses:
    input:
        spec=rules.train_assemble.output.spec,
    output:
        ini=model_dir("{pair}", "{fs}", "moses/moses.ini"),
        table=model_dir("{pair}", "{fs}", "moses/phrase-table.gz"),
    params:
        model=input_dir_of,
        out=dir_of,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/export_moses.{fs}.log",
    benchmark:
        "results/benchmarks/systems/{pair}/export_moses.{fs}.tsv"
    resources:
        mem_mb=2000,
    shell:
        "smtlib train export-moses --model {params.model} --out {params.out} > {log} 2>&1"
