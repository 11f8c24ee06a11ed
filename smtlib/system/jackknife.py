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
  fold per shard); :func:`write_fold_work` writes a ``smtlib train`` work directory holding the
  corpus *without* the fold's sentences and the matching lines of the symmetrized alignments, so
  that ``smtlib train phrases`` / ``assemble`` build the fold's phrase tables, reordering table and
  model from the rest of the data only.

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

import json
import os
import pathlib

import numpy as np

from smtlib.errors import InputError
from smtlib.io import atomic_output, link_or_copy, read_lines, write_lines

#: the work-directory files a fold shares with the full corpus (linked, not rewritten)
SHARED_FILES = ("lm.0.arpa.gz", "lm.0.json", "lm.1.arpa.gz", "lm.1.json", "align.json")


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


def write_shards(work: str | os.PathLike, out_dir: str | os.PathLike, shards: int, seed: int) -> list[int]:
    """Write ``shard{z}.src``, ``shard{z}.ref`` and ``shard{z}.ids`` (0-based corpus line ids) for
    every shard of the prepared corpus in ``work``; returns the shard sizes."""
    work, out_dir = pathlib.Path(work), pathlib.Path(out_dir)
    src = read_lines(work / "corpus.src", what="prepared source corpus")
    tgt = read_lines(work / "corpus.tgt", what="prepared target corpus")
    if len(src) != len(tgt):
        raise InputError(f"corpus.src has {len(src)} lines, corpus.tgt {len(tgt)}", work)
    out_dir.mkdir(parents=True, exist_ok=True)
    sizes = []
    for z, ids in enumerate(shard_ids(len(src), shards, seed)):
        listed = ids.tolist()
        write_lines(out_dir / f"shard{z}.src", [src[i] for i in listed])
        write_lines(out_dir / f"shard{z}.ref", [tgt[i] for i in listed])
        write_lines(out_dir / f"shard{z}.ids", [str(i) for i in listed])
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


def write_fold_work(
    work: str | os.PathLike,
    held_out: np.ndarray,
    out: str | os.PathLike,
    alignments: tuple[str, ...],
) -> dict:
    """A ``smtlib train`` work directory ``out`` with the corpus of ``work`` minus ``held_out``.

    Writes ``corpus.src``, ``corpus.tgt``, ``aligned.<name>`` for each of ``alignments`` (the lines
    of the kept sentences, so the alignment is the full corpus's) and ``prepare.json``; links the
    language models and ``align.json`` (:data:`SHARED_FILES`). Returns the fold's figures, also
    written to ``out/fold.json``.
    """
    work, out = pathlib.Path(work), pathlib.Path(out)
    src = read_lines(work / "corpus.src", what="prepared source corpus")
    tgt = read_lines(work / "corpus.tgt", what="prepared target corpus")
    held = np.zeros(len(src), dtype=bool)
    if len(held_out) and int(held_out.max()) >= len(src):
        raise InputError(f"sentence id {int(held_out.max())} is beyond the corpus ({len(src)} sentences)", work)
    held[held_out] = True
    keep = np.flatnonzero(~held).tolist()
    if not keep:
        raise InputError("the fold holds out every sentence: nothing is left to extract phrases from", work)
    out.mkdir(parents=True, exist_ok=True)
    write_lines(out / "corpus.src", [src[i] for i in keep])
    write_lines(out / "corpus.tgt", [tgt[i] for i in keep])
    for name in alignments:
        aligned = read_lines(work / f"aligned.{name}", what="symmetrized alignment", allow_empty=True)
        if len(aligned) != len(src):
            raise InputError(f"aligned.{name} has {len(aligned)} lines, the corpus {len(src)}", work)
        write_lines(out / f"aligned.{name}", [aligned[i] for i in keep])
    prepare = json.loads((work / "prepare.json").read_text())
    prepare["jackknife"] = {"full_work": os.fspath(work), "held_out": int(held.sum()), "kept": len(keep)}
    with atomic_output(out / "prepare.json") as fh:
        json.dump(prepare, fh, indent=1)
    for name in SHARED_FILES:
        if (work / name).is_file():
            link_or_copy(work / name, out / name)
    info = {"sentences": len(src), "held_out": int(held.sum()), "kept": len(keep), "alignments": list(alignments)}
    with atomic_output(out / "fold.json") as fh:
        json.dump(info, fh, indent=1)
    return info

