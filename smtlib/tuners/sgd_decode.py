"""One epoch of one shard of Simianer, Riezler & Dyer (2012)'s Algorithms 1-4, with the decoder in the loop.

The inner loop of Algorithms 1-4 (§4) is, for each input i of the shard in turn::

    Decode i-th input with w_{t,i,0}.
    for all pairs x_j, j in 0..P-1:  w_{t,i,j+1} <- w_{t,i,j} - eta grad l_j(w_{t,i,j})
    w_{t,i+1,0} <- w_{t,i,P}

so every sentence is decoded with the weights left by the updates of the sentences before it.
:func:`decode_pass` does exactly that: the model is loaded once, sentence i is decoded (100-best,
distinct) with the current weights, its hypotheses are scored by smoothed sentence BLEU against the
reference, split into the HI/MID/LOW levels and the multipartite pairs update the weights
(:func:`smtlib.tuners.sgd.update_sentence`, the perceptron step of :mod:`smtlib.tuners.sgd`), and
sentence i+1 is decoded with the updated weights. ``smtlib sgd pass`` runs it as one shard job of
``rules/simianer.smk``.

Why not decode the shard once per epoch and run the SGD pass on the k-best lists (what the
workflow did before): at epoch 1 every list is then decoded with the zero vector, i.e. all
hypotheses tie at score 0 and the lists are whatever the search keeps first, and the perceptron
learns to rank those. Measured on the quick configuration (Multi30k de-en, 3,000 training pairs,
shard 0 = 1,000 sentences, its jackknife fold's medium model, stack 20, 100-best, eta = 1e-4, from
zero): one pass over lists decoded once with the zero vector gives weights that translate the 200
devtest sentences with BLEU 5.06 and 2.19 times the reference length; the same pass decoding
sentence by sentence gives 28.85 (length ratio 0.98; 32.04 when the fold's LMs are trained without
the shard too, ``simianer.fold_lms``). On the 200 dev sentences (full model) the two
give 26.97 and 27.45. Mixing the three shards' once-decoded weights hid part of the damage (22.54
at epoch 1), and epoch 2, decoded with that mixed vector, fell to 11.58 with outputs 1.26 times too
long (``benchmarks/results/simianer_quick.md``).

Choices, each as cdec's dtrain (the paper's implementation) makes it:

* The violation test of all pairs of sentence i uses the scores of the hypotheses under
  w_{t,i,0}, the weights the sentence was decoded with (dtrain compares the model scores the
  decoder returned); ``pair_test='current'`` tests pair j against w_{t,i,j} as the pseudo-code
  writes ∇l_j(w_{t,i,j}). See :mod:`smtlib.tuners.sgd`.
* The learning rate: with the zero start and ``margin`` = 0 the weights after any number of
  updates are eta times those of eta = 1, and the decoder's search (histogram pruning, no
  threshold beam) ranks hypotheses the same under any positive scale of the weights, so eta only
  fixes the scale of the weights, not the translations. Measured (dev, one pass, decoding in the
  loop): eta = 1e-4 (the paper's), 1e-2 and 1 give weights proportional to 8 digits and the same
  devtest BLEU (27.45). The paper's eta is kept; it is not "too large for our feature scales".
* Features a sentence's hypotheses never fire keep their weights; weights of features the model
  cannot fire on this shard (other shards' sparse features after mixing) are carried over.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Mapping
from typing import Any, Callable

import numpy as np

from smtlib.bleu.stats import BleuSettings, compute_stats
from smtlib.bleu.variants import get_variant
from smtlib.decoder.decoder import Decoder, DecoderConfig
from smtlib.decoder.model import Weights, prepare_tokens
from smtlib.errors import InputError
from smtlib.io import atomic_output
from smtlib.kbest.format import DECODED, kbest_line
from smtlib.system.modeldir import read_model_spec
from smtlib.tuners.sgd import PAIR_TESTS, update_sentence


@dataclasses.dataclass
class _LiveWeights(Weights):
    """Weights whose sparse vector (aligned with the model's sparse names) is kept up to date by
    :func:`decode_pass`, so that a decoder for new weights costs no pass over all sparse names.

    The vector is handed out as it is, not copied (a million features: 10 MB per sentence): each
    sentence's decoder is done with it before the pass updates it."""

    vector: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))

    def sparse_vector(self, sparse_index: Mapping[str, int]) -> np.ndarray:
        return self.vector


