"""Small random lattices and brute-force enumeration of their paths (shared by the lattice tests)."""

from __future__ import annotations

import numpy as np

from smtlib.lattice.format import Lattice

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
