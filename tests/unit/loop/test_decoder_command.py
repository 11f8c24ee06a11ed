"""The decoder command: placeholders, the weights in the decoder's three forms, shards and their joined
n-best list, failures (smtlib.loop.decoder_command, smtlib.loop.decoder_weights, smtlib.loop.decoder_output)."""

from __future__ import annotations

import gzip
import shlex

import pytest

from smtlib.errors import InputError
from smtlib.loop.decoder_command import DecoderTemplate, Shard, decode, join_nbest, shard_bounds
from smtlib.loop.decoder_output import check_features, read_decoded
from smtlib.loop.decoder_weights import InitialWeights, split_for_moses, write_iteration_weights
from smtlib.weights import from_moses_ini, read_weights


def test_the_template_knows_its_placeholders():
    t = DecoderTemplate.parse("dec -f {ini} -n {nbest} {k} < {input} | awk '{{print $1}}'")
    assert t.used == {"ini", "nbest", "k", "input"}
    assert t.expand({"ini": "a.ini", "nbest": "'o b'", "k": "7", "input": "in"}) == \
        "dec -f a.ini -n 'o b' 7 < in | awk '{print $1}'"
    with pytest.raises(InputError, match=r"unknown placeholder \{wieghts\} .*write \{\{ and \}\}"):
        DecoderTemplate.parse("dec {wieghts}")
    with pytest.raises(InputError, match=r"unknown placeholder \{print \$1\}"):
        DecoderTemplate.parse("dec {weights} | awk '{print $1}'")
    with pytest.raises(InputError, match="passes no weights"):
        DecoderTemplate.parse("dec -n {nbest} {k}")
    with pytest.raises(InputError, match="empty"):
        DecoderTemplate.parse("  ")


