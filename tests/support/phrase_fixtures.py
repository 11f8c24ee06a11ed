"""Phrase pairs of a hand-made aligned corpus, for the extraction, scoring and sparse-feature tests."""

from __future__ import annotations

from smtlib.system.align import Links, sentence_lengths
from smtlib.system.extract import PhrasePairs, TokenizedCorpus, collect_pairs, encode_corpus, extract_occurrences


def extracted_pairs(src: list[str], tgt: list[str], align: list[str], max_length: int = 7):
    """``(corpus, links, pairs)``: the corpus encoded, its alignment links and the phrase pairs extracted."""
    corpus = encode_corpus(src, tgt)
    links = Links.from_lines(align, sentence_lengths(src), sentence_lengths(tgt))
    pairs = collect_pairs(corpus, extract_occurrences(corpus, links, max_length), max_length)
    return corpus, links, pairs


def pair_text(corpus: TokenizedCorpus, pairs: PhrasePairs, k: int) -> tuple[str, str]:
    """The source and target words of pair ``k``, read from its representative occurrence."""
    s = pairs.rep_sent[k]
    f0 = corpus.src_off[s] + pairs.rep_f_start[k]
    e0 = corpus.tgt_off[s] + pairs.rep_e_start[k]
    f = " ".join(corpus.src_vocab[corpus.src[f0 : f0 + pairs.rep_f_len[k]]])
    e = " ".join(corpus.tgt_vocab[corpus.tgt[e0 : e0 + pairs.rep_e_len[k]]])
    return f, e
