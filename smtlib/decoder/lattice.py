"""Translation lattices: the decoder's search graph with a feature vector on every edge.

File format (``smtlib-lattice/1``), UTF-8 text, plain or gzip (by the ``.gz`` name)::

    #smtlib-lattice/1
    #features TranslationModel0_0 TranslationModel0_1 ... LexicalReordering0_5
    SENTENCE 0 NODES 5 EDGES 7
    0 1 ||| a man ||| -1.2 -0.7 -2.3 -0.9 -8.04 -2 0 ||| cbin_3=1
    0 2 ||| man ||| ...
    ...
    SENTENCE 1 NODES 2 EDGES 1
    0 1 ||| ||| 0 0 0 0 -1.9 0 0 |||

* The ``#features`` line names the dense values, in the order of every edge's third field (the
  model's ``dense_features`` order, as in k-best lines).
* One block per input sentence, with the 0-based sentence id, the number of nodes and of edges.
  Node 0 is the start (nothing translated), node ``NODES-1`` the goal (everything translated,
  end-of-sentence scored). Nodes are numbered topologically: every edge has ``tail < head``.
* An edge line is ``tail head ||| target words ||| dense values ||| sparse`` where the target words
  are the phrase the edge appends (empty only for the single edge of an empty sentence), the dense
  values are the edge's *increment* of every dense feature (phrase scores, the LM scores of the new
  words in their context and, on edges into the goal, of ``</s>``, word penalty, distortion,
  lexicalized reordering), and ``sparse`` is ``name=value`` pairs of the edge's sparse features
  (possibly empty). Edges are sorted by head, then by tail.
* A path from 0 to the goal is one derivation of a translation: its words are the concatenation of
  its edges' words, its feature vector the sum of its edges' vectors, and its model score ``w . h``
  the sum of the edges' scores. Every hypothesis the decoder kept after recombination and pruning is
  a path; recombined hypotheses (Moses's arcs) are extra incoming edges of the same node.

With a lattice beam (``smtlib decode --lattice-beam B``, default 10; 0 = the whole graph) only the edges whose best path scores
within ``B`` of the 1-best (under the decoding weights) are written, together with every edge of
the k-best paths, so the 1-best and the k-best list are still paths
(:func:`smtlib.decoder.lattice_paths.beam_prune_nb`).

Here: the :class:`Lattice` and the file format, :func:`read_lattices` / :func:`iter_lattices` (a
checking reader; the tuners read whole files with the compiled
:func:`smtlib.decoder.lattice_reader.read_lattice_set`) / :func:`write_lattice`. The values are
written as :func:`_fmt` gives them (``0`` for zeros, else 9 significant digits, ``format(v, ".9g")``)
by the compiled writer :func:`smtlib.decoder.lattice_writer.lattice_block`, which gives exactly
those bytes (its module docstring says how). Paths through a lattice (Viterbi, k-best, beam pruning,
the upper envelope): :mod:`smtlib.decoder.lattice_paths`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Generic, TypeVar

import numpy as np

from smtlib.errors import InputError
from smtlib.io import open_text
from smtlib.values import parse_number

FORMAT = "#smtlib-lattice/1"

T = TypeVar("T")


class IndexedValues(Sequence, Generic[T]):
    """A read-only sequence stored as its distinct values and, per item, the index of its value.

    A :class:`Lattice`'s ``words`` and ``sparse`` repeat across edges (one phrase per translation
    option, one sparse dict per phrase-table entry); the decoder gives them in this form, so that
    it makes one tuple and one dict per option and entry rather than per edge, and the writer
    (:mod:`smtlib.decoder.lattice_writer`) formats each distinct value once. It behaves as the list
    ``[values[i] for i in ids]`` (indexing, iteration, ``len``, ``==`` with any sequence); the items
    are shared, so treat them as read-only.
    """

    __slots__ = ("ids", "values")

    def __init__(self, ids: np.ndarray, values: list[T]):
        self.ids = np.asarray(ids, dtype=np.int64)
        self.values = values

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.values[j] for j in self.ids[i].tolist()]
        return self.values[self.ids[i]]

    def __iter__(self):
        values = self.values
        return (values[j] for j in self.ids.tolist())

    def __eq__(self, other) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"IndexedValues({list(self)!r})"


@dataclasses.dataclass
class Lattice:
    """One sentence's lattice (see the module docstring).

    Attributes
    ----------
    sent_id, n_nodes
        Sentence id and number of nodes (0 = start, ``n_nodes-1`` = goal).
    tails, heads
        Edge end points, ``tails < heads``.
    words
        Target words of each edge (a tuple of strings): a list, or an :class:`IndexedValues` (as
        the decoder builds lattices).
    dense
        ``(n_edges, n_dense)`` feature increments.
    sparse
        Per edge, ``{name: value}``: a list, or an :class:`IndexedValues`.
    feature_names
        Names of the dense columns.
    """

    sent_id: int
    n_nodes: int
    tails: np.ndarray
    heads: np.ndarray
    words: Sequence[tuple[str, ...]]
    dense: np.ndarray
    sparse: Sequence[dict[str, float]]
    feature_names: list[str]

    @property
    def n_edges(self) -> int:
        return len(self.tails)

    def edge_scores(self, weights: Mapping[str, float] | np.ndarray) -> np.ndarray:
        """``w . h_e`` of every edge; ``weights`` is a name->value map or a dense vector."""
        if isinstance(weights, np.ndarray):
            return self.dense @ weights
        w = np.array([weights.get(n, 0.0) for n in self.feature_names], dtype=np.float64)
        out = self.dense @ w
        for e, sp in enumerate(self.sparse):
            for name, v in sp.items():
                out[e] += weights.get(name, 0.0) * v
        return out

    def path_features(self, edges: list[int] | np.ndarray) -> tuple[np.ndarray, dict[str, float]]:
        """Summed dense and sparse features of a path."""
        dense = self.dense[np.asarray(edges, dtype=np.int64)].sum(axis=0) if len(edges) else np.zeros(
            self.dense.shape[1])
        sparse: dict[str, float] = {}
        for e in edges:
            for name, v in self.sparse[e].items():
                sparse[name] = sparse.get(name, 0.0) + v
        return dense, sparse

    def path_words(self, edges: list[int] | np.ndarray) -> list[str]:
        return [w for e in edges for w in self.words[e]]

    def _word_ids(self) -> tuple[np.ndarray, np.ndarray]:
        vocab: dict[str, int] = {}
        ids = [vocab.setdefault(w, len(vocab)) for ws in self.words for w in ws]
        offs = np.zeros(self.n_edges + 1, dtype=np.int64)
        offs[1:] = np.cumsum([len(ws) for ws in self.words])
        return offs, np.array(ids, dtype=np.int64)


# ---------------------------------------------------------------------------------------- I/O
def _fmt(v: float) -> str:
    """A value as the lattice format writes it: ``0`` for zeros (``-0.0`` too), else ``.9g``."""
    if v == 0.0:
        return "0"
    return f"{v:.9g}"


def write_lattice(out: IO[str], lat: Lattice) -> None:
    """Write one sentence block to a text stream (the header line is written by the caller, see
    :func:`lattice_header`).

    The block is made by :func:`smtlib.decoder.lattice_writer.lattice_block` (compiled, byte-identical
    to formatting every value with :func:`_fmt`); binary streams take that function's bytes directly.
    """
    from smtlib.decoder.lattice_writer import lattice_block  # it imports this module

    out.write(lattice_block(lat).decode("utf-8"))


def lattice_header(feature_names: list[str]) -> str:
    return f"{FORMAT}\n#features {' '.join(feature_names)}\n"


def _count(text: str, what: str, path, lineno: int) -> int:
    if not text.isascii() or not text.isdigit():
        raise InputError(f"{what} {text!r} is not a non-negative integer", path, lineno)
    return int(text)


def _edge_line(line: str, names: list[str], n_nodes: int, path, lineno: int):
    """(tail, head, words, dense values, sparse) of one edge line; an InputError names the line."""
    if not line.endswith("\n"):
        what = "the file ends inside a block (truncated?)" if not line else "the last line has no line end (truncated?)"
        raise InputError(what, path, lineno)
    if "||||" in line:
        raise InputError("'||||' is ambiguous: which three '|' are the separator?", path, lineno)
    fields = line[:-1].split("|||")
    if len(fields) != 4:
        raise InputError(f"edge line must have 4 '|||'-separated fields, found {len(fields)}", path, lineno)
    ends = fields[0].split()
    if len(ends) != 2:
        raise InputError(f"expected 'tail head' before the first '|||', got {fields[0].strip()!r}", path, lineno)
    tail, head = (_count(x, "node", path, lineno) for x in ends)
    if not 0 <= tail < head < n_nodes:
        raise InputError(f"edge {tail} -> {head} does not satisfy 0 <= tail < head < NODES ({n_nodes})", path, lineno)
    values = [parse_number(v, "dense value", path, lineno) for v in fields[2].split()]
    sparse: dict[str, float] = {}
    for item in fields[3].split():
        name, sep, value = item.partition("=")
        if not sep or not name or "=" in value:
            raise InputError(f"sparse feature {item!r} is not 'name=value' (sparse names never hold '=')", path, lineno)
        if name in sparse:
            raise InputError(f"sparse feature {name!r} appears twice", path, lineno)
        sparse[name] = parse_number(value, f"value of sparse feature {name!r}:", path, lineno)
    return tail, head, tuple(fields[1].split()), values, sparse


def iter_lattices(path: str | os.PathLike) -> Iterator[Lattice]:
    """Read a lattice file block by block.

    Every line is checked, so that a damaged file is an error at its real line rather than another
    lattice: numbers follow :mod:`smtlib.values` (finite), sentence ids are 0, 1, 2 ... (one block
    per input sentence, as ``smtlib decode --lattice`` writes them), every edge has as many dense
    values as the ``#features`` line names (when the first two edges of the file agree with each
    other but not with it, the ``#features`` line is the one reported), edges are sorted by head
    then tail, a sparse feature appears once per edge, and the file ends with a line end.

    Raises
    ------
    InputError
        On a malformed file, naming the file and the 1-based line.
    """
    with open_text(path, what="lattice file") as fh:
        first = fh.readline()
        if first.rstrip("\n") != FORMAT:
            raise InputError(f"not a lattice file (first line should be {FORMAT!r})", path, 1)
        second = fh.readline()
        parts = second.split()
        if not parts or parts[0] != "#features" or not second.endswith("\n"):
            raise InputError("missing '#features' line", path, 2)
        names = parts[1:]
        if not names:
            raise InputError("the '#features' line names no feature", path, 2)
        if len(set(names)) != len(names):
            raise InputError("the '#features' line names a feature twice", path, 2)
        lineno = 2
        edges_seen = 0
        expected_id = 0
        while True:
            header = fh.readline()
            lineno += 1
            if not header:
                return
            parts = header.split()
            if len(parts) != 6 or parts[0] != "SENTENCE" or parts[2] != "NODES" or parts[4] != "EDGES" or not header.endswith("\n"):
                raise InputError(f"expected 'SENTENCE id NODES n EDGES m', got {header.strip()!r}", path, lineno)
            sent_id, n_nodes, n_edges = (_count(parts[k], parts[k - 1].lower() if k > 1 else "sentence id", path, lineno)
                                         for k in (1, 3, 5))
            if sent_id != expected_id:
                raise InputError(f"sentence id {sent_id} where {expected_id} is expected (blocks are 0, 1, 2 ...)", path, lineno)
            expected_id += 1
            if n_nodes < 2 or n_edges < 1:
                raise InputError("a lattice has 2 nodes and 1 edge at least", path, lineno)
            tails = np.zeros(n_edges, dtype=np.int64)
            heads = np.zeros(n_edges, dtype=np.int64)
            dense = np.zeros((n_edges, len(names)))
            words: list[tuple[str, ...]] = []
            sparse: list[dict[str, float]] = []
            for e in range(n_edges):
                line = fh.readline()
                lineno += 1
                tail, head, phrase, vals, sp = _edge_line(line, names, n_nodes, path, lineno)
                if len(vals) != len(names):
                    if edges_seen == 0:
                        ahead = fh.readline().split("|||")
                        if len(ahead) == 4 and len(ahead[2].split()) == len(vals):
                            raise InputError(f"the '#features' line names {len(names)} features but the edges have "
                                             f"{len(vals)} values", path, 2)
                    raise InputError(f"edge has {len(vals)} dense values, expected {len(names)}", path, lineno)
                if e and (head, tail) < (heads[e - 1], tails[e - 1]):
                    raise InputError(f"edge {tail} -> {head} after {tails[e - 1]} -> {heads[e - 1]}: edges must be sorted "
                                     "by head, then tail", path, lineno)
                tails[e], heads[e] = tail, head
                dense[e] = vals
                words.append(phrase)
                sparse.append(sp)
                edges_seen += 1
            yield Lattice(sent_id, n_nodes, tails, heads, words, dense, sparse, names)


def read_lattices(path: str | os.PathLike) -> list[Lattice]:
    """All lattices of a file."""
    return list(iter_lattices(path))
