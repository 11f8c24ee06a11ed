# Figure 1's over-fitting feature set (Cherry & Foster 2012, §5.1): Big with the count-bin template
# made to distinguish every joint count (smtlib train assemble --count-bins exact; see
# smtlib/system/sparse.py). The model directory of the feature set `overfit` is assembled from the
# same work directory as Big (TM0 built with its sparse field, see needs_sparse).


rule train_assemble_overfit:
    input:
        prepare=rules.train_prepare.output.info,
        align=rules.train_align.output.info,
        tables=component_files("phrase-table.{}.gz", "overfit"),
        table_infos=component_files("phrases.{}.json", "overfit"),
        lms=component_files("lm.{}.arpa.gz", "overfit"),
        lm_infos=component_files("lm.{}.json", "overfit"),
        reordering=reordering_file("overfit"),
    output:
        spec=model_dir("{pair}", "overfit", "model.yaml"),
        weights=model_dir("{pair}", "overfit", DEFAULT_WEIGHTS),
        compiled=model_dir("{pair}", "overfit", "compiled.bin"),
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/assemble.overfit.log",
    shell:
        "smtlib train assemble --feature-set big --count-bins exact --prepare-info {input.prepare} "
        "--align-info {input.align} --phrase-table {input.tables} --phrases-info {input.table_infos} "
        "--lm {input.lms} --lm-info {input.lm_infos} --reordering-table {input.reordering} "
        "--out {output.spec} > {log} 2>&1"


ruleorder: train_assemble_overfit > train_assemble
