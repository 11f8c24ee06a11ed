# Stage 6: Tables 4-6 in the paper's layout (rows = methods, columns = Small / Medium / Big x
# Tune / Test / SD), the extended tables with every method, and their companions (BLEU signature,
# settings, runs).


rule table:
    input:
        table_summaries,
    output:
        tsv=report(
            "results/{table}.tsv",
            caption="../config/report/table.rst",
            category="Tables",
            subcategory="{table}",
        ),
        companion=report(
            "results/{table}.md",
            caption="../config/report/companion.rst",
            category="Tables",
            subcategory="{table}",
        ),
    params:
        methods=table_methods,
        feature_sets=" ".join(config["feature_sets"]),
        not_applicable=not_applicable_cells(),
        settings=table_settings(),
        title=table_title,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/tables/{table}.log",
    shell:
        "smtlib report table --summaries {input} --methods {params.methods} "
        "--feature-sets {params.feature_sets} --not-applicable {params.not_applicable} "
        "--settings {params.settings:q} --title {params.title:q} --out {output.tsv} "
        "--companion {output.companion} > {log} 2>&1"


use rule table as table_extended with:
    input:
        extended_summaries,
    output:
        tsv=report(
            "results/{table}_extended.tsv",
            caption="../config/report/table.rst",
            category="Tables",
            subcategory="{table}_extended",
        ),
        companion=report(
            "results/{table}_extended.md",
            caption="../config/report/companion.rst",
            category="Tables",
            subcategory="{table}_extended",
        ),
    params:
        methods=extended_methods,
        feature_sets=" ".join(config["feature_sets"]),
        not_applicable=not_applicable_cells(),
        settings=table_settings(),
        title=extended_title,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/tables/{table}_extended.log",


rule table_vs_paper:
    input:
        "results/{table}.tsv",
    output:
        "results/{table}_vs_paper.tsv",
    wildcard_constraints:
        table="|".join(PAPER_TABLES),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/tables/{table}_vs_paper.log",
    shell:
        "smtlib report paper --table {input} --paper {wildcards.table} --out {output} > {log} 2>&1"
