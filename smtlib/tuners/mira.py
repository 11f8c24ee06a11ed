"""Online MIRA with the decoder in the loop (``smtlib tune mira``): Cherry & Foster (2012), §2.1 and §4.

Algorithm 1 with the true search space: each sentence is decoded with the current weights (a new
:class:`~smtlib.decoder.decoder.Decoder` per sentence, since the weights change after every update;
the model is loaded once per shard), and the hope and the fear are found in that search's lattice,
pruned to ``density`` edges per reference word as lb-mira's lattices are (§3.1), by the same exact
linear-BLEU oracle decoding (:mod:`smtlib.tuners.hope_fear`); one update per sentence, with
the same pseudo-document BLEU, step cap and decay as the batch variants (§4: C = 0.01,
gamma = 0.999), by the same compiled pass as lb-mira (:func:`smtlib.tuners.lbmira.mira_pass`).

**Parallelization: iterative parameter mixing** (McDonald et al. 2010, as the paper, §3.1 and §4: 8
shards). The sentences are split into ``shards`` fixed shards (sentence ``i`` in shard
``i mod shards``); one epoch runs every shard from the same weights (the previous epoch's mixture)
in its own random order (``numpy.random.default_rng([seed, shard])``), each shard keeping its own
pseudo-document across epochs; the mixture for the next epoch is the uniform average of the shards'
final weights. Each shard reports ``(n + 1) w_n - w_0 - u`` (the sum of its ``n`` weight vectors,
from ``u``, the ``sum_t t eta_t d_t`` of the lazy average) and ``n``, so the mixing step only adds.

**Averaging.** "The average of all weights seen during learning is used on unseen data" (C&F §2.1,
after Collins 2002 and Chiang et al. 2008). With iterative parameter mixing "during learning" has two
readings, and ``average`` chooses: ``epoch`` (default) averages the weights all shards saw in the
epoch just run, as Moses's online MIRA does (Hasler et al. 2011; ``mira --accumulate-weights``
"accumulate and average weights over all epochs" is off by default, and the running sums are zeroed
at the start of every epoch); ``all`` averages every weight since the first epoch. The outer loop
scores each epoch's average on the dev set and keeps the best (C&F §4), so the average is what each
epoch's weights are judged by. Measured on Multi30k fr-en Medium (200 dev sentences, 8 epochs, seed
1): best dev BLEU 48.88 with ``epoch`` against 48.19 with ``all``, whose average keeps the early
epochs' weights near the initial ones, as PRO's Ψ interpolation does (``smtlib/tuners/README.md``).

In the workflow each shard is one job per epoch (``smtlib tune mira --shard I --shards K``) and a
mixing job averages them (``smtlib tune mira --mix SHARD.json ...``); ``smtlib tune mira`` without
either runs one whole epoch in one process. The result depends only on the inputs, the seed and the
shard count (not on how many processes run the shards).

On a k-best pool (:meth:`OnlineMira.fit`) the pool stands in for the decoder's search space (the
"true" space of Algorithm 1 replaced by the pool's hypotheses, each a whole path): one epoch of the
same sharded procedure, which is what the tuners' common tests exercise.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from smtlib.bleu.stats import BleuSettings
from smtlib.errors import InputError
from smtlib.kbest.pool import KBestPool
from smtlib.lattice.lattice_set import LatticeSetBuilder, lattice_set_from_pool
from smtlib.lattice.paths import density_prune_edges, subgraph
from smtlib.lattice.stats import empty_references, prepare_references
from smtlib.tuners.base import OnlineTuner, TuneResult
from smtlib.tuners.lbmira import MiraState, check_mira_params, run_passes


def shard_sentences(n_sentences: int, shard: int, shards: int) -> np.ndarray:
    """Sentence ids of one shard: ``i`` with ``i mod shards == shard``."""
    if not 0 <= shard < shards:
        raise InputError(f"shard {shard} is not in 0..{shards - 1}")
    return np.arange(shard, n_sentences, shards, dtype=np.int64)


def shard_order(seed: int, shard: int, sentences: np.ndarray) -> np.ndarray:
    """The visiting order of a shard's sentences in one epoch."""
    return np.random.default_rng([seed, shard]).permutation(sentences)


class ShardResult(dict):
    """What one shard reports (JSON-serialisable): names, final weights, weight sum, steps, pseudo-document."""

    @classmethod
    def make(cls, shard: int, names: list[str], w0: np.ndarray, state: MiraState, steps: int) -> ShardResult:
        total = (steps + 1) * state.w - w0 - state.u if steps > 0 else np.zeros_like(state.w)
        return cls(shard=shard, names=list(names), weights=state.w.tolist(), weight_sum=total.tolist(), steps=steps,
                   bg=state.bg.tolist(), updates=state.updates, loss=state.loss)


