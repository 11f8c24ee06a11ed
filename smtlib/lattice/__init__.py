"""Translation lattices as a data layer: the file format, the in-memory set, paths, envelopes, path BLEU.

A sibling of :mod:`smtlib.kbest`, and in the same place in the layering: below both the decoder
that writes lattices (:mod:`smtlib.decoder` builds a :class:`~smtlib.lattice.format.Lattice` per
sentence and writes it with this package's writer) and the tuners that read them (lb-mert,
lb-mira, online MIRA). Nothing here imports the decoder or a tuner. The package re-exports nothing: import the module
that owns a name (``from smtlib.lattice.format import Lattice``).

Modules
-------
:mod:`~smtlib.lattice.format`
    The :class:`~smtlib.lattice.format.Lattice`, the ``smtlib-lattice/1`` text format, a checking
    reader and the compiled writer (byte-identical to formatting every value in Python).
:mod:`~smtlib.lattice.reader`
    The compiled reader of whole lattice files into a lattice set (what the tuners read).
:mod:`~smtlib.lattice.lattice_set`
    :class:`~smtlib.lattice.lattice_set.LatticeSet`: a dev set's lattices as flat arrays, with
    *whole-path edges* standing for hypotheses given from outside (a k-best pool is a lattice set
    whose lattices are bundles of whole paths).
:mod:`~smtlib.lattice.paths`
    Paths: Viterbi, k best paths (also the decoder's k-best lists), beam and density pruning.
:mod:`~smtlib.lattice.envelope`
    Upper envelopes of every path along a line (Macherey et al. 2008), for every sentence of a set
    (lattice MERT's line search, as breakpoints in the k-best line search's representation) or one
    lattice.
:mod:`~smtlib.lattice.stats`
    Exact BLEU statistics of lattice paths against per-sentence reference tables.
:mod:`~smtlib.lattice.problem`
    What a lattice tuning step reads (lattices, earlier iterations' paths, references) and writes
    (the paths aggregated for the next iteration, as a Moses n-best file).

Hope and fear decoding inside a lattice (the linear-BLEU oracle of lb-mira and online MIRA) is a
tuner's choice of objective, not a property of the data: it lives on the tuners' side, in
:mod:`smtlib.tuners.hope_fear`.

One lb-mert step, for a newcomer
--------------------------------
``smtlib tune lbmert --lattice it3/dev.lattice.gz --kbest it2/paths.kbest.gz --refs dev.en
--init w2 --out w3 --paths-out it3/paths.kbest.gz`` (the command, :mod:`smtlib.cli.tune_lattice`,
only wires files to the two layers below):

1. **lattice: read.** :func:`smtlib.lattice.problem.load_lattice_problem` reads the lattices with
   :func:`smtlib.lattice.reader.read_lattice_set` into a
   :class:`~smtlib.lattice.lattice_set.LatticeSetBuilder`, adds every aggregated path of
   ``--kbest`` as a whole-path edge of its sentence, builds the
   :class:`~smtlib.lattice.lattice_set.LatticeSet` and the reference tables
   (:func:`smtlib.lattice.stats.prepare_references`).
2. **tuners: optimize.** :meth:`smtlib.tuners.lbmert.LbMert.fit_lattices` runs MERT's coordinate
   ascent with random restarts. Each line search calls down into this package:
   :func:`smtlib.lattice.envelope.corpus_envelopes` gives every sentence's envelope as
   breakpoints and the edges of its paths, :func:`smtlib.lattice.stats.path_stats` their BLEU
   statistics; then the k-best line search's own merge and choice of the best interval
   (:func:`smtlib.tuners.line_search.interval_scores`, ``best_point``) pick the step. The paths
   met on an envelope are collected; the objective is the BLEU of the Viterbi paths
   (:func:`smtlib.lattice.paths.viterbi_paths`).
3. **lattice: write.** :func:`smtlib.lattice.problem.path_lines` formats the collected paths as
   n-best lines (:func:`smtlib.kbest.format.format_line`) and
   :func:`smtlib.lattice.problem.write_paths` writes them, with the paths given, for the next
   iteration's ``--kbest``.

The tuner calls down into this package and never the other way; the decoder is not involved.

Speed
-----
The hot loops are numba kernels over flat arrays, each kept whole in its module: the envelope pass
(:func:`smtlib.lattice.envelope._propagate`: a merge split across modules or functions would add
calls and reference counting inside the node loop, whose cost that module's docstring measures),
the path statistics (:mod:`smtlib.lattice.stats`: their kernels are also called from lb-mira's
compiled pass, so they take the references as one tuple of arrays), the reader's scanner and number
parser, and the writer's value formatter. Measured timings are in ``benchmarks/results/`` and in
``benchmarks/lattice_io.py`` / ``benchmarks/lattice_tuners.py``.
"""
