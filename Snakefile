# Cherry & Foster (2012), "Batch Tuning Strategies for Statistical Machine Translation", end to end:
# data, dev sub-samples, systems, the tuning loop, evaluation, Tables 4-6, Figure 1, learning curves,
# the PRO-vs-MERT synthetic figure, and a replay of Moses's recorded n-best lists.
#
#   snakemake --cores 8 --config data_dir=../shared/data -- results/table4.tsv
#   snakemake --cores 2 --configfile config/quick.yaml --config data_dir=../shared/data -- results/table4.tsv
#   snakemake --report report.html --config data_dir=../shared/data -- results/table4_vs_paper.tsv
#
# Every stage is one file in rules/; the shared helpers are in rules/common.smk (their plain functions in
# smtlib/workflow/), a stage's own next to its rules; settings in config/.

import os


# the defaults, found next to this file whatever the working directory (-d); --configfile merges over it
configfile: os.path.join(workflow.basedir, "config", "config.yaml")


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/system.smk"
include: "rules/tune.smk"
include: "rules/restore.smk"
include: "rules/tuners_common.smk"
include: "rules/tune_lattice.smk"
include: "rules/tune_online.smk"
include: "rules/overfit.smk"
include: "rules/evaluate.smk"
include: "rules/report_common.smk"
include: "rules/tables.smk"
include: "rules/figures.smk"
include: "rules/replay_common.smk"
include: "rules/replay.smk"
include: "rules/simianer_common.smk"
include: "rules/simianer.smk"


report: "config/report/workflow.rst"


# numba compiles its kernels on first use: once, here, rather than in every first job at once
# (smtlib.warmup; skipped in milliseconds once done; SMTLIB_WARMUP=0 turns it off)
# on a SLURM cluster, a job that can never start (a request over its partition's limits) fails the run
# with the reason instead of leaving it waiting forever (smtlib.slurm_watch)
onstart:
    warm_up_numba()
    watch_slurm_queue()


# the last lines of a successful run say where its tables are
onsuccess:
    announce_tables()


rule all:
    input:
        all_targets(),
    default_target: True
