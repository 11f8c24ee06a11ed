"""Reading ARPA back-off language models (plain or gzip) into arrays of n-grams.

:func:`parse_arpa` reads the entries; :func:`smtlib.decoder.lm.build_lm` hashes them for the decoder
(:func:`smtlib.decoder.lm.read_arpa` does both). Deviations from a lenient reader, each an
:class:`~smtlib.errors.InputError` naming the file: a NaN or +inf value, and a word that occurs in an
n-gram without having a unigram entry (the ARPA format requires one; the decoder's word bounds
assume it). An ARPA file without a ``<unk>`` unigram gets one with log10 probability -100 (KenLM's
default); ``<s>`` gets -99 and ``</s>`` -100 when missing.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re

import numpy as np

from smtlib.errors import InputError
from smtlib.io import open_text

UNK_LOG10 = -100.0
_NGRAM_HEADER = re.compile(r"^\\(\d+)-grams:\s*$")
_SPECIALS = frozenset({"<s>", "</s>", "<unk>"})


@dataclasses.dataclass
class ArpaGrams:
    """The entries of an ARPA file, before hashing (what :func:`smtlib.decoder.lm.build_lm` hashes).

    Attributes
    ----------
    order
        The highest order declared in ``\\data\\``.
    vocab
        Word -> id: ``<unk>`` is 0, then words in order of first appearance; ``<s>`` and ``</s>``
        are always present.
    ids
        Per order ``n`` with entries: ``(count, n)`` word ids, oldest word first.
    log10_prob, log10_bo
        Per order: the log10 probabilities and back-off weights (0 where the line has none).
    """

    order: int
    vocab: dict[str, int]
    ids: dict[int, np.ndarray]
    log10_prob: dict[int, np.ndarray]
    log10_bo: dict[int, np.ndarray]


class _ArpaReader:
    """The line-by-line state of :func:`parse_arpa` (see there)."""

    def __init__(self, path: str | os.PathLike, keep_words: set[str] | None):
        self.path = path
        self.keep = keep_words
        self.vocab: dict[str, int] = {"<unk>": 0}
        self.declared: dict[int, int] = {}
        self.grams: dict[int, tuple[list, list, list]] = {}  # n -> (word ids, log10 probs, log10 back-offs)
        self.section: str | int | None = None  # None before \data\, "data", or the order of a section

    def feed(self, line: str, lineno: int) -> bool:
        """Take one stripped, non-empty line; False at ``\\end\\``."""
        if self.section is None:
            if line == "\\data\\":
                self.section = "data"
            return True
        if line == "\\end\\":
            return False
        m = _NGRAM_HEADER.match(line)
        if m:
            self._start_section(int(m.group(1)), lineno)
        elif self.section == "data":
            self._count(line, lineno)
        else:
            self._entry(line, lineno)
        return True

    def _start_section(self, n: int, lineno: int) -> None:
        if n not in self.declared:
            raise InputError(f"section \\{n}-grams: not declared in \\data\\", self.path, lineno)
        self.section = n
        self.grams[n] = ([], [], [])

    def _count(self, line: str, lineno: int) -> None:
        if not line.startswith("ngram "):
            raise InputError(f"unexpected line in \\data\\ section: {line!r}", self.path, lineno)
        try:
            n, count = line[6:].split("=")
            self.declared[int(n)] = int(count)
        except ValueError:
            raise InputError(f"malformed count line {line!r}", self.path, lineno) from None

    def _entry(self, line: str, lineno: int) -> None:
        parts = line.split()
        n = self.section
        if len(parts) not in (n + 1, n + 2):
            raise InputError(f"malformed {n}-gram entry {line!r}", self.path, lineno)
        try:
            logp = float(parts[0])
            bo = float(parts[n + 1]) if len(parts) == n + 2 else 0.0
        except ValueError:
            raise InputError(f"malformed {n}-gram entry {line!r}", self.path, lineno) from None
        if math.isnan(logp) or math.isnan(bo) or logp == math.inf or bo == math.inf:
            raise InputError(f"malformed {n}-gram entry {line!r} (NaN or +inf)", self.path, lineno)
        words = parts[1 : n + 1]
        if self.keep is not None and any(w not in self.keep and w not in _SPECIALS for w in words):
            return
        vocab = self.vocab
        g = self.grams[n]
        g[0].append([vocab.setdefault(w, len(vocab)) for w in words])
        g[1].append(logp)
        g[2].append(bo)

    def finish(self) -> ArpaGrams:
        """Check the counts, add the special unigrams, and return the entries as arrays."""
        if self.section is None:
            raise InputError("not an ARPA file (no \\data\\ section)", self.path)
        order = max(self.declared, default=0)
        if order == 0:
            raise InputError("ARPA file declares no n-grams", self.path)
        if self.keep is None:
            for n, count in self.declared.items():
                got = len(self.grams.get(n, ([],))[0])
                if got != count:
                    raise InputError(f"\\data\\ declares {count} {n}-grams, found {got}", self.path)
        for w in ("<s>", "</s>"):
            self.vocab.setdefault(w, len(self.vocab))
        self._add_special_unigrams()
        grams = ArpaGrams(order, self.vocab, {}, {}, {})
        for n, (ids, probs, bos) in sorted(self.grams.items()):
            if ids:
                grams.ids[n] = np.asarray(ids, dtype=np.int64).reshape(-1, n)
                grams.log10_prob[n] = np.asarray(probs, dtype=np.float64)
                grams.log10_bo[n] = np.asarray(bos, dtype=np.float64)
        return grams

    def _add_special_unigrams(self) -> None:
        """``<unk>``, ``<s>`` and ``</s>`` become unigrams if the file lacks them; every other word
        must have a unigram entry (the ARPA format requires it, and the bounds rely on it)."""
        unigrams = self.grams.setdefault(1, ([], [], []))
        present = {ids[0] for ids in unigrams[0]}
        for w, logp in (("<unk>", UNK_LOG10), ("<s>", -99.0), ("</s>", UNK_LOG10)):
            if self.vocab[w] not in present:
                unigrams[0].append([self.vocab[w]])
                unigrams[1].append(logp)
                unigrams[2].append(0.0)
                present.add(self.vocab[w])
        if len(present) < len(self.vocab):
            word = next(w for w, i in self.vocab.items() if i not in present)
            raise InputError(f"word {word!r} occurs in an n-gram but has no unigram entry", self.path)


def parse_arpa(path: str | os.PathLike, keep_words: set[str] | None = None) -> ArpaGrams:
    """Read the entries of an ARPA file (plain or gzip); see :func:`smtlib.decoder.lm.read_arpa`."""
    reader = _ArpaReader(path, keep_words)
    with open_text(path, what="language model") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if line and not reader.feed(line, lineno):
                break
    return reader.finish()
