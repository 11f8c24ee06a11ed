"""A phrase-based stack decoder (Koehn et al. 2003; Moses) with k-best lists and lattices.

Modules
-------
:mod:`~smtlib.decoder.settings`
    :class:`DecoderConfig`: the search settings and their defaults (read by the CLI and the workflow).
:mod:`~smtlib.decoder.lm`
    ARPA back-off LMs as one packed hash table, queried from compiled code with KenLM-style state
    minimization (natural-log scores, as Moses reports them).
:mod:`~smtlib.decoder.model`
    The loaded model, the dense feature layout, weights checking.
:mod:`~smtlib.decoder.loader`
    Loading a model directory (:mod:`smtlib.system.modeldir`) filtered to the input, from its
    compiled form (:mod:`~smtlib.decoder.compiled`) or its text tables
    (:mod:`~smtlib.decoder.phrases`, :mod:`~smtlib.decoder.arpa`).
:mod:`~smtlib.decoder.search`
    The compiled stack search: future costs, distortion limit, recombination, histogram pruning,
    the search graph.
:mod:`~smtlib.decoder.cube`
    Cube pruning (Moses's ``-search-algorithm 1``): the same stacks and search graph, at most
    ``pop_limit`` extensions scored best-first per stack (``DecoderConfig(search="cube")``).
:mod:`~smtlib.decoder.decoder`
    One sentence end to end: options, search, features per edge, k-best lines, the lattice.
:mod:`~smtlib.decoder.driver`
    A whole file in one or several processes with a progress line (``smtlib decode``).

The decoder *produces* k-best lists and lattices through the data layers below it, as the tuners
read them: the k-best line format is :mod:`smtlib.kbest.format`; the lattice, its file format and
the k-best paths and beam pruning of a search graph are :mod:`smtlib.lattice` (reading lattices,
envelopes and path statistics live there too, for the tuners).

Example::

    from smtlib.decoder import load_model, Decoder, DecoderConfig
    model = load_model("models/fr-en-medium", [line.split() for line in lines])
    weights = model.read_weights(smtlib.weights.read_weights("w.txt"))
    result = Decoder(model, weights, DecoderConfig(k=100)).decode(lines[0], 0, lattice=True)
"""

from smtlib._lazy import lazy_exports

# imported on first use: the light settings module (smtlib.decoder.settings, read by the CLI and the
# workflow) does not import the compiled decoder through this package
__getattr__, __all__ = lazy_exports(__name__, {
    ".decoder": ("Decoder", "SentenceResult"),
    ".settings": ("DecoderConfig",),
    ".model": ("PhraseModel",),
    ".driver": ("decode_file",),
    ".loader": ("load_model",),
})
