# Stages 1-2: the corpora (local copy or download, checksummed: smtlib data) and the dev
# sub-samples of Cherry & Foster (2012) §4.3.


rule data_train:
    output:
        src=data_path("{pair}", "train.src"),
        tgt=data_path("{pair}", "train.tgt"),
        manifest=data_path("{pair}", "train.manifest.json"),
    params:
        where=data_dir_option(),
        limits=limit_options(),
        out=data_path("{pair}"),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/data/{pair}/train.log",
    resources:
        mem_mb=1000,
    shell:
        "smtlib data fetch --pair {wildcards.pair} --parts train --out {params.out} {params.where} "
        "{params.limits} > {log} 2>&1"


rule data_dev:
    output:
        src=data_path("{pair}", "dev.src"),
        ref=data_path("{pair}", "dev.ref"),
        manifest=data_path("{pair}", "dev.manifest.json"),
    params:
        where=data_dir_option(),
        limits=limit_options(),
        out=data_path("{pair}"),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/data/{pair}/dev.log",
    shell:
        "smtlib data fetch --pair {wildcards.pair} --parts dev --out {params.out} {params.where} "
        "{params.limits} > {log} 2>&1"


rule data_test:
    output:
        src=data_path("{pair}", "test.{testset}.src"),
        ref=data_path("{pair}", "test.{testset}.ref"),
        manifest=data_path("{pair}", "test.{testset}.manifest.json"),
    params:
        where=data_dir_option(),
        limits=limit_options(),
        out=data_path("{pair}"),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/data/{pair}/test.{testset}.log",
    shell:
        "smtlib data fetch --pair {wildcards.pair} --parts test.{wildcards.testset} --out {params.out} "
        "{params.where} {params.limits} > {log} 2>&1"


rule data_subsample:
    input:
        src=rules.data_dev.output.src,
        ref=rules.data_dev.output.ref,
    output:
        src=data_path("{pair}", "dev/s{sample}.src"),
        ref=data_path("{pair}", "dev/s{sample}.ref"),
        ids=data_path("{pair}", "dev/s{sample}.ids"),
    params:
        prob=config["subsample"]["prob"],
        seed=config["subsample"]["seed"],
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/data/{pair}/subsample.s{sample}.log",
    shell:
        "smtlib data subsample --src {input.src} --refs {input.ref} --index {wildcards.sample} "
        "--prob {params.prob} --seed {params.seed} --out-src {output.src} --out-refs {output.ref} "
        "--out-ids {output.ids} > {log} 2>&1"
