"""The workflow's plan as plain functions: paths, run lists and command-line options.

The rules (``rules/*.smk``) bind these to the validated ``config`` and to their jobs' wildcards; here
they take plain values (the config as a dict, names, numbers), so they can be imported and tested
without Snakemake, and reused by the benchmarks.

:mod:`~smtlib.workflow.paths`
    Where every stage's files live (``results/...``, ``logs/...``), as patterns and for given values.
:mod:`~smtlib.workflow.runs`
    The experiment's runs: hyper-parameter settings, the run lists of the tables, the metric matrix,
    Figure 1's sweep, and the default target.
:mod:`~smtlib.workflow.options`
    The options the rules pass to ``smtlib``: data limits, BLEU, the decoder's search, the tuners'
    ``--set`` and seeds, the tables' significance and settings.
:mod:`~smtlib.workflow.config`
    Config files merged as ``snakemake --configfile`` merges them (for the benchmarks and tests).

The package sits above the layers it reads names and defaults from (the tuner registry, the corpora,
the feature sets, the decoder's settings) and below nothing: no module of ``smtlib`` imports it.
"""
