# Figure 1's over-fitting feature set (Cherry & Foster 2012, §5.1): Big with the count-bin template
# made to distinguish every joint count (smtlib train assemble --count-bins exact; see
# smtlib/system/sparse.py). The model directory of the feature set `overfit` is assembled from the
# same work directory as Big (TM0 built with its sparse field, see needs_sparse).


rule train_assemble_overfit:
    input:
        overfit_components,
    output:
        spec=model_dir("{pair}", "overfit", "model.yaml"),
        weights=model_dir("{pair}", "overfit", "weights.init"),
    params:
        work=input_dir_of,
        out=dir_of,
    conda:
        "../envs/smtlib.yaml"
    log:
        "logs/systems/{pair}/assemble.overfit.log",
    shell:
        "smtlib train assemble --work {params.work} --feature-set big --count-bins exact --out {params.out} "
        "> {log} 2>&1"


ruleorder: train_assemble_overfit > train_assemble
