"""The shortcuts of the lattice envelope kernel change nothing: node envelopes bit for bit.

:func:`smtlib.lattice.envelope.sentence_envelope` skips the merges of incoming envelopes
that cannot change the head's envelope, and starts the others where the first change can be
(``_first_change``). The reference here is the kernel without
any shortcut, written out in plain Python: every node's envelope is built by merging its incoming
edges one at a time, every line pushed through the same hull rule (``_reference_push``, the same
floating-point operations as ``_push``). Every node's lines (slope, intercept, edge, line of the
tail) must be identical, on lattices with Gaussian features (no ties) and with small integer
features (many equal slopes, equal intercepts and lines crossing at one point, where the tie rules
decide), and dense lattices with high in-degree like the decoder's (whose goal nodes have
thousands of incoming edges). The goal envelope is also checked against brute-force enumeration
of the paths.
"""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.lattice.envelope import new_workspace, sentence_envelope
from tests.support.lattice_fixtures import all_paths, random_lattice


def _reference_push(stack: list, line: tuple) -> None:
    """``_push`` in plain Python (``stack`` holds (slope, intercept, edge, pred, start))."""
    sl, ic = line[0], line[1]
    if stack and stack[-1][0] == sl:
        if ic <= stack[-1][1]:
            return
        stack.pop()
    x = -np.inf
    while stack:
        with np.errstate(divide="ignore", invalid="ignore"):
            x = float(np.float64(stack[-1][1] - ic) / np.float64(sl - stack[-1][0]))
        if len(stack) > 1 and x <= stack[-1][4]:
            stack.pop()
            continue
        break
    stack.append((sl, ic, line[2], line[3], x if stack else -np.inf))


def reference_envelopes(n_nodes: int, tails: np.ndarray, heads: np.ndarray, a: np.ndarray, b: np.ndarray) -> list[list[tuple]]:
    """Every node's envelope as (slope, intercept, edge, tail line index) by one-at-a-time merges."""
    env: list[list[tuple]] = [[] for _ in range(n_nodes)]
    index: list[list[int]] = [[] for _ in range(n_nodes)]  # global line indices, as the kernel numbers them
    env[0] = [(0.0, 0.0, -1, -1)]
    index[0] = [0]
    used = 1
    e = 0
    while e < len(tails):
        v = int(heads[e])
        cur: list[tuple] = []
        started = False
        while e < len(tails) and heads[e] == v:
            t = int(tails[e])
            incoming = [(env[t][q][0] + b[e], env[t][q][1] + a[e], e, index[t][q]) for q in range(len(env[t]))]
            if incoming:
                if not started:
                    stack: list = []
                    for line in incoming:
                        _reference_push(stack, line)
                    started = True
                else:
                    stack = []
                    i = j = 0
                    while i < len(cur) or j < len(incoming):
                        if j >= len(incoming) or (i < len(cur) and cur[i][0] <= incoming[j][0]):
                            _reference_push(stack, cur[i])
                            i += 1
                        else:
                            _reference_push(stack, incoming[j])
                            j += 1
                cur = [s[:4] for s in stack]
            e += 1
        env[v] = cur
        index[v] = list(range(used, used + len(cur)))
        used += len(cur)
    return env


def kernel_envelopes(n_nodes: int, tails: np.ndarray, heads: np.ndarray, a: np.ndarray, b: np.ndarray) -> list[list[tuple]]:
    ws, _ = sentence_envelope(n_nodes, 0, len(tails), tails, heads, a, b, new_workspace(4))
    env_s, env_i, env_e, env_p, node_lo, node_hi = ws[:6]
    return [[(float(env_s[q]), float(env_i[q]), int(env_e[q]), int(env_p[q])) for q in range(node_lo[v], node_hi[v])]
            for v in range(n_nodes)]


