# Stage 6: Tables 4-6 in the paper's layout (rows = methods, columns = Small / Medium / Big x
# Tune / Test / SD / Sig), the extended tables with more methods, and their companions (BLEU
# signature, settings, runs, each cell's p-value against its column's best, s_sel, s_opt); each
# paper table next to the paper's (the orderings of methods) and the paper's findings evaluated;
# Tan et al. (2013)'s findings on a table's runs of cmira, kb-mira and kb-mert (not in the default
# target: `snakemake ... -- results/table6_cmira.md`).


rule table:
    input:
        summaries=table_summaries,
        outputs=table_outputs,
        refs=table_refs,
        initial=table_initial_scores,
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
        tests="results/{table}_tests.json",
    params:
        methods=table_methods,
        feature_sets=" ".join(config["feature_sets"]),
        not_applicable=not_applicable_cells(),
        settings=table_settings(),
        title=table_title,
        test_refs=table_ref_arguments,
        initial=table_initial_arguments,
        significance=significance_options(),
        pairs="all",
        against="",
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/tables/{table}.log",
    benchmark:
        "results/benchmarks/tables/{table}.tsv"
    shell:
        "smtlib report table --summaries {input.summaries} --methods {params.methods} "
        "--feature-sets {params.feature_sets} --not-applicable {params.not_applicable} "
        "--settings {params.settings:q} --title {params.title:q} --out {output.tsv} "
        "--companion {output.companion} --outputs {input.outputs} --test-refs {params.test_refs} "
        "--tests {output.tests} --pairs {params.pairs} {params.against} --initial {params.initial} "
        "{params.significance} "
        "{params.bleu} "
        "> {log} 2>&1"


# every method; each cell tested against its column's best only (the paper's tables test every pair),
# and against config extended_against's cell
use rule table as table_extended with:
    input:
        summaries=extended_summaries,
        outputs=extended_outputs,
        refs=table_refs,
        initial=table_initial_scores,
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
        tests="results/{table}_extended_tests.json",
    params:
        methods=extended_methods,
        feature_sets=" ".join(config["feature_sets"]),
        not_applicable=not_applicable_cells(),
        settings=table_settings(),
        title=extended_title,
        test_refs=table_ref_arguments,
        initial=table_initial_arguments,
        significance=significance_options(),
        pairs="best",
        against=extended_against,
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/tables/{table}_extended.log",
    benchmark:
        "results/benchmarks/tables/{table}_extended.tsv"


rule table_vs_paper:
    input:
        table="results/{table}.tsv",
        tests="results/{table}_tests.json",
    output:
        tsv=report(
            "results/{table}_vs_paper.tsv",
            caption="../config/report/vs_paper.rst",
            category="Tables",
            subcategory="{table}",
        ),
        findings=report(
            "results/{table}_findings.md",
            caption="../config/report/findings.rst",
            category="Findings",
            subcategory="{table}",
        ),
    wildcard_constraints:
        table="|".join(PAPER_TABLES),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/tables/{table}_vs_paper.log",
    benchmark:
        "results/benchmarks/tables/{table}_vs_paper.tsv"
    shell:
        "smtlib report paper --table {input.table} --tests {input.tests} --paper {wildcards.table} "
        "--out {output.tsv} --findings {output.findings} > {log} 2>&1"


# a table's files on one HTML page, which the report shows (it offers TSV and Markdown as downloads)
rule table_page:
    input:
        table="results/{table}.tsv",
        vs_paper="results/{table}_vs_paper.tsv",
        companion="results/{table}.md",
        findings="results/{table}_findings.md",
    output:
        report(
            "results/{table}.html",
            caption="../config/report/page.rst",
            category="Tables",
            subcategory="{table}",
        ),
    wildcard_constraints:
        table="|".join(PAPER_TABLES),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/tables/{table}_page.log",
    shell:
        "smtlib report page --title {wildcards.table} --files {input.table} {input.vs_paper} "
        "{input.companion} {input.findings} --out {output} > {log} 2>&1"


# tuning.metric as a list (a sweep): the tune-on-X / evaluate-on-Y matrix, rows pair x feature set x
# method x tuning metric, columns every metric of evaluation.metrics on the test sets
rule metric_matrix:
    input:
        summaries=matrix_summaries,
    output:
        report(
            "results/metric_matrix.tsv",
            caption="../config/report/metric_matrix.rst",
            category="Tables",
            subcategory="metric matrix",
        ),
    params:
        runs=matrix_arguments,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/tables/metric_matrix.log",
    shell:
        "smtlib report metric-matrix --run {params.runs} --out {output} > {log} 2>&1"


# Tan et al. (2013): c-MIRA against kb-mira on Small and Big and against kb-mert on Small (run-level
# paired tests, the AR p beside them), and updates and CPU seconds per tuning step from each step's
# --info JSON and benchmark file (smtlib.report.cmira), a restored run's from its record (its
# steps.json, rule restore_run); the runs are the extended table's
rule cmira_findings:
    input:
        summaries=cmira_summaries,
        outputs=cmira_outputs,
        refs=table_refs,
        info=cmira_tune_info,
        benchmarks=cmira_benchmarks,
        restored=cmira_restored_steps,
    output:
        md=report(
            "results/{table}_cmira.md",
            caption="../config/report/cmira.rst",
            category="Findings",
            subcategory="{table}",
        ),
        tsv="results/{table}_cmira.tsv",
    params:
        test_refs=table_ref_arguments,
        title=cmira_title,
        significance=significance_options(),
        bleu=bleu_options(),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/tables/{table}_cmira.log",
    benchmark:
        "results/benchmarks/tables/{table}_cmira.tsv"
    shell:
        "smtlib report cmira --summaries {input.summaries} --outputs {input.outputs} "
        "--test-refs {params.test_refs} --tune-info {input.info} --benchmarks {input.benchmarks} "
        "--restored-steps {input.restored} --title {params.title:q} {params.significance} {params.bleu} --out {output.md} --tsv {output.tsv} "
        "> {log} 2>&1"