class _GrowingWeights:
    """The weight vector of the pass: dense values first, then sparse features indexed as met."""

    def __init__(self, dense: np.ndarray, sparse: dict[str, float]) -> None:
        self.n_dense = len(dense)
        self.index: dict[str, int] = {}
        self.values = np.zeros(self.n_dense + max(len(sparse), 1024))
        self.values[: self.n_dense] = dense
        for name, value in sparse.items():
            self.values[self.column(name)] = value

    def column(self, name: str) -> int:
        col = self.index.get(name)
        if col is None:
            col = self.n_dense + len(self.index)
            self.index[name] = col
            if col >= len(self.values):
                grown = np.zeros(2 * len(self.values))
                grown[: len(self.values)] = self.values
                self.values = grown
        return col

    @property
    def dense(self) -> np.ndarray:
        return self.values[: self.n_dense]

    def sparse(self) -> dict[str, float]:
        return {name: float(self.values[col]) for name, col in self.index.items()}


def decode_pass(
    model_dir: str | os.PathLike,
    init: dict[str, float],
    sources: list[str],
    references: list[list[str]],
    *,
    config: DecoderConfig,
    settings: BleuSettings,
    eta: float = 1e-4,
    margin: float = 0.0,
    hi_lo: float = 0.1,
    sentence_bleu: str = "liang-interpolated",
    pair_test: str = "decoded",
    kbest_out: str | os.PathLike | None = None,
    report: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, float], dict[str, Any]]:
    """One pass of Algorithm 1's inner loop over ``sources`` in order, decoding each with the current weights.

    Parameters
    ----------
    model_dir
        The model the shard is decoded with (a training shard: its jackknife fold's model).
    init
        w_{t,0,0}: the weights the shard starts the epoch from (``{name: value}``).
    sources, references
        The shard's source lines and its reference sets (one list of lines per reference).
    config
        Decoder settings; ``config.k`` hypotheses per sentence (the paper: 100, deduplicated).
    settings
        How sentence BLEU tokenizes and cases.
    eta, margin, hi_lo, sentence_bleu, pair_test
        As :class:`smtlib.tuners.sgd.PairwiseSGD`.
    kbest_out
        If given, every sentence's k-best list as decoded (Moses format, ``.gz`` compresses).
    report
        Called with (sentences done, total) now and then.

    Returns
    -------
    (weights, info)
        w_{t,S,0} (``init`` with the updated values) and counts for the epoch log.

    Raises
    ------
    InputError
        On bad weights for the model, a reference count that differs from the sources, or bad
        hyper-parameters.
    """
    from smtlib.decoder.loader import load_model

    if not (np.isfinite(eta) and eta > 0):
        raise InputError("eta must be a positive number")
    if not (np.isfinite(margin) and margin >= 0):
        raise InputError("margin must be >= 0")
    if not 0.0 < hi_lo <= 0.5:
        raise InputError("hi_lo must lie in (0, 0.5]")
    if pair_test not in PAIR_TESTS:
        raise InputError(f"pair_test must be one of {', '.join(PAIR_TESTS)}")
    if sentence_bleu == "pseudo-doc":
        raise InputError("sentence_bleu=pseudo-doc needs a running background; choose a sentence-level variant")
    variant = get_variant(sentence_bleu)
    for refs in references:
        if len(refs) != len(sources):
            raise InputError(f"{len(sources)} source lines but {len(refs)} reference lines")
    t0 = time.process_time()
    spec = read_model_spec(model_dir)
    model = load_model(model_dir, [prepare_tokens(spec, line) for line in sources])
    checked = model.read_weights(dict(init))
    w = _GrowingWeights(checked.dense, checked.sparse)
    model_pos = model.sparse_index
    live_vector = checked.sparse_vector(model_pos)
    live_sparse = dict(checked.sparse)  # the decoder reads sparse weights by name as well (k-best totals)
    load_seconds = time.process_time() - t0
    pairs = violated = updated = 0
    onebest = 0.0
    n_hyps = 0
    decode_seconds = 0.0
    with atomic_output(kbest_out) if kbest_out is not None else _no_output() as out_kb:
        for i, line in enumerate(sources):
            t1 = time.process_time()
            # w_{t,i,0}: the decoder sees the current weights (sparse ones through the live vector)
            weights = _LiveWeights(w.dense.copy(), live_sparse, live_vector)
            result = Decoder(model, weights, config).decode(line, i, kbest=config.k)
            decode_seconds += time.process_time() - t1
            if report is not None and (i + 1) % 100 == 0:
                report(i + 1, len(sources))
            kbest = result.kbest
            if not kbest:
                continue
            if out_kb is not None:
                out_kb.writelines(kbest_line(i, kl.hyp, kl.features, DECODED.total(kl.total)) + "\n" for kl in kbest)
            n = len(kbest)
            n_hyps += n
            texts = [kl.hyp for kl in kbest]
            dense = np.array([kl.dense for kl in kbest], dtype=np.float64)
            indptr = np.zeros(n + 1, dtype=np.int64)
            cols: list[int] = []
            vals: list[float] = []
            for r, kl in enumerate(kbest):
                for name, value in kl.sparse.items():
                    cols.append(w.column(name))
                    vals.append(value)
                indptr[r + 1] = len(cols)
            bleu = np.asarray(variant.score(compute_stats(texts, np.full(n, i), references, settings)), dtype=np.float64)
            onebest += float(bleu[0])  # kbest is sorted by model score: the 1-best under w_{t,i,0}
            p, v = update_sentence(w.values, dense, indptr, np.asarray(cols, dtype=np.int64) - w.n_dense,
                                   np.asarray(vals, dtype=np.float64), bleu, eta, margin, hi_lo, pair_test)
            pairs += p
            violated += v
            if v:
                updated += 1
                for name in {name for kl in kbest for name in kl.sparse}:
                    live_sparse[name] = float(w.values[w.index[name]])
                    pos = model_pos.get(name)
                    if pos is not None:
                        live_vector[pos] = w.values[w.index[name]]
    out = dict(init)
    out.update(zip(model.layout.names, map(float, w.dense)))
    out.update(w.sparse())
    info = {
        "paper": "Simianer, Riezler & Dyer 2012, Algorithm 1 inner loop (decode input i with w_{t,i,0})",
        "sentence_bleu": variant.smooth_field(),
        "sentences": len(sources),
        "hypotheses": n_hyps,
        "pairs": int(pairs),
        "violated_pairs": int(violated),
        "updated_sentences": updated,
        "onebest_avg_sentence_bleu": onebest / len(sources) if sources else 0.0,
        "cpu_seconds": {"load": load_seconds, "decode": decode_seconds,
                        "total": time.process_time() - t0},
        "nonzero_features": int(sum(1 for value in out.values() if value != 0.0)),
    }
    return out, info


class _no_output:
    """A context manager that yields None (no k-best file)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def stderr_report(prefix: str) -> Callable[[int, int], None]:
    """A progress reporter printing ``prefix: done/total sentences`` on stderr."""

    def report(done: int, total: int) -> None:
        print(f"{prefix}: {done}/{total} sentences", file=sys.stderr, flush=True)

    return report
