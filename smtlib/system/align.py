"""Word alignment: eflomal in both directions, then symmetrization (Koehn et al. 2003, §4.4).

Directional alignments come from eflomal (Östling & Tiedemann 2016), compiled here from its source
release for IEEE float semantics on the architecture's baseline instruction set instead of the
package's ``-Ofast -march=native`` build, so that the links do not depend on the CPU
(:mod:`smtlib.system.eflomal_build`).

Reproducibility: eflomal has no seed option; it seeds each run from 8 bytes of ``/dev/urandom``
and, when its samplers run in parallel OpenMP threads, hands out the per-sampler random states in
thread order. We therefore run each direction in its own single-threaded process (two processes in
parallel when two threads are allowed: same work, same output) with a tiny ``LD_PRELOAD`` shim,
compiled once with the system C compiler, that answers ``fopen("/dev/urandom")`` with bytes derived
from the seed. Same corpus + seed -> bit-identical links, for any ``threads``. Without a C compiler
the alignment still runs, unseeded, and :func:`run_eflomal` reports ``deterministic=False``.

Symmetrization heuristics (Koehn, Och & Marcu 2003, §4.4; the pseudo-code of Koehn's *Statistical
Machine Translation*, Fig. 4.13, which Moses's ``symal`` implements):

``intersect``, ``union``
    set operations on the two directional link sets;
``grow-diag``
    start from the intersection and repeatedly add union points that neighbour (also diagonally)
    an existing point and cover a word not yet aligned (Koehn 2003's *diag*);
``grow-diag-final``
    then add remaining union points of either direction whose source *or* target word is still
    unaligned;
``grow-diag-final-and`` (alias ``diag-and``)
    the final step requires the source *and* the target word to be unaligned. This is the
    heuristic Koehn et al. (2003) call *diag-and* and Cherry & Foster (2012, §4.2) used; Moses's
    default.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pathlib
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

import numba
import numpy as np

from smtlib.errors import InputError

SYMMETRIZATIONS = ("intersect", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and")
ALIASES = {"diag-and": "grow-diag-final-and", "diag": "grow-diag", "gdfa": "grow-diag-final-and"}
_SYM_CODE = {name: k for k, name in enumerate(SYMMETRIZATIONS)}

_SHIM_SOURCE = r"""
/* LD_PRELOAD shim (smtlib): answers fopen("/dev/urandom") with bytes derived from
 * $SMTLIB_EFLOMAL_SEED (splitmix64), so that eflomal runs are reproducible. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static unsigned char seed_bytes[64];
static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static FILE *seeded_stream(void) {
    const char *text = getenv("SMTLIB_EFLOMAL_SEED");
    uint64_t state = text ? strtoull(text, NULL, 10) : 0;
    for (int i = 0; i < 8; i++) { uint64_t v = splitmix64(&state); memcpy(seed_bytes + 8 * i, &v, 8); }
    return fmemopen(seed_bytes, sizeof(seed_bytes), "rb");
}
FILE *fopen(const char *path, const char *mode) {
    static FILE *(*real)(const char *, const char *) = NULL;
    if (path != NULL && strcmp(path, "/dev/urandom") == 0) return seeded_stream();
    if (real == NULL) real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
    return real(path, mode);
}
FILE *fopen64(const char *path, const char *mode) {
    static FILE *(*real)(const char *, const char *) = NULL;
    if (path != NULL && strcmp(path, "/dev/urandom") == 0) return seeded_stream();
    if (real == NULL) real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen64");
    return real(path, mode);
}
"""


def canonical_symmetrization(name: str) -> str:
    """The canonical name of a heuristic (``diag-and`` -> ``grow-diag-final-and``)."""
    name = ALIASES.get(name, name)
    if name not in SYMMETRIZATIONS:
        choices = ", ".join(SYMMETRIZATIONS + tuple(ALIASES))
        raise InputError(f"unknown symmetrization {name!r} (choose from {choices})")
    return name


@dataclasses.dataclass
class Links:
    """Word alignments of a corpus, flat: links of sentence ``s`` are ``src[offsets[s]:offsets[s+1]]``
    (source positions) and ``tgt[...]`` (target positions), sorted by (source, target)."""

    offsets: np.ndarray  # int64, n_sentences + 1
    src: np.ndarray  # int32
    tgt: np.ndarray  # int32

    @property
    def n_sentences(self) -> int:
        return len(self.offsets) - 1

    def to_lines(self) -> list[str]:
        """Moses text format, one ``i-j i-j ...`` line per sentence."""
        pairs = np.char.add(np.char.add(self.src.astype(str), "-"), self.tgt.astype(str)).tolist()
        off = self.offsets.tolist()
        return [" ".join(pairs[off[s] : off[s + 1]]) for s in range(self.n_sentences)]

    @classmethod
    def from_lines(
        cls, lines: Sequence[str], src_len: np.ndarray, tgt_len: np.ndarray, path: str | os.PathLike | None = None
    ) -> Links:
        """Parse Moses ``i-j`` lines, checking every index against the sentence lengths.

        Raises
        ------
        InputError
            On a malformed pair, an index out of range, or a line count that differs from the corpus.
        """
        if len(lines) != len(src_len):
            raise InputError(f"alignment has {len(lines)} lines, corpus {len(src_len)}", path)
        counts = np.zeros(len(lines) + 1, dtype=np.int64)
        counts[1:] = [line.count("-") for line in lines]
        offsets = np.cumsum(counts)
        text = " ".join(lines)
        if not text.strip():
            return cls(offsets, np.zeros(0, np.int32), np.zeros(0, np.int32))
        # One C-level split of the whole text; every link must be exactly "i-j".
        items = text.split()
        try:
            pairs = np.array(text.replace("-", " ").split(), dtype=np.int64).reshape(-1, 2)
        except ValueError:
            raise InputError("malformed alignment (expected 'i-j' pairs)", path) from None
        if len(items) != len(pairs) or len(pairs) != offsets[-1]:
            raise InputError("malformed alignment (expected 'i-j' pairs)", path)
        sent = np.repeat(np.arange(len(lines)), np.diff(offsets))
        bad = (pairs[:, 0] < 0) | (pairs[:, 1] < 0) | (pairs[:, 0] >= src_len[sent]) | (pairs[:, 1] >= tgt_len[sent])
        if bad.any():
            first = int(sent[np.argmax(bad)])
            raise InputError("alignment point outside the sentence", path, first + 1)
        order = np.lexsort((pairs[:, 1], pairs[:, 0], sent))
        return cls(offsets, pairs[order, 0].astype(np.int32), pairs[order, 1].astype(np.int32))


def _shim_library() -> pathlib.Path | None:
    """Compile the ``/dev/urandom`` shim once per user (cached); ``None`` without a C compiler."""
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if compiler is None:
        return None
    digest = hashlib.sha256(_SHIM_SOURCE.encode()).hexdigest()[:16]
    cache = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "smtlib"
    target = cache / f"seeded-urandom-{digest}.so"
    if target.is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        src = pathlib.Path(tmp) / "shim.c"
        src.write_text(_SHIM_SOURCE)
        out = pathlib.Path(tmp) / "shim.so"
        done = subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(out), str(src), "-ldl"], capture_output=True)
        if done.returncode != 0:
            return None
        os.replace(out, target)  # atomic: concurrent builders end with the same file
    return target


def eflomal_iterations(n_sentences: int, rel_iterations: float = 1.0) -> tuple[int, int, int]:
    """eflomal's default schedule for model 3 (IBM1, HMM, HMM+fertility iterations)."""
    iters = max(2, int(round(rel_iterations * 5000 / np.sqrt(n_sentences))))
    iters4 = max(1, iters // 4)
    return max(2, iters4), iters4, iters


def run_eflomal(
    src_lines: Sequence[str],
    tgt_lines: Sequence[str],
    *,
    seed: int = 0,
    threads: int = 2,
    n_samplers: int = 3,
    rel_iterations: float = 1.0,
    null_prior: float = 0.2,
) -> tuple[list[str], list[str], bool, dict]:
    """Align a tokenized corpus in both directions with eflomal (model 3: IBM1, HMM, fertility).

    Parameters
    ----------
    src_lines, tgt_lines
        Tokenized sentences (no empty ones).
    seed
        Seed of eflomal's samplers (see the module docstring).
    threads
        2 runs the two directions in parallel processes; the output does not depend on it.

    Returns
    -------
    forward, reverse, deterministic, aligner
        Moses ``i-j`` lines (source index first in both), whether the run was seeded, and the
        binary's description (:meth:`~smtlib.system.eflomal_build.AlignerBinary.describe`).
    """
    import eflomal

    from smtlib.system.eflomal_build import eflomal_binary

    if len(src_lines) != len(tgt_lines):
        raise InputError(f"source has {len(src_lines)} lines, target {len(tgt_lines)}")
    aligner = eflomal_binary()
    binary = aligner.path
    shim = _shim_library()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "SMTLIB_EFLOMAL_SEED": str(int(seed) % 2**64)}
    if shim is not None:
        env["LD_PRELOAD"] = str(shim) + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    i1, i2, i3 = eflomal_iterations(len(src_lines), rel_iterations)
    with tempfile.TemporaryDirectory(prefix="smtlib-align-") as tmp:
        s_bin, t_bin = os.path.join(tmp, "src.bin"), os.path.join(tmp, "tgt.bin")
        with open(s_bin, "wb") as sf, open(t_bin, "wb") as tf:
            eflomal.Aligner().prepare_files((x + "\n" for x in src_lines), sf, (x + "\n" for x in tgt_lines), tf, None, None)
        base = [str(binary), "-m", "3", "-n", str(n_samplers), "-N", str(null_prior)]
        base += ["-1", str(i1), "-2", str(i2), "-3", str(i3), "-s", s_bin, "-t", t_bin, "-q"]
        outs = {"-f": os.path.join(tmp, "fwd"), "-r": os.path.join(tmp, "rev")}
        cmds = [base + [flag, path] for flag, path in outs.items()]
        if threads >= 2:
            procs = [subprocess.Popen(c, env=env, stderr=subprocess.PIPE) for c in cmds]
            results = [(p, p.communicate()[1]) for p in procs]
            codes = [(p.returncode, err) for p, err in results]
        else:
            codes = [(r.returncode, r.stderr) for r in (subprocess.run(c, env=env, capture_output=True) for c in cmds)]
        for code, err in codes:
            if code != 0:
                raise RuntimeError(f"eflomal failed ({code}): {err.decode(errors='replace')[-500:]}")
        fwd = pathlib.Path(outs["-f"]).read_text().splitlines()
        rev = pathlib.Path(outs["-r"]).read_text().splitlines()
    return fwd, rev, shim is not None, aligner.describe()


_NEIGHBOURS = np.array([[-1, 0], [0, -1], [1, 0], [0, 1], [-1, -1], [-1, 1], [1, -1], [1, 1]], dtype=np.int64)


@numba.njit(cache=True)
def _symmetrize_kernel(src_len, tgt_len, f_off, f_src, f_tgt, r_off, r_src, r_tgt, method, neighbours):
    n = len(src_len)
    out_s = np.empty(len(f_src) + len(r_src), np.int32)
    out_t = np.empty(len(f_src) + len(r_src), np.int32)
    counts = np.zeros(n + 1, np.int64)
    pos = 0
    for s in range(n):
        ns = src_len[s]
        nt = tgt_len[s]
        fwd = np.zeros((ns, nt), np.bool_)
        rev = np.zeros((ns, nt), np.bool_)
        for k in range(f_off[s], f_off[s + 1]):
            fwd[f_src[k], f_tgt[k]] = True
        for k in range(r_off[s], r_off[s + 1]):
            rev[r_src[k], r_tgt[k]] = True
        a = np.zeros((ns, nt), np.bool_)
        if method == 1:  # union
            for i in range(ns):
                for j in range(nt):
                    a[i, j] = fwd[i, j] or rev[i, j]
        else:
            for i in range(ns):
                for j in range(nt):
                    a[i, j] = fwd[i, j] and rev[i, j]
        if method >= 2:
            s_al = np.zeros(ns, np.bool_)
            t_al = np.zeros(nt, np.bool_)
            for i in range(ns):
                for j in range(nt):
                    if a[i, j]:
                        s_al[i] = True
                        t_al[j] = True
            # grow-diag: sweep until no point is added (Koehn's pseudo-code: loop over the target
            # words outside, the source words inside, neighbours in the fixed order above).
            added = True
            while added:
                added = False
                for j in range(nt):
                    for i in range(ns):
                        if not a[i, j]:
                            continue
                        for d in range(8):
                            ii = i + neighbours[d, 1]
                            jj = j + neighbours[d, 0]
                            if ii < 0 or jj < 0 or ii >= ns or jj >= nt:
                                continue
                            if (not s_al[ii] or not t_al[jj]) and (fwd[ii, jj] or rev[ii, jj]) and not a[ii, jj]:
                                a[ii, jj] = True
                                s_al[ii] = True
                                t_al[jj] = True
                                added = True
            if method >= 3:
                for which in range(2):
                    for j in range(nt):
                        for i in range(ns):
                            point = fwd[i, j] if which == 0 else rev[i, j]
                            if not point or a[i, j]:
                                continue
                            if method == 3:
                                ok = (not s_al[i]) or (not t_al[j])
                            else:
                                ok = (not s_al[i]) and (not t_al[j])
                            if ok:
                                a[i, j] = True
                                s_al[i] = True
                                t_al[j] = True
        for i in range(ns):
            for j in range(nt):
                if a[i, j]:
                    out_s[pos] = i
                    out_t[pos] = j
                    pos += 1
        counts[s + 1] = pos
    return counts, out_s[:pos].copy(), out_t[:pos].copy()


def symmetrize(forward: Links, reverse: Links, src_len: np.ndarray, tgt_len: np.ndarray, method: str) -> Links:
    """Combine two directional alignments with one of :data:`SYMMETRIZATIONS` (or an alias).

    Both inputs index source words first. Returns links sorted by (source, target) per sentence.
    """
    code = _SYM_CODE[canonical_symmetrization(method)]
    offsets, s, t = _symmetrize_kernel(
        np.asarray(src_len, np.int64),
        np.asarray(tgt_len, np.int64),
        forward.offsets,
        forward.src,
        forward.tgt,
        reverse.offsets,
        reverse.src,
        reverse.tgt,
        code,
        _NEIGHBOURS,
    )
    return Links(offsets, s, t)


def sentence_lengths(lines: Sequence[str]) -> np.ndarray:
    """Token counts of tokenized lines."""
    return np.fromiter((len(x.split()) for x in lines), dtype=np.int64, count=len(lines))