def dense_lattice(rng: np.random.Generator, n_nodes: int, fan_in: int, integer: bool):
    """Every node gets edges from up to ``fan_in`` earlier nodes (several parallel ones), sorted by head."""
    edges = []
    for v in range(1, n_nodes):
        for _ in range(int(rng.integers(1, fan_in + 1))):
            edges.append((int(rng.integers(max(0, v - 4), v)), v))
    edges.sort(key=lambda e: e[1])
    tails = np.array([t for t, _ in edges], dtype=np.int64)
    heads = np.array([h for _, h in edges], dtype=np.int64)
    feats = rng.integers(-3, 4, size=(len(edges), 3)).astype(float) if integer else rng.normal(size=(len(edges), 3))
    return tails, heads, feats


def _check(n_nodes, tails, heads, a, b):
    got = kernel_envelopes(n_nodes, tails, heads, a, b)
    want = reference_envelopes(n_nodes, tails, heads, a, b)
    assert got == want  # floats compared exactly


@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_node_envelopes_equal_the_plain_merge_bit_for_bit(seed, integer):
    rng = np.random.default_rng(7000 + seed)
    lat = random_lattice(rng, n_nodes=9, extra=25, integer=integer)
    tails, heads = lat.tails.astype(np.int64), lat.heads.astype(np.int64)
    for _ in range(4):
        w = rng.integers(-2, 3, size=3).astype(float) if integer else rng.normal(size=3)
        d = rng.integers(-2, 3, size=3).astype(float) if integer else rng.normal(size=3)
        a, b = lat.dense @ w, np.ascontiguousarray(lat.dense @ d)
        _check(lat.n_nodes, tails, heads, a, b)
        # the goal's lines are the brute-force upper envelope of the enumerated paths
        goal = kernel_envelopes(lat.n_nodes, tails, heads, a, b)[-1]
        paths = all_paths(lat)
        pa = np.array([a[p].sum() for p in paths])
        pb = np.array([b[p].sum() for p in paths])
        for x in np.linspace(-6, 6, 61):
            best = max(i + x * s for s, i, _, _ in goal)
            assert best == pytest.approx(np.max(pa + x * pb), abs=1e-9)


@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_high_in_degree_lattices_equal_the_plain_merge_bit_for_bit(seed, integer):
    rng = np.random.default_rng(8000 + seed)
    tails, heads, feats = dense_lattice(rng, n_nodes=40, fan_in=12, integer=integer)
    for _ in range(3):
        w = rng.integers(-2, 3, size=3).astype(float) if integer else rng.normal(size=3)
        d = rng.integers(-2, 3, size=3).astype(float) if integer else rng.normal(size=3)
        _check(40, tails, heads, feats @ w, np.ascontiguousarray(feats @ d))
    # a coordinate direction, as lbmert's line searches use: slopes are one feature column
    _check(40, tails, heads, feats @ np.ones(3), np.ascontiguousarray(feats[:, 1]))


def test_buffers_grown_between_nodes_change_nothing():
    """A workspace too small for the lattice (grown node by node, resuming where it stopped) gives the
    envelopes of one large enough from the start."""
    rng = np.random.default_rng(9100)
    tails, heads, feats = dense_lattice(rng, n_nodes=40, fan_in=12, integer=False)
    a, b = feats @ rng.normal(size=3), np.ascontiguousarray(feats @ rng.normal(size=3))
    small = new_workspace(2)
    grown, used = sentence_envelope(40, 0, len(tails), tails, heads, a, b, small)
    assert grown[0].shape[0] > small[0].shape[0] and grown[6].shape[1] > small[6].shape[1]  # both buffers grew
    large, used_large = sentence_envelope(40, 0, len(tails), tails, heads, a, b, new_workspace(1 << 16))
    assert used == used_large
    for k in range(4):
        np.testing.assert_array_equal(grown[k][:used], large[k][:used])
    np.testing.assert_array_equal(grown[4][:40], large[4][:40])
    np.testing.assert_array_equal(grown[5][:40], large[5][:40])
