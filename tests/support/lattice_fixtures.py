"""Small random lattices and brute-force enumeration of their paths (shared by the lattice and the lattice
tuners' tests)."""

from __future__ import annotations

import numpy as np

from smtlib.bleu.stats import BleuSettings
from smtlib.lattice.format import Lattice
from smtlib.lattice.lattice_set import lattice_set_from_lattices
from smtlib.lattice.stats import prepare_references

VOCAB = ["a", "man", "dog", "the", "runs", "on", "grass", "blue", "."]
NAMES = ["tm_0", "lm_0", "wp_0"]


def random_lattice(rng: np.random.Generator, sent_id: int = 0, n_nodes: int = 6, extra: int = 5,
                   integer: bool = False, sparse: bool = False) -> Lattice:
    """A DAG with a chain 0 -> 1 -> ... -> goal plus ``extra`` random forward edges (sorted by head)."""
    edges = [(v, v + 1) for v in range(n_nodes - 1)]
    for _ in range(extra):
        t = int(rng.integers(0, n_nodes - 1))
        h = int(rng.integers(t + 1, n_nodes))
        edges.append((t, h))
    edges.sort(key=lambda e: (e[1], e[0]))
    n = len(edges)
    dense = rng.integers(-3, 4, size=(n, len(NAMES))).astype(float) if integer else rng.normal(size=(n, len(NAMES)))
    words = [tuple(rng.choice(VOCAB, size=int(rng.integers(1, 3))).tolist()) for _ in range(n)]
    sp = [({"cbin_1": 1.0} if rng.random() < 0.5 else {}) if sparse else {} for _ in range(n)]
    return Lattice(sent_id, n_nodes, np.array([e[0] for e in edges]), np.array([e[1] for e in edges]), words,
                   dense, sp, list(NAMES))


def all_paths(lat: Lattice) -> list[list[int]]:
    """Every start-to-goal path (edge ids) by depth-first enumeration."""
    out_edges: dict[int, list[int]] = {}
    for e in range(len(lat.tails)):
        out_edges.setdefault(int(lat.tails[e]), []).append(e)
    goal = lat.n_nodes - 1
    paths: list[list[int]] = []

    def walk(v: int, acc: list[int]) -> None:
        if v == goal:
            paths.append(list(acc))
            return
        for e in out_edges.get(v, []):
            acc.append(e)
            walk(int(lat.heads[e]), acc)
            acc.pop()

    walk(0, [])
    return paths


def path_words(lat: Lattice, path: list[int]) -> list[str]:
    return [w for e in path for w in lat.words[e]]


def random_reference(rng: np.random.Generator, length: int = 6) -> str:
    return " ".join(rng.choice(VOCAB, size=length).tolist())


SETTINGS = BleuSettings(tokenize="none")  # the lattices' words are tokens already


def random_problem(seed: int, n_sent: int = 4, n_nodes: int = 6, extra: int = 5, sparse: bool = False):
    """``n_sent`` random lattices with a reference each, as the tuners see them: ``(rng, lattices,
    references, lattice set, prepared references)``, the generator left where the draws stopped."""
    rng = np.random.default_rng(seed)
    lats = [random_lattice(rng, s, n_nodes=n_nodes, extra=extra, sparse=sparse) for s in range(n_sent)]
    refs = [random_reference(rng) for _ in range(n_sent)]
    ls = lattice_set_from_lattices(lats, n_sent)
    return rng, lats, refs, ls, prepare_references(ls, [refs], SETTINGS)


def global_paths(ls, lats):
    """Every path of every lattice as global edge ids of ``ls`` (the set keeps each lattice's edge order)."""
    out = []
    for s, lat in enumerate(lats):
        base = int(ls.edge_off[s])
        for p in all_paths(lat):
            out.append((s, p, [base + e for e in p]))
    return out
