"""The big set's sparse templates (Cherry & Foster 2012, Table 3) fire exactly as specified on
constructed phrase pairs."""

from __future__ import annotations

import re

import pytest

from smtlib.system.sparse import COUNT_BIN_NAMES, escape_word, learn_vocabulary, render, sparse_features
from tests.support.phrase_fixtures import extracted_pairs, pair_text

SRC = ["le chat noir", "le chat", "un chien", "le le"]
TGT = ["the black cat", "the cat", "a dog of", "the"]
ALIGN = ["0-0 1-2 2-1", "0-0 1-1", "0-0 1-1", "0-0 1-0"]


def _features(src, tgt, align, **sizes):
    corpus, _, pairs = extracted_pairs(src, tgt, align)
    vocab = learn_vocabulary(corpus, pairs, 7, **sizes)
    offsets, codes = sparse_features(corpus, pairs, vocab)
    fields = render(codes, offsets, vocab.names)
    out = {}
    for k in range(len(pairs)):
        f, e = pair_text(corpus, pairs, k)
        items = fields[k].split()
        assert items[1::2] == ["1"] * (len(items) // 2)  # Boolean features
        out[(f, e)] = set(items[::2])
    return out, vocab


@pytest.fixture(scope="module")
def fired():
    # Top 2 words per side: le (4), chat (2); the (3), cat (2). The one target word seen unaligned: of.
    return _features(SRC, TGT, ALIGN, n_tgt_unal=1, n_word_pair=2)


def test_vocabulary_choice(fired):
    features, vocab = fired
    assert [vocab.names[k] for k in range(len(vocab.tgt_unal))] == ["tu_of"]


def test_all_links_one_to_one(fired):
    features, _ = fired
    # (noir, black) are both outside the top 2: no word-pair feature for that link.
    assert features[("le chat noir", "the black cat")] == {
        "wp_le~the", "wp_chat~cat", "cb_le1", "lb_src3", "lb_tgt3", "lb_src3tgt3",
    }
    assert features[("noir", "black")] == {"cb_le1", "lb_src1", "lb_tgt1", "lb_src1tgt1"}


def test_count_bins(fired):
    features, _ = fired
    # le/the occurs in sentences 1 and 2 (in sentence 4 both "le" align to "the": only "le le"/"the").
    assert features[("le", "the")] == {"wp_le~the", "cb_le2", "lb_src1", "lb_tgt1", "lb_src1tgt1"}
    assert features[("chat", "cat")] == {"wp_chat~cat", "cb_le2", "lb_src1", "lb_tgt1", "lb_src1tgt1"}


def test_not_one_to_one(fired):
    features, _ = fired
    # Two source words on one target word: neither side is 1-1; the Boolean fires once.
    assert features[("le le", "the")] == {
        "wp_le~@non11", "wp_@non11~the", "cb_le1", "lb_src2", "lb_tgt1", "lb_src2tgt1",
    }


def test_unaligned_target_word(fired):
    features, _ = fired
    assert features[("chien", "dog of")] == {"tu_of", "cb_le1", "lb_src1", "lb_tgt2", "lb_src1tgt2"}
    assert "tu_of" not in features[("chien", "dog")]


def test_top_word_linked_to_another_word():
    # Top 1: "le" and "the". le-dog is (le, other); chien-the is (other, the); chat-cat is
    # (other, other), which fires nothing.
    src, tgt = ["le chat", "le", "le", "chien"], ["cat the", "the", "dog", "the"]
    features, _ = _features(src, tgt, ["0-1 1-0", "0-0", "0-0", "0-0"], n_tgt_unal=1, n_word_pair=1)
    assert "wp_le~@other" in features[("le", "dog")]
    assert "wp_@other~the" in features[("chien", "the")]
    assert "wp_le~the" in features[("le", "the")]
    assert features[("chat", "cat")] == {"cb_le1", "lb_src1", "lb_tgt1", "lb_src1tgt1"}


def test_count_bin_bounds():
    assert COUNT_BIN_NAMES == (
        "cb_le1", "cb_le2", "cb_le4", "cb_le8", "cb_le16", "cb_le32", "cb_le64", "cb_le128", "cb_le1k", "cb_le10k",
        "cb_inf",
    )
    src = ["a"] * 1001 + ["b"] * 3
    tgt = ["x"] * 1001 + ["y"] * 3
    features, _ = _features(src, tgt, ["0-0"] * len(src), n_tgt_unal=1, n_word_pair=1)
    assert "cb_le10k" in features[("a", "x")]  # 1001 > 1000
    assert "cb_le4" in features[("b", "y")]  # 2 < 3 <= 4


def test_feature_names_are_safe():
    assert escape_word("chat") == "chat"
    assert escape_word("été") == "été"
    assert escape_word("l'") == "l%27"
    assert escape_word("2") == "%32"
    assert escape_word("a=b#_") == "a%3Db%23%5F"
    words = ["=", "#", "0", "12", "l&apos;", "a_1", "|", "x"]
    src = [" ".join(words)] * 2
    features, vocab = _features(src, src, [" ".join(f"{i}-{i}" for i in range(len(words)))] * 2)
    assert len(vocab.names) == len(vocab.tgt_unal) + 11 + 82 * 82 + 63
    for name in vocab.names:
        assert "_" in name and not re.search(r"[\s=#]", name), name
        assert not re.search(r"_\d+$", name), name  # would read as a dense NAME_k


def test_exact_count_table_gives_every_joint_count_its_own_feature(tmp_path):
    """Figure 1's over-fitting set (§5.1): the count-bin item becomes cb_eqN for the joint count N;
    everything else on the line is unchanged."""
    from smtlib.errors import InputError
    from smtlib.system.sparse import exact_count_table

    lines = [
        "le chat ||| the cat ||| 0.5 0.4 0.3 0.2 ||| 0-0 1-1 ||| 10 12 7 ||| tu_none 1 cb_le8 1 wp_le_the 1",
        "le ||| the ||| 0.9 0.8 0.7 0.6 ||| 0-0 ||| 300 310 250 ||| cb_le1k 1",
        "un ||| a ||| 0.1 0.2 0.3 0.4 ||| 0-0 ||| 9 9 7 ||| cb_le8 1 lb_src1tgt1 1",
    ]
    src = tmp_path / "pt.txt"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert exact_count_table(src, tmp_path / "out.txt") == 2  # joint counts 7 and 250
    out = (tmp_path / "out.txt").read_text(encoding="utf-8").splitlines()
    assert out[0] == lines[0].replace("cb_le8 1", "cb_eq7 1")
    assert out[1] == lines[1].replace("cb_le1k 1", "cb_eq250 1")
    assert out[2] == lines[2].replace("cb_le8 1", "cb_eq7 1")
    assert not re.search(r"_\d+$", "cb_eq7")  # never looks like a dense name
    (tmp_path / "bad.txt").write_text(lines[0] + "\nle ||| the ||| 0.9\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.txt:2: "):
        exact_count_table(tmp_path / "bad.txt", tmp_path / "bad.out")


def test_a_phrase_escapes_a_word_at_a_time_as_it_does_whole():
    from smtlib.system.sparse import escape_phrase

    phrases = [["chat"], ["l'", "été"], ["2", "=", "a_b"], ["ß", "İ", "\u0301e", "日本", "x\u200by"], ["%20", "a b"[0]]]
    for words in phrases:
        whole = "".join(ch if ch.isalpha() else "".join(f"%{b:02X}" for b in ch.encode("utf-8"))
                        for ch in " ".join(words))
        assert escape_phrase(words) == whole == escape_word(" ".join(words))
