# Cherry & Foster (2012), "Batch Tuning Strategies for Statistical Machine Translation", end to end:
# data, dev sub-samples, systems, the tuning loop, evaluation, Tables 4-6, Figure 1, learning curves,
# the PRO-vs-MERT synthetic figure, and a replay of Moses's recorded n-best lists; apart from the default
# target, Hopkins & May (2011)'s stability experiment on real systems (target `stability`) and Simianer et
# al. (2012)'s Table 2 (target `simianer`).
#
#   snakemake --cores 8 --config data_dir=../shared/data -- results/table4.tsv
#   snakemake --cores 2 --configfile config/quick.yaml --config data_dir=../shared/data -- results/table4.tsv
#   snakemake --report report.html --config data_dir=../shared/data -- results/table4.html results/figures/curves_fr-en.png
#
# Every stage is one file in rules/; the shared helpers are in rules/common.smk (their plain functions in
# smtlib/workflow/), a stage's own next to its rules; settings in config/.

import os
import sys

from smtlib.workflow import run_settings
from smtlib.workflow.scheduler_wakeups import keep_one_pending_wakeup

# Snakemake 9's scheduler adds a timed wake-up per finished job while other jobs wait for cores, and
# would spend a core on them in a long run: one pending at a time (smtlib.workflow.scheduler_wakeups)
keep_one_pending_wakeup()


# the defaults, found next to this file whatever the working directory (-d); --configfile merges over it
configfile: os.path.join(workflow.basedir, "config", "config.yaml")


# a report describes the run in results/: that run's settings (recorded when it started), not the
# defaults of a report call that names no --configfile (smtlib.workflow.run_settings)
REPORT_CONFIGFILES = None
if "--report" in sys.argv:
    REPORT_CONFIGFILES = run_settings.adopt_for_report(
        config, workflow.overwrite_configfiles
    )


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
include: "rules/stability_common.smk"
include: "rules/stability.smk"


report: "config/report/workflow.rst"


# after the schema check, which would reject the key: the report's home page names the files
if REPORT_CONFIGFILES is not None:
    config[run_settings.REPORT_KEY] = {
        "settings": run_settings.describe(REPORT_CONFIGFILES)
    }


# numba compiles its kernels on first use: once, here, rather than in every first job at once
# (smtlib.warmup; skipped in milliseconds once done; SMTLIB_WARMUP=0 turns it off)
# on a SLURM cluster, a job that can never start (a request over its partition's limits) fails the run
# with the reason instead of leaving it waiting forever (smtlib.slurm_watch)
onstart:
    run_settings.record(config, workflow.overwrite_configfiles)
    warm_up_numba()
    watch_slurm_queue()


# the last lines of a successful run say where its tables are
onsuccess:
    announce_tables()


rule all:
    input:
        all_targets(),
    default_target: True