def mix(shards: Sequence[dict], previous: dict | None = None, accumulate: bool = False) -> dict:
    """Iterative parameter mixing: the mean of the shards' final weights and the average weights.

    Returns ``{"mixed": {name: w}, "average": {name: w}, "sum": {...}, "steps": n, "bg": {shard: [...]}}``;
    ``previous`` is the mixing result of the last epoch (its pseudo-documents and update count are
    continued). ``average`` is over this epoch's weights, or with ``accumulate`` over every epoch's
    (``previous``'s sums and steps are continued).
    """
    if not shards:
        raise InputError("no shard results to mix")
    names: list[str] = []
    seen = set()
    for r in shards:
        for n in r["names"]:
            if n not in seen:
                seen.add(n)
                names.append(n)
    index = {n: i for i, n in enumerate(names)}
    mixed = np.zeros(len(names))
    total = np.zeros(len(names))
    steps = 0
    for r in sorted(shards, key=lambda r: r["shard"]):
        cols = np.array([index[n] for n in r["names"]], dtype=np.int64)
        mixed[cols] += np.asarray(r["weights"], dtype=np.float64)
        total[cols] += np.asarray(r["weight_sum"], dtype=np.float64)
        steps += int(r["steps"])
    mixed /= len(shards)
    sums = {n: float(v) for n, v in zip(names, total, strict=True)}
    if previous is not None and accumulate:
        for n, v in previous["sum"].items():
            sums[n] = sums.get(n, 0.0) + v
        steps += int(previous["steps"])
    mixed_w = {n: float(v) for n, v in zip(names, mixed, strict=True)}
    average = {n: v / steps for n, v in sums.items()} if steps else dict(mixed_w)
    bg = dict(previous.get("bg", {})) if previous else {}
    for r in shards:
        bg[str(r["shard"])] = r["bg"]
    return {"mixed": mixed_w, "average": average, "sum": sums, "steps": steps, "bg": bg,
            "updates": int(sum(r["updates"] for r in shards)) + (int(previous["updates"]) if previous else 0)}


