# Stage 7: learning curves of every run, Figure 1 (regularization sweep) and the PRO-vs-MERT
# synthetic figure (Hopkins & May 2011 §4.2, smtlib.report.pro_mert).


rule curves:
    input:
        pair_curves,
    output:
        png=report(
            "results/figures/curves_{pair}.png",
            caption="../config/report/curves.rst",
            category="Figures",
        ),
        tsv="results/figures/curves_{pair}.tsv",
    params:
        title="learning curves, {pair}",
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/figures/curves_{pair}.log",
    shell:
        "smtlib report curves --curves {input} --out {output.png} --tsv {output.tsv} "
        "--title {params.title:q} > {log} 2>&1"


# every method's runs (the extended table's too); curves_{pair}.png has the paper tables' methods only
use rule curves as curves_extended with:
    input:
        pair_curves_extended,
    output:
        png=report(
            "results/figures/curves_{pair}_extended.png",
            caption="../config/report/curves.rst",
            category="Figures",
        ),
        tsv="results/figures/curves_{pair}_extended.tsv",
    params:
        title="learning curves, {pair}, every method",
    log:
        "logs/figures/curves_{pair}_extended.log",


rule figure1:
    input:
        sweep_summaries,
    output:
        png=report(
            "results/figures/figure1.png",
            caption="../config/report/figure1.rst",
            category="Figures",
        ),
        tsv="results/figures/figure1.tsv",
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/figures/figure1.log",
    shell:
        "smtlib report figure1 --summaries {input} --out {output.png} --tsv {output.tsv} > {log} 2>&1"


rule pro_mert:
    output:
        tsv="results/figures/pro_mert.tsv",
        png=report(
            "results/figures/pro_mert.png",
            caption="../config/report/pro_mert.rst",
            category="Figures",
        ),
    params:
        dims=" ".join(map(str, config["pro_mert"]["dims"])),
        reps=config["pro_mert"]["reps"],
        methods=" ".join(config["pro_mert"]["methods"]),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/figures/pro_mert.log",
    benchmark:
        "results/benchmarks/figures/pro_mert.tsv"
    shell:
        "smtlib report pro-mert --dims {params.dims} --reps {params.reps} --methods {params.methods} "
        "--out {output.tsv} --figure {output.png} > {log} 2>&1"
