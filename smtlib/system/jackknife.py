"""Training-set shards and jackknifed (leave-one-fold-out) phrase tables for discriminative training
on the training corpus (Simianer, Riezler & Dyer 2012, §5.1).

Simianer et al. train the pairwise-ranking perceptron on the training corpus itself, split at random
into shards of about 1,000 sentences (§5.1: 141 shards for news commentary). Decoding a training
sentence with rules extracted from that very sentence would let the learner see translations that
are too good to be true (the reference is reachable by construction), so the features would learn
to reward memorized rules. This module gives each shard a model that has never seen it:

* :func:`shard_ids` splits the prepared corpus (``smtlib train prepare``'s ``corpus.src/tgt``) into
  ``shards`` random, evenly sized shards with a seed (each shard's ids sorted);
* a **fold** is a group of shards (shard z belongs to fold ``z mod folds``; ``folds = shards``: one
  fold per shard); :func:`write_fold` writes the prepared corpus *without* the fold's sentences and the
  matching lines of the symmetrized alignments, so that ``smtlib train phrases`` / ``assemble``
  build the fold's phrase tables, reordering table and model from the rest of the data only.

**Comparison with the paper.** cdec extracts a *per-sentence grammar* for every training sentence
"in a leave-one-out fashion (Zollmann and Sima'an, 2005) where rules are extracted for a parallel
sentence pair only if the same rules are found in other sentences of the corpus as well" (§5.1).
This is leave-one-*sentence*-out with respect to rule *existence*; we leave out a whole *fold*
(about 1,000 sentences with folds = shards, more with fewer folds), and the held-out sentences also
do not contribute to the rules' *scores* (relative frequencies, lexical weights, reordering; the paper
does not say whether its leave-one-out also applied to the scores). Our tables therefore lose more
(every rule seen only inside the fold, which with Z folds is extracted from (Z-1)/Z of the data) and
are strictly memorization free; the paper's are closer to the full-data grammar. A per-sentence version would need one phrase
table per sentence, which a phrase-based system with a global table cannot afford.

What is shared, and why:

* the **word alignment** (eflomal, unsupervised: it never sees a reference translation in the
  sense of supervision, and the paper also aligned the full corpus once);
* the **language models**, trained on the whole target side (as the paper's LMs, trained on a
  superset of the training corpus's English, §5.1). This is the one place where a shard's
  references are seen at training time; the paper has the same property. The workflow replaces
  them by LMs trained on the fold's target side (``simianer.fold_lms``, the default): with 3,000
  training sentences and a 4-gram, the shared LMs let the perceptron learn a memorization signal
  (LM0 up, LM1 down) that collapses on devtest (``benchmarks/results/simianer_quick.md``).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from collections.abc import Sequence

import numpy as np

from smtlib.errors import InputError
from smtlib.io import read_json, read_lines, write_json, write_lines


def shard_ids(n_sentences: int, shards: int, seed: int) -> list[np.ndarray]:
    """``shards`` random, evenly sized shards of ``range(n_sentences)``, each sorted.

    Sizes differ by at most one (``np.array_split`` of a seeded permutation, numpy's PCG64), so the
    same ``(n_sentences, shards, seed)`` always gives the same shards.
    """
    if shards < 1:
        raise InputError(f"shards must be >= 1, got {shards}")
    if n_sentences < shards:
        raise InputError(f"{n_sentences} training sentences cannot make {shards} non-empty shards")
    permuted = np.random.default_rng(seed).permutation(n_sentences)
    return [np.sort(part).astype(np.int64) for part in np.array_split(permuted, shards)]


def fold_of(shard: int, folds: int) -> int:
    """The fold a shard belongs to (its phrase tables leave the whole fold out)."""
    if folds < 1:
        raise InputError(f"folds must be >= 1, got {folds}")
    return shard % folds


def write_shards(
    corpus_src: str | os.PathLike,
    corpus_tgt: str | os.PathLike,
    *,
    sources: Sequence[str | os.PathLike],
    references: Sequence[str | os.PathLike],
    id_files: Sequence[str | os.PathLike],
    seed: int,
) -> list[int]:
    """Split the prepared corpus (``corpus_src``/``corpus_tgt``) into ``len(sources)`` random shards
    (:func:`shard_ids`): shard z's sentences go to ``sources[z]``, their references to
    ``references[z]``, their 0-based corpus line ids to ``id_files[z]``. Returns the shard sizes."""
    if not len(sources) == len(references) == len(id_files):
        raise InputError(f"give one source, reference and id file per shard, got {len(sources)} source, "
                         f"{len(references)} reference and {len(id_files)} id file(s)")
    src, tgt = _read_corpus(corpus_src, corpus_tgt)
    sizes = []
    for z, ids in enumerate(shard_ids(len(src), len(sources), seed)):
        listed = ids.tolist()
        _write_lines(sources[z], [src[i] for i in listed])
        _write_lines(references[z], [tgt[i] for i in listed])
        _write_lines(id_files[z], [str(i) for i in listed])
        sizes.append(len(listed))
    return sizes


def read_ids(path: str | os.PathLike) -> np.ndarray:
    """0-based sentence ids, one per line (a shard's ``.ids`` file)."""
    lines = read_lines(path, what="sentence ids")
    try:
        ids = np.array([int(line) for line in lines], dtype=np.int64)
    except ValueError:
        bad = next(k for k, line in enumerate(lines, 1) if not line.strip().isdigit())
        raise InputError("a sentence id is a non-negative integer", path, bad) from None
    if len(ids) and ids.min() < 0:
        raise InputError("a sentence id is a non-negative integer", path)
    return ids


@dataclasses.dataclass(frozen=True)
class FoldFiles:
    """The files of a fold (written by :func:`write_fold`), named as ``smtlib train`` reads them:
    the prepared corpus without the fold's sentences, one alignment per alignment of the full
    corpus (the same order), the prepare info the fold's ``assemble`` reads, and the fold's figures."""

    corpus_src: str | os.PathLike
    corpus_tgt: str | os.PathLike
    aligned: Sequence[str | os.PathLike]
    prepare_info: str | os.PathLike
    fold_info: str | os.PathLike


def write_fold(
    corpus_src: str | os.PathLike,
    corpus_tgt: str | os.PathLike,
    aligned: Sequence[str | os.PathLike],
    prepare_info: str | os.PathLike,
    held_out: np.ndarray,
    out: FoldFiles,
) -> dict:
    """The prepared corpus (``corpus_src``, ``corpus_tgt``, its symmetrized alignments ``aligned``
    and ``prepare_info``) minus the sentences ``held_out``, as the files ``out``.

    Each alignment keeps the lines of the kept sentences (the alignment is the full corpus's);
    ``out.prepare_info`` is ``prepare_info`` with a ``jackknife`` entry. The language models and the
    alignment's info are the full corpus's (the fold's ``smtlib train assemble`` reads them where they
    are). Returns the fold's figures, also written to ``out.fold_info``.
    """
    if len(out.aligned) != len(aligned):
        raise InputError(f"give one fold alignment per alignment: {len(aligned)} read, {len(out.aligned)} to write")
    src, tgt = _read_corpus(corpus_src, corpus_tgt)
    held = np.zeros(len(src), dtype=bool)
    if len(held_out) and int(held_out.max()) >= len(src):
        raise InputError(f"sentence id {int(held_out.max())} is beyond the corpus ({len(src)} sentences)", corpus_src)
    held[held_out] = True
    keep = np.flatnonzero(~held).tolist()
    if not keep:
        raise InputError("the fold holds out every sentence: nothing is left to extract phrases from", corpus_src)
    _write_lines(out.corpus_src, [src[i] for i in keep])
    _write_lines(out.corpus_tgt, [tgt[i] for i in keep])
    for source, dest in zip(aligned, out.aligned):
        lines = read_lines(source, what="symmetrized alignment", allow_empty=True)
        if len(lines) != len(src):
            raise InputError(f"the alignment has {len(lines)} lines, the corpus {len(src)}", source)
        _write_lines(dest, [lines[i] for i in keep])
    figures = {"sentences": len(src), "held_out": int(held.sum()), "kept": len(keep)}
    prepare = read_json(prepare_info, "prepare info")
    prepare["jackknife"] = {"full_corpus_src": os.fspath(corpus_src), **figures}
    _write_json(out.prepare_info, prepare)
    info = {**figures, "alignments": [os.fspath(path) for path in aligned]}
    _write_json(out.fold_info, info)
    return info


def _read_corpus(corpus_src: str | os.PathLike, corpus_tgt: str | os.PathLike) -> tuple[list[str], list[str]]:
    src = read_lines(corpus_src, what="prepared source corpus")
    tgt = read_lines(corpus_tgt, what="prepared target corpus")
    if len(src) != len(tgt):
        raise InputError(f"the prepared source side has {len(src)} lines, the target side ({corpus_tgt}) {len(tgt)}",
                         corpus_src)
    return src, tgt


def _write_lines(path: str | os.PathLike, lines: list[str]) -> None:
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_lines(path, lines)


def _write_json(path: str | os.PathLike, data: dict) -> None:
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_json(path, data)
