"""A phrase-based stack decoder (Koehn et al. 2003; Moses) with k-best lists and lattices.

Modules
-------
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
    One sentence end to end: options, search, features per edge, k-best lines.
:mod:`~smtlib.decoder.lattice`
    The lattice and its file format.
:mod:`~smtlib.decoder.lattice_writer`
    The compiled writer of lattice blocks (byte-identical to formatting each value in Python).
:mod:`~smtlib.decoder.lattice_paths`
    Paths through a lattice: best path, k best paths, beam pruning, upper envelope.
:mod:`~smtlib.decoder.driver`
    A whole file in one or several processes with a progress line (``smtlib decode``).

Example::

    from smtlib.decoder import load_model, Decoder, DecoderConfig
    model = load_model("models/fr-en-medium", [line.split() for line in lines])
    weights = model.read_weights(smtlib.weights.read_weights("w.txt"))
    result = Decoder(model, weights, DecoderConfig(k=100)).decode(lines[0], 0, lattice=True)
"""

from smtlib.decoder.decoder import Decoder, DecoderConfig, SentenceResult, format_kbest_line
from smtlib.decoder.driver import decode_file
from smtlib.decoder.lattice import Lattice, read_lattices
from smtlib.decoder.lattice_paths import Envelope, best_path, kbest_paths, upper_envelope
from smtlib.decoder.loader import load_model
from smtlib.decoder.model import PhraseModel

__all__ = [
    "Decoder",
    "DecoderConfig",
    "Envelope",
    "Lattice",
    "PhraseModel",
    "SentenceResult",
    "best_path",
    "decode_file",
    "format_kbest_line",
    "kbest_paths",
    "load_model",
    "read_lattices",
    "upper_envelope",
]
