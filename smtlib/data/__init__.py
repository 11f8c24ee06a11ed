"""Experiment inputs: corpus registry and retrieval with checksums, dev sub-sampling, initial weights.

* :mod:`smtlib.data.corpora` -- the files, their public sources and content checksums; ``locate``.
* :mod:`smtlib.data.fetch` -- one language pair's train/dev/test as plain text for the workflow.
* :mod:`smtlib.data.subsample` -- Cherry & Foster (2012) §4.3's dev sub-samples.
* :mod:`smtlib.data.slicing` -- a sub-sample's share of the full dev set's decoder output (k-best
  lists, 1-best files, lattices), cut by its ids (``smtlib kbest slice``).
* :mod:`smtlib.data.init_weights` -- Cherry & Foster (2012) §4.2's initial weights.
"""