def test_shards_are_consecutive_and_nearly_equal():
    assert shard_bounds(10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert shard_bounds(2, 5) == [(0, 1), (1, 2)]
    assert shard_bounds(5, 1) == [(0, 5)]
    assert shard_bounds(0, 3) == [(0, 0)]


def test_weights_reach_the_decoder_in_three_forms(tmp_path):
    ini = tmp_path / "moses.ini"
    ini.write_text("[feature]\nKENLM name=LM0 factor=0 path=lm order=3\nWordPenalty\n"
                   "PhraseDictionaryMemory name=TM0 num-features=2 path=pt input-factor=0 output-factor=0\n\n"
                   "[weight]\nLM0= 1\nWordPenalty0= 0\nTM0= 0.2 0.2\n")
    initial = InitialWeights.read(ini)
    assert initial.ini == str(ini) and initial.weights == {"LM0_0": 1.0, "WordPenalty0_0": 0.0, "TM0_0": 0.2, "TM0_1": 0.2}
    weights = {"LM0_0": 0.5, "WordPenalty0_0": -1e-7, "TM0_0": 0.25, "TM0_1": -1.0, "WT_a~b": 2.0}
    folder = tmp_path / "it1"
    folder.mkdir()
    values = write_iteration_weights(folder, weights, initial, frozenset({"ini", "weights_args"}), header="it 1")
    assert read_weights(folder / "weights") == weights
    assert from_moses_ini(folder / "moses.ini") == {"LM0_0": 0.5, "WordPenalty0_0": -1e-7, "TM0_0": 0.25,
                                                    "TM0_1": -1.0, "WT_a~b": 2.0}
    assert values["ini"] == shlex.quote(str(folder / "moses.ini"))
    # every value exactly (mert-moses.pl's %.6f would print -1e-7 as -0.000000), sparse weights in a file
    assert values["weights_args"] == ("-weight-overwrite 'LM0= 0.5 WordPenalty0= -1e-07 TM0= 0.25 -1' "
                                      f"-weight-file {shlex.quote(str(folder / 'sparse.weights'))}")
    assert read_weights(folder / "sparse.weights") == {"WT_a~b": 2.0}
    assert split_for_moses({"lm": 1.0, "a_0": 2.0})[0] == {"lm": [1.0], "a": [2.0]}
    plain = InitialWeights.read(folder / "weights")
    assert plain.ini is None
    with pytest.raises(InputError, match=r"\{ini\} but --init is a weights file"):
        write_iteration_weights(folder, weights, plain, frozenset({"ini"}))


def _shard(tmp_path, index, first, end, text):
    path = tmp_path / f"s{index}.nbest"
    path.write_text(text, encoding="utf-8")
    return Shard(index, first, end, "", str(path), "")


def test_shards_are_joined_with_renumbered_ids(tmp_path):
    a = _shard(tmp_path, 0, 0, 2, "0 ||| x ||| F= 1 ||| 1\n1|||y ||| F= 2 ||| 2\n")
    b = _shard(tmp_path, 1, 2, 3, "0 ||| z ||| F= 3 ||| 3\n")
    join_nbest([a, b], tmp_path / "joined.gz")
    lines = gzip.decompress((tmp_path / "joined.gz").read_bytes()).decode().splitlines()
    assert lines == ["0 ||| x ||| F= 1 ||| 1", "1 |||y ||| F= 2 ||| 2", "2 ||| z ||| F= 3 ||| 3"]
    whole = _shard(tmp_path, 2, 0, 3, "0 ||| x ||| F= 1 ||| 1\n1|||y ||| F= 2 ||| 2\n2 ||| z ||| F= 3 ||| 3\n")
    join_nbest([whole], tmp_path / "one.gz")
    assert (tmp_path / "one.gz").read_bytes() == (tmp_path / "joined.gz").read_bytes()
    for text, message, line in [("0 ||| x ||| F= 1 ||| 1\n1 ||| y ||| F= 1 ||| 1\n", "beyond the 1 sentence", 2),
                                ("zero ||| x ||| F= 1 ||| 1\n", "sentence id 'zero' is not", 1),
                                ("0 || x || F= 1\n", "no '|||' separator", 1),
                                ("0 ||| x ||| F= 1 ||| 1", "no line end", 1)]:
        bad = _shard(tmp_path, 3, 0, 1, text)
        with pytest.raises(InputError) as error:
            join_nbest([bad], tmp_path / "bad.gz")
        assert message in error.value.message and error.value.line == line and error.value.path == bad.nbest
    assert not (tmp_path / "bad.gz").exists()


def test_decode_runs_every_shard_and_reports_a_failure(tmp_path):
    lines = [f"line {i}" for i in range(5)]
    # no {input}: the shard on stdin; no {nbest}: the n-best list on stdout
    template = DecoderTemplate.parse("awk '{{print NR-1 \" ||| \" $0 \" ||| F= 1 ||| 1\"}}' # {weights}")
    shards = decode(template, lines, tmp_path / "scratch", {"weights": "w"}, 3, 2, tmp_path / "decoder.log")
    assert [(s.first, s.end) for s in shards] == [(0, 3), (3, 5)]
    join_nbest(shards, tmp_path / "n.gz")
    decoded = read_decoded(tmp_path / "n.gz", 5, None)
    assert decoded.one_best == lines
    assert (tmp_path / "decoder.log").read_text().startswith("# shard 1 of 2: source lines 1-3\n")
    failing = DecoderTemplate.parse("echo one >&2; echo two >&2; echo three >&2; echo four >&2; exit 7 # {weights}")
    with pytest.raises(InputError) as error:
        decode(failing, lines, tmp_path / "scratch", {"weights": "w"}, 3, 1, tmp_path / "failing.log")
    assert str(error.value) == (f"the decoder exited with status 7 (its standard error is in {tmp_path / 'failing.log'}): "
                                "two | three | four")
    assert (tmp_path / "failing.log").read_text() == "one\ntwo\nthree\nfour\n"


def test_a_list_must_cover_the_source_and_keep_its_features(tmp_path):
    path = tmp_path / "n"
    path.write_text("0 ||| a ||| LM0= 1 TM0= 1 2 ||| 1\n0 ||| b ||| LM0= 2 TM0= 1 2 ||| 1\n2 ||| c ||| LM0= 1 TM0= 1 2 ||| 1\n")
    with pytest.raises(InputError, match=r"hypotheses for 2 of the 4 sentences of the dev set: none for sentence 1 "
                                         r"\(source line 2\), and 1 more"):
        read_decoded(path, 4, None)
    path.write_text("0 ||| a ||| LM0= 1 TM0= 1 2 ||| 1\n1 ||| c ||| LM0= 1 TM0= 1 2 WT_x= 1 ||| 1\n")
    decoded = read_decoded(path, 2, None)
    assert decoded.one_best == ["a", "c"] and decoded.dense_layout == [["LM0", 1], ["TM0", 2]]
    check_features(decoded, [["LM0", 1], ["TM0", 2]], 1, None)  # sparse features may come and go
    with pytest.raises(InputError, match=r"dense features changed: LM0\(1\) TM0\(2\) here, LM0\(1\) TM0\(3\) in "
                                         r"iteration 1"):
        check_features(decoded, [["LM0", 1], ["TM0", 3]], 1, None)
    path.write_text("0 ||| a ||| lm=1 tm=2 ||| 1\n0 ||| b ||| tm=1 new=2 ||| 1\n1 ||| c ||| lm=1 new=3 ||| 1\n")
    joshua = read_decoded(path, 2, "joshua")
    check_features(joshua, [["lm", 1], ["tm", 1]], 1, "joshua", known={"new": 0.0})
    with pytest.raises(InputError, match="'new' is in no earlier n-best list"):
        check_features(joshua, [["lm", 1], ["tm", 1]], 1, "joshua", known={})