class OnlineMira(OnlineTuner):
    """Online MIRA, decoder in the loop, iterative parameter mixing over 8 shards (McDonald et al. 2010)."""

    name = "mira"
    defaults = {
        "C": 0.01,  # step cap (§4: all MIRA variants use C = 0.01)
        "decay": 0.999,  # pseudo-corpus decay gamma (§4)
        "bleu_scale": "ref-length",  # as kbmira / lbmira
        "bg_initial": 1.0,  # initial value of every background statistic (Moses: 1)
        "shards": 8,  # iterative parameter mixing over this many shards (§4: 8)
        "density": 50.0,  # the search's lattice pruned to this many edges per reference word (as lb-mira)
        "lattice_beam": 10.0,  # the decoder's lattice beam before density pruning (smtlib decode's default)
        "epochs": 1,  # mixing epochs per call on a pool (the workflow runs one epoch per tuning iteration)
        "average": "epoch",  # the returned weights average this epoch's weights (Moses), or "all" epochs'
    }

    def _check(self) -> None:
        check_mira_params(self.name, self.params)
        if self.params["shards"] < 1:
            raise InputError("mira: shards must be at least 1")
        if self.params["lattice_beam"] < 0:
            raise InputError("mira: lattice_beam must be >= 0")
        if self.params["epochs"] < 1:
            raise InputError("mira: epochs must be at least 1")
        if self.params["average"] not in ("epoch", "all"):
            raise InputError(f"mira: average must be 'epoch' or 'all', not {self.params['average']!r}")

    def mix_epoch(self, shards: Sequence[dict], previous: dict | None) -> dict:
        """Iterative parameter mixing of one epoch's shard results (:func:`mix`)."""
        self._check()
        return mix(shards, previous, self.accumulate)

    @property
    def accumulate(self) -> bool:
        """True when the returned weights average every epoch's weights, not only the last epoch's."""
        return self.params["average"] == "all"

    # ------------------------------------------------------------------ on a fixed pool
    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        """``epochs`` mixing epochs with the pool as every sentence's search space (see the module docstring)."""
        self._check()
        p = self.params
        ls = lattice_set_from_pool(pool)
        refs = empty_references(pool.n_sentences)
        names = ls.all_feature_names
        start = np.asarray(init, dtype=np.float64)
        mixed = None
        for epoch in range(p["epochs"]):
            results = []
            for shard in range(p["shards"]):
                sentences = shard_sentences(pool.n_sentences, shard, p["shards"])
                bg = mixed["bg"].get(str(shard)) if mixed else None
                state = MiraState(start, np.asarray(bg) if bg is not None else np.full(10, float(p["bg_initial"])))
                run_passes(ls, refs, state, [shard_order(self.seed + epoch, shard, sentences)], p)
                results.append(ShardResult.make(shard, names, start, state, state.t - 1))
            mixed = mix(results, mixed, self.accumulate)
            start = np.array([mixed["mixed"].get(n, 0.0) for n in names])
            self.report("epoch", epoch + 1, p["epochs"], updates=mixed["updates"])
        weights = np.array([mixed["average"].get(n, 0.0) for n in names])
        return TuneResult(weights, {"updates": mixed["updates"], "steps": mixed["steps"], "shards": p["shards"],
                                    "epochs": p["epochs"]})

    # ------------------------------------------------------------------ with the decoder
    def run_shard(self, model_dir: str | os.PathLike, sources: list[str], references: list[list[str]],
                  init: dict[str, float], shard: int, *, settings: BleuSettings = BleuSettings(),
                  bg: Sequence[float] | None = None, decoder_options: dict | None = None) -> ShardResult:
        """One epoch of one shard: decode, hope/fear, update, sentence after sentence.

        ``bg`` is this shard's pseudo-document from the previous epoch (None: ``bg_initial``).
        """
        from smtlib.decoder import Decoder, DecoderConfig, load_model
        from smtlib.decoder.model import prepare_tokens
        from smtlib.system.modeldir import read_model_spec

        self._check()
        p = self.params
        n = len(sources)
        for r, ref in enumerate(references):
            if len(ref) != n:
                raise InputError(f"reference set {r + 1} has {len(ref)} segments, the source has {n}")
        sentences = shard_sentences(n, shard, p["shards"])
        spec = read_model_spec(model_dir)
        tokens = {int(s): prepare_tokens(spec, sources[s]) for s in sentences}
        model = load_model(model_dir, [tokens[int(s)] for s in sentences])
        dense_names = list(model.layout.names)
        config = DecoderConfig(**{**(decoder_options or {}), "k": 1, "lattice_beam": float(p["lattice_beam"])})
        # the weight vector: dense names, then every sparse name met (init's first)
        names = dense_names + [k for k in init if k not in set(dense_names)]
        index = {k: i for i, k in enumerate(names)}
        w = np.array([init.get(k, 0.0) for k in names], dtype=np.float64)
        w0 = w.copy()
        state = MiraState(w, np.asarray(bg, np.float64) if bg is not None else np.full(10, float(p["bg_initial"])))
        steps = 0
        for s in shard_order(self.seed, shard, sentences).tolist():
            weights = dict(zip(names, state.w.tolist(), strict=True))
            decoder = Decoder(model, model.read_weights(weights, path="mira weights"), config)
            lat = decoder.decode(sources[s], 0, kbest=1, lattice=True).lattice
            refs_s = [[ref[s]] for ref in references]
            ref_words = np.mean([len(r[0].split()) for r in refs_s])
            builder = LatticeSetBuilder(1, dense_names)
            builder.add_lattice(lat)
            for name in builder.sparse_names:
                if name not in index:
                    index[name] = len(names)
                    names.append(name)
            ls = builder.build()
            if p["density"] > 0:
                ls = _prune_single(ls, ls.edge_scores(_aligned(state.w, index, ls.all_feature_names)),
                                   int(np.ceil(p["density"] * ref_words)))
            cols = np.array([index[k] for k in ls.all_feature_names], dtype=np.int64)
            if len(names) > len(state.w):
                grow = len(names) - len(state.w)
                state.w = np.concatenate([state.w, np.zeros(grow)])
                state.u = np.concatenate([state.u, np.zeros(grow)])
                w0 = np.concatenate([w0, np.zeros(grow)])
            local = MiraState(state.w[cols], state.bg)
            local.t = state.t
            refs = prepare_references(ls, refs_s, settings)
            run_passes(ls, refs, local, [np.zeros(1, dtype=np.int64)], p)
            state.w[cols] = local.w
            state.u[cols] += local.u
            state.bg = local.bg
            state.t = local.t
            state.updates += local.updates
            state.loss += local.loss
            steps += 1
            self.report(f"shard {shard} sentence", steps, len(sentences), updates=state.updates)
        return ShardResult.make(shard, names, w0, state, steps)


def _aligned(w: np.ndarray, index: dict[str, int], names: list[str]) -> np.ndarray:
    return np.array([w[index[n]] if index.get(n, len(w)) < len(w) else 0.0 for n in names])


def _prune_single(ls, deltas: np.ndarray, max_edges: int):
    """Density-prune the one lattice of a single-sentence set."""
    keep = density_prune_edges(int(ls.n_nodes[0]), ls.tails, ls.heads, deltas, max_edges)
    if len(keep) == ls.n_edges:
        return ls
    lat = ls.sentence(0)
    n, t, h = subgraph(lat.n_nodes, lat.tails, lat.heads, keep)
    lat.n_nodes, lat.tails, lat.heads = n, t, h
    lat.words = [lat.words[e] for e in keep.tolist()]
    lat.dense = lat.dense[keep]
    lat.sparse = [lat.sparse[e] for e in keep.tolist()]
    builder = LatticeSetBuilder(1, ls.feature_names)
    for name in ls.sparse_names:
        builder.sparse_id(name)
    builder.add_lattice(lat)
    return builder.build()


