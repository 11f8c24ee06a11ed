"""The workflow's results in the layout of Cherry & Foster (2012): one module per responsibility.

:mod:`~smtlib.report.runs` (one tuning run: BLEU results, best iteration, learning curve, summary),
:mod:`~smtlib.report.tables` (Tables 4-6: Tune/Test/SD per cell and the Markdown companion),
:mod:`~smtlib.report.curves` (learning curves of many runs), :mod:`~smtlib.report.sweep` (Figure 1),
:mod:`~smtlib.report.replay` (our methods on Moses's recorded n-best lists),
:mod:`~smtlib.report.paper` (our tables next to the published ones),
:mod:`~smtlib.report.pro_mert` (Hopkins & May 2011, Figure 3) and :mod:`~smtlib.report.figures`
(drawing and writing figures). ``smtlib report`` (:mod:`smtlib.cli.report`) parses options, calls
them and writes the outputs atomically.
"""
