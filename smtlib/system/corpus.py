"""Corpus preparation: reading a parallel pair, tokenizing raw text, lowercasing, cleaning.

This is the first stage of Moses's training pipeline (``tokenizer.perl``, ``lowercase.perl``,
``clean-corpus-n.perl``) done in one pass:

1. read both sides (plain or gzip, UTF-8; mismatched line counts, an empty corpus or bytes that are
   not UTF-8 are :class:`~smtlib.errors.InputError`);
2. tokenize with sacremoses's Moses tokenizer where the text is raw (``tokenize="auto"`` decides from
   the text itself, see :func:`looks_tokenized`), with Moses's escaping of ``& | < > ' " [ ]``, which is
   what Moses-tokenized data such as Multi30k's ``tok/`` files carry;
3. lowercase when asked;
4. drop pairs where a side is empty, longer than ``max_length`` tokens, or where one side is more than
   ``max_ratio`` times longer than the other (``clean-corpus-n.perl``'s default ratio 9), counting
   each reason.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Sequence

from smtlib.errors import InputError
from smtlib.io import read_lines

TOKENIZE_CHOICES = ("auto", "yes", "no")
#: Name recorded in the model directory when the training text was tokenized here.
SACREMOSES = "sacremoses"
_SAMPLE = 200  # lines looked at by looks_tokenized
_TOKENIZED_SHARE = 0.9
_APOSTROPHE = re.compile(r"\s*(?:&apos;|')\s*")


@dataclasses.dataclass
class PrepareReport:
    """What preparation did: counts of pairs read, dropped (per reason) and kept."""

    read: int = 0
    dropped_empty: int = 0
    dropped_too_long: int = 0
    dropped_ratio: int = 0
    kept: int = 0
    tokenized_here: bool = False
    lowercase: bool = True
    max_length: int = 80
    max_ratio: float = 9.0
    source_tokens: int = 0
    target_tokens: int = 0

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@functools.lru_cache(maxsize=8)
def _tokenizer(lang: str):
    import sacremoses

    return sacremoses.MosesTokenizer(lang=lang)


@functools.lru_cache(maxsize=8)
def _detokenizer(lang: str):
    import sacremoses

    return sacremoses.MosesDetokenizer(lang=lang)


def tokenize_line(line: str, lang: str) -> str:
    """Moses-tokenize one line (sacremoses, Moses's escaping of special characters).

    Moses's XML escapes (``&apos;``, ``&quot;``, ``&amp;`` ...) are undone first, so that text that is
    already partly tokenized and escaped (as some distributed corpora are) is not escaped twice
    (``&apos;`` would otherwise become ``&amp; apos ;``).
    """
    return _tokenizer(lang).tokenize(_detokenizer(lang).unescape_xml(line), escape=True, return_str=True)


def preprocess_line(line: str, lang: str, *, tokenizer: str, lowercase: bool) -> str:
    """Treat one input line as the training text was treated (what the decoder must do too).

    Parameters
    ----------
    tokenizer
        ``""`` (the text is used as it is) or :data:`SACREMOSES`.
    lowercase
        Lowercase after tokenizing.
    """
    line = " ".join(line.split())
    if tokenizer == SACREMOSES:
        line = tokenize_line(line, lang)
    elif tokenizer:
        raise InputError(f"unknown tokenizer {tokenizer!r} in the model description")
    return line.lower() if lowercase else line


def looks_tokenized(lines: Sequence[str], lang: str) -> bool:
    """Whether text is already Moses-tokenized.

    Takes the first non-empty lines (up to 200), undoes Moses's escaping and tokenizes them again:
    tokenized text comes back unchanged (tokenization is idempotent on its own output), raw text
    does not (``"Hello, world."`` becomes ``"Hello , world ."``). The text counts as tokenized when
    at least 90 % of the sample are fixed points.
    """
    sample = [line for line in lines[: 4 * _SAMPLE] if line.strip()][:_SAMPLE]
    if not sample:
        return True
    same = 0
    for line in sample:
        normalized = " ".join(line.split())
        again = tokenize_line(normalized, lang)
        # Apostrophes are not idempotent in Moses's French/Italian rules ("qu&apos; un" becomes
        # "qu &apos; un"), so the comparison ignores the spacing around them.
        if _APOSTROPHE.sub("'", again) == _APOSTROPHE.sub("'", normalized):
            same += 1
    return same >= _TOKENIZED_SHARE * len(sample)


def read_parallel(src_path: str | os.PathLike, tgt_path: str | os.PathLike) -> tuple[list[str], list[str]]:
    """Read both sides of a parallel corpus.

    Raises
    ------
    InputError
        On a missing or empty file, bytes that are not UTF-8, or different line counts.
    """
    src = read_lines(src_path, what="source corpus")
    tgt = read_lines(tgt_path, what="target corpus")
    if len(src) != len(tgt):
        raise InputError(
            f"source has {len(src)} lines but the target corpus {os.fspath(tgt_path)} has {len(tgt)}", src_path
        )
    return src, tgt


def prepare_corpus(
    src: Sequence[str],
    tgt: Sequence[str],
    *,
    src_lang: str,
    tgt_lang: str,
    tokenize: str = "auto",
    lowercase: bool = True,
    max_length: int = 80,
    max_ratio: float = 9.0,
    src_path: str | os.PathLike | None = None,
) -> tuple[list[str], list[str], PrepareReport]:
    """Tokenize, lowercase and clean a parallel corpus.

    Parameters
    ----------
    src, tgt
        The two sides, one segment per item, same length.
    tokenize
        ``yes`` (the text is raw: tokenize both sides), ``no`` (already tokenized), or ``auto``
        (:func:`looks_tokenized` on each side).
    max_length
        Longest side kept, in tokens (``clean-corpus-n.perl``'s ``max``).
    max_ratio
        Longest length ratio kept between the sides (``clean-corpus-n.perl``'s ``-ratio``).

    Returns
    -------
    src, tgt, report
        The kept pairs (tokens separated by one space) and the counts.

    Raises
    ------
    InputError
        If the sides differ in length, no pair survives, or a token is ``|||`` (the phrase-table
        field separator).
    """
    if tokenize not in TOKENIZE_CHOICES:
        raise InputError(f"--tokenize must be one of {TOKENIZE_CHOICES}, got {tokenize!r}")
    if len(src) != len(tgt):
        raise InputError(f"source has {len(src)} lines, target {len(tgt)}", src_path)
    if max_length < 1 or max_ratio <= 0:
        raise InputError("--max-length must be >= 1 and --max-ratio > 0")
    report = PrepareReport(read=len(src), lowercase=lowercase, max_length=max_length, max_ratio=max_ratio)
    tok_src = tokenize == "yes" or (tokenize == "auto" and not looks_tokenized(src, src_lang))
    tok_tgt = tokenize == "yes" or (tokenize == "auto" and not looks_tokenized(tgt, tgt_lang))
    report.tokenized_here = tok_src or tok_tgt
    out_src: list[str] = []
    out_tgt: list[str] = []
    for lineno, (s, t) in enumerate(zip(src, tgt), 1):
        s = tokenize_line(" ".join(s.split()), src_lang) if tok_src else " ".join(s.split())
        t = tokenize_line(" ".join(t.split()), tgt_lang) if tok_tgt else " ".join(t.split())
        if lowercase:
            s, t = s.lower(), t.lower()
        ns, nt = s.count(" ") + 1 if s else 0, t.count(" ") + 1 if t else 0
        if ns == 0 or nt == 0:
            report.dropped_empty += 1
            continue
        if ns > max_length or nt > max_length:
            report.dropped_too_long += 1
            continue
        if ns > max_ratio * nt or nt > max_ratio * ns:
            report.dropped_ratio += 1
            continue
        if "|||" in s.split() or "|||" in t.split():
            raise InputError("the token '|||' is reserved (Moses's phrase-table field separator)", src_path, lineno)
        out_src.append(s)
        out_tgt.append(t)
        report.source_tokens += ns
        report.target_tokens += nt
    report.kept = len(out_src)
    if not out_src:
        raise InputError(f"no sentence pair left after cleaning ({report.read} read)", src_path)
    return out_src, out_tgt, report
