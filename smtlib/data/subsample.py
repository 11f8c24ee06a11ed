"""Dev-set sub-sampling for optimizer stability (Cherry & Foster 2012, §4.3).

"Our solution was to randomly draw and fix four different sub-samples of each dev set, retaining
each sentence with a probability of 0.9. For each tuning method and setting, we then optimize on
the original dev and all sub-samples." Sub-sample 0 is the original dev set; sub-sample ``s >= 1``
keeps each sentence independently with probability ``p`` under the generator seeded with
``(seed, s)``, so each sub-sample is fixed by (seed, s) alone, whatever other sub-samples exist.
The kept 0-based line ids of the original dev set are written too, so that every tuning run can
be traced back to the sentences it saw.
"""

from __future__ import annotations

import os

import numpy as np

from smtlib.bleu.references import read_references
from smtlib.errors import InputError
from smtlib.io import atomic_output, read_lines


def kept_ids(n: int, index: int, *, prob: float = 0.9, seed: int = 1) -> np.ndarray:
    """0-based ids of the dev sentences kept by sub-sample ``index`` (0 = all of them).

    Parameters
    ----------
    n
        Number of dev sentences.
    index
        Sub-sample number; 0 is the original dev set.
    prob
        Probability of keeping each sentence (Cherry & Foster: 0.9).
    seed
        Base seed; sub-sample ``index`` uses ``numpy.random.default_rng([seed, index])``.
    """
    if n < 1:
        raise InputError("the dev set is empty")
    if index < 0:
        raise InputError(f"sub-sample index must be >= 0, got {index}")
    if not 0.0 < prob <= 1.0:
        raise InputError(f"keep probability must be in (0, 1], got {prob}")
    if index == 0:
        return np.arange(n)
    rng = np.random.default_rng([seed, index])
    keep = rng.random(n) < prob
    if not keep.any():  # only possible for a tiny dev set and a small prob: keep one sentence, deterministically
        keep[int(rng.integers(n))] = True
    return np.flatnonzero(keep)


def subsample_files(src: str | os.PathLike, refs: list[str | os.PathLike], out_src: str | os.PathLike,
                    out_refs: list[str | os.PathLike], out_ids: str | os.PathLike, *, index: int, prob: float = 0.9,
                    seed: int = 1) -> int:
    """Write sub-sample ``index`` of a dev set (source and references) and its kept line ids.

    Returns the number of sentences kept. All outputs are written atomically.
    """
    if len(refs) != len(out_refs):
        raise InputError(f"{len(refs)} reference files but {len(out_refs)} outputs for them")
    source = read_lines(src, what="dev source")
    references = read_references(refs, source=src, source_lines=len(source))
    ids = kept_ids(len(source), index, prob=prob, seed=seed)
    with atomic_output(out_src) as fh:
        fh.writelines(source[i] + "\n" for i in ids)
    for path, ref in zip(out_refs, references):
        with atomic_output(path) as fh:
            fh.writelines(ref[i] + "\n" for i in ids)
    with atomic_output(out_ids) as fh:
        fh.writelines(f"{i}\n" for i in ids)
    return len(ids)
