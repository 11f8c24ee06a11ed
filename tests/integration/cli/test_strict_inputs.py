"""Issue 11: no input can silently change a result. Each case of the issue, end to end, and the rules behind them."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from smtlib.errors import InputError
from smtlib.io import open_text, read_lines
from smtlib.kbest.pool import read_pool
from smtlib.weights import check_weight_names, edit_distance, read_weights

MOSES = [
    "0 ||| the house ||| d= 0 -1.5 lm= -10 tm= -2 -3 w= -2 ||| -7.25",
    "0 ||| a house ||| d= 0 -2.5 lm= -11 tm= -2 -4 w= -2 ||| -8.5",
    "1 ||| the cat ||| d= 0 -1 lm= -9 tm= -1 -1 w= -2 ||| -5",
    "1 ||| cat the ||| d= -4 -1 lm= -12 tm= -1 -1 w= -2 ||| -9",
    "2 ||| hello ||| d= 0 0 lm= -4 tm= -1 -2 w= -1 ||| -3",
]
REFS = ["the house", "the cat", "hello world"]


def write(path, lines, compress=False):
    text = "\n".join(lines) + "\n"
    if compress:
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path):
    nbest = write(tmp_path / "k.nbest", MOSES)
    ref = write(tmp_path / "ref.txt", REFS)
    init = tmp_path / "init.w"
    init.write_text("d_0 1\nd_1 1\nlm_0 1\ntm_0 1\ntm_1 1\nw_0 0\n", encoding="utf-8")
    return tmp_path, nbest, ref, init


def one_error_line(result) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# -- the cases of the issue ------------------------------------------------------------------------
def test_double_bar_typed_as_two_bars_is_an_error_at_its_line(cli, files):
    """`||` for `|||`: the line used to be read as Z-MERT's dialect, its total a feature F_0."""
    tmp, _, ref, init = files
    bad = write(tmp / "bad.nbest", [*MOSES[:3], MOSES[3].replace("||| -9", "|| -9"), MOSES[4]])
    message = one_error_line(cli("tune", "mert", "--kbest", bad, "--refs", ref, "--init", init, "--out", tmp / "o.w"))
    assert f"{bad}:4:" in message and "fields" in message
    assert not (tmp / "o.w").exists()


def test_feature_name_typo_on_one_line_is_an_error(cli, files):
    """`dd=` for `d=` on one line used to add new features to the whole pool."""
    tmp, _, ref, init = files
    bad = write(tmp / "typo.nbest", [*MOSES[:2], MOSES[2].replace("d= ", "dd= "), *MOSES[3:]])
    message = one_error_line(cli("tune", "mert", "--kbest", bad, "--refs", ref, "--init", init, "--out", tmp / "o.w"))
    assert f"{bad}:3:" in message and "'dd'" in message and "'d'" in message
    with pytest.raises(InputError, match=r"typo.nbest:3: .*'dd'"):
        read_pool(bad)


@pytest.mark.parametrize("typo", ["lm0", "LMM0_0"])
@pytest.mark.parametrize("command", ["rerank", "tune", "decode", "weights"])
def test_weight_name_typo_is_the_same_error_everywhere(cli, files, command, typo):
    """`lm0` for `LM0_0`: rerank and tune used to accept it silently (and tune wrote both names);
    `LMM0_0` (issue 28) passed everywhere as a sparse weight."""
    tmp, _, ref, _ = files
    nbest = write(tmp / "new.nbest", ["0 ||| a b ||| LM0= -1 TM0= -2 -3 ||| -1", "0 ||| b a ||| LM0= -2 TM0= -1 -1 ||| -2",
                                      "1 ||| c ||| LM0= -1 TM0= 0 0 ||| 0"])
    weights = tmp / "typo.w"
    weights.write_text(f"TM0_0 1\nTM0_1 1\n{typo} 1\n", encoding="utf-8")
    if command == "rerank":
        result = cli("rerank", "--kbest", nbest, "--weights", weights)
    elif command == "tune":
        ref = write(tmp / "ref2.txt", REFS[:2])  # one line per sentence of the pool
        result = cli("tune", "mert", "--kbest", nbest, "--refs", ref, "--init", weights, "--out", tmp / "o.w")
    elif command == "weights":
        ini = tmp / "moses.ini"
        ini.write_text("[feature]\nLM0 order=4\n\n[weight]\nLM0= 1\nTM0= 1 1\n", encoding="utf-8")
        result = cli("weights", "to-moses-ini", weights, "--ini", ini, "--out", tmp / "o.w")
    else:
        from tests.support.decoder_toy import write_toy_model

        spec = write_toy_model(tmp / "model", "medium", seed=1)
        names = spec.dense_weight_names()
        weights.write_text("".join(f"{n} 0.5\n" for n in names if n != "LM0_0") + f"{typo} 1\n", encoding="utf-8")
        (tmp / "in.txt").write_text("f1 f2\n", encoding="utf-8")
        result = cli("decode", "--model", tmp / "model", "--weights", weights, "--input", tmp / "in.txt", "--quiet")
    message = one_error_line(result)
    line = weights.read_text().splitlines().index(f"{typo} 1") + 1
    assert f"{weights}:{line}: weight '{typo}'" in message and "did you mean 'LM0_0'?" in message
    assert not (tmp / "o.w").exists()


def rerank_score(stderr: str) -> tuple[float, str, str]:
    """``BLEU = X on N sentences of M reference lines (SIGNATURE)`` of rerank's stderr: X, the coverage, the signature."""
    line = next(line for line in stderr.splitlines() if line.startswith("BLEU = "))
    score, rest = line[len("BLEU = "):].split(" on ", 1)
    coverage, signature = rest.split(" (", 1)
    return float(score), coverage, signature.rstrip(")")


def test_rerank_bleu_equals_bleu_of_its_output(cli, files):
    """64.32 vs 100.00 (different default tokenizers); references longer than the pool: the pool's ids
    choose the lines, so the same BLEU, lines and signature, and --refs-prefix changes nothing."""
    tmp, nbest, ref, _ = files
    weights = tmp / "w.txt"
    weights.write_text("lm_0 1\n", encoding="utf-8")
    cased = write(tmp / "cased.txt", ["The house !", "the cat.", "Hello"])
    longer = write(tmp / "longer.txt", [*REFS, "one more sentence", "and another"])
    for refs, options in ((cased, []), (cased, ["--tokenize", "13a"]), (ref, []), (ref, ["--lowercase"])):
        out = tmp / "best.txt"
        result = cli("rerank", "--kbest", nbest, "--weights", weights, "--refs", refs, "--out", out, *options)
        assert result.returncode == 0, result.stderr
        score, coverage, signature = rerank_score(result.stderr)
        assert coverage == "3 sentences of 3 reference lines"
        bleu = json.loads(cli("bleu", "--refs", refs, "--hyps", out, *options).stdout)
        assert score == pytest.approx(bleu["score"], abs=5e-5)
        assert signature == bleu["signature"] and (bleu["sentences"], bleu["reference_lines"]) == (3, 3)
        assert len(out.read_text().splitlines()) == len(read_lines(refs))
        if refs != ref:
            continue
        for extra in ([], ["--refs-prefix"]):
            result = cli("rerank", "--kbest", nbest, "--weights", weights, "--refs", longer, "--out", tmp / "long.txt",
                         *extra, *options)
            assert result.returncode == 0, result.stderr
            assert rerank_score(result.stderr) == (score, "3 sentences of 5 reference lines", signature)
            assert (tmp / "long.txt").read_bytes() == out.read_bytes()
    stats = json.loads(cli("kbest", "stats", nbest, "--refs", ref).stdout)
    assert stats["signature"] == json.loads(cli("bleu", "--refs", ref, "--hyps", out).stdout)["signature"]


def test_rerank_bleu_uses_the_one_default_tokenizer(cli, files):
    """The default tokenizer of every command is BleuSettings' (13a, sacrebleu's); rerank and bleu agree without options."""
    tmp, nbest, _, _ = files
    weights = tmp / "w.txt"
    weights.write_text("lm_0 1\n", encoding="utf-8")
    refs = write(tmp / "punct.txt", ["the house.", "the cat!", "hello"])
    result = cli("rerank", "--kbest", nbest, "--weights", weights, "--refs", refs, "--out", tmp / "o.txt")
    bleu = json.loads(cli("bleu", "--refs", refs, "--hyps", tmp / "o.txt").stdout)
    assert "tok:13a" in bleu["signature"] and f"({bleu['signature']})" in result.stderr


@pytest.mark.parametrize("where", [3, 5001])
@pytest.mark.parametrize("compress", [False, True])
def test_utf8_error_names_the_real_line(tmp_path, where, compress):
    """A bad byte on line 3 used to be reported as line 1, one on line 5,001 as line 4,530."""
    lines = [f"{i} ||| w{i} x ||| F= {i} 1 ||| 0" for i in range(6000)]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    start = data.index(f"\n{lines[where - 1]}".encode()) + 1
    bad = data[: start + 5] + b"\xe9" + data[start + 5 :]
    path = tmp_path / ("bad.gz" if compress else "bad.txt")
    path.write_bytes(gzip.compress(bad) if compress else bad)
    for read in (lambda p: read_lines(p), lambda p: list(open_text(p)), lambda p: read_pool(p)):
        with pytest.raises(InputError, match=rf"{path.name}:{where}: not valid UTF-8"):
            read(path)


def test_decoder_input_utf8_error_names_the_real_line(cli, tmp_path):
    from tests.support.decoder_toy import write_toy_model

    spec = write_toy_model(tmp_path / "model", "medium", seed=1)
    (tmp_path / "w.txt").write_text("".join(f"{n} 0.3\n" for n in spec.dense_weight_names()), encoding="utf-8")
    lines = [b"f1 f2"] * 5000 + [b"f1 \xff f2"] + [b"f3"] * 10
    (tmp_path / "in.txt").write_bytes(b"\n".join(lines) + b"\n")
    message = one_error_line(cli("decode", "--model", tmp_path / "model", "--weights", tmp_path / "w.txt",
                                 "--input", tmp_path / "in.txt", "--quiet"))
    assert "in.txt:5001: not valid UTF-8" in message


def test_a_decoding_error_names_the_input_line(tmp_path):
    """An error raised while decoding sentence i (whatever the number of processes) names input line i + 1."""
    from smtlib.decoder.driver import _located

    def results():
        yield from [("a", "", "", 1, 1)] * 4
        raise ValueError("no translation option covers word 2")

    decoded = []
    with pytest.raises(RuntimeError, match=r"^in.txt:5: decoding failed: no translation option") as error:
        decoded.extend(_located(results(), "in.txt"))
    assert len(decoded) == 4 and isinstance(error.value.__cause__, ValueError)


def test_pool_files_with_other_dense_features_name_both_files(tmp_path):
    """The error of pool.py that named neither file nor line."""
    a = write(tmp_path / "a.nbest", MOSES)
    b = write(tmp_path / "b.nbest", ["0 ||| x ||| d= 0 0 lm= -1 -2 tm= 0 0 w= 0 ||| 0", "1 ||| y ||| d= 0 0 lm= -1 -2 tm= 0 0 w= 0 ||| 0"])
    with pytest.raises(InputError) as error:
        read_pool([a, b])
    assert error.value.path == str(b) and error.value.line == 1 and str(a) in error.value.message


# -- the rules behind them ------------------------------------------------------------------------
@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize(
    "line,message",
    [
        ("1 ||| x ||| d= 0 0 lm= -1 tm= 0 w= 0 ||| 0", "'tm' has 1 value"),  # a value dropped
        ("1 ||| x ||| d= 0 0 lm= -1 tm= 0 0 ||| 0", "'w' of line 1 is missing"),
        ("1 ||| x ||| lm= -1 d= 0 0 tm= 0 0 w= 0 ||| 0", "is 'lm' where line 1 has 'd'"),  # reordered
        ("1 ||| x ||| d= 0 0 lm= -1 tm= 0 0 w= 0 extra= 1 ||| 0", "'extra' is not on line 1"),
        ("1 ||| x ||| d: 0 0 lm: -1 tm: 0 0 w: 0 ||| 0", "old Moses"),  # another dialect
        ("1 ||| x ||| d=0 d= 0 0 lm= -1 tm= 0 0 w= 0 ||| 0", "Joshua"),
        ("1 ||| x ||| 0 0 -1 0 0 0 ||| 0", "no feature name"),  # Z-MERT's unlabeled values
        ("1 ||| x ||| d= 0 0 lm= -1 tm= 0 0 w= 0 |||", "total score is missing"),
        ("1 ||| x ||| d= 0 0 lm= -1 tm= 0 0 w= 0 ||| 0 ||| 0-0", "fields"),
        ("1 ||| x ||| d= 0 0 lm= -1 tm= 0 0 w= 0 |||| 0", "ambiguous"),
        ("1 ||| x ||| d= 0 0 lm= -1 tm= 0 1_0 w= 0 ||| 0", "not a number"),
        ("1 ||| x ||| d= 0 0 lm= -1e999 tm= 0 0 w= 0 ||| 0", "not finite"),
        ("1 ||| x ||| d= 0 0 lm= -1 tm= 0 0 w= 0 ||| Infinity", "not finite"),
        ("+1 ||| x ||| d= 0 0 lm= -1 tm= 0 0 w= 0 ||| 0", "sentence id"),
        ("1 ||| x ||| d= 0 0 lm= -1 tm= 0 0 w= 0 WT_a= 1 WT_a= 2 ||| 0", "twice"),
        ("   ", "empty line"),
    ],
)
def test_a_line_that_does_not_fit_its_file_is_an_error(tmp_path, fast, line, message):
    from smtlib.kbest.pool import _PoolBuilder

    first = "0 ||| a ||| d= 0 -1 lm= -2 tm= -1 -2 w= -1 ||| -3"
    path = write(tmp_path / "f.nbest", [first, first.replace("||| a", "||| b"), line, first.replace("0 |||", "2 |||", 1)])
    with pytest.raises(InputError, match=message) as error:
        _PoolBuilder(fast=fast).add_file(path)
    assert error.value.line == 3 and error.value.path == str(path)


@pytest.mark.parametrize("fast", [True, False])
def test_a_damaged_first_line_is_the_one_reported(tmp_path, fast):
    from smtlib.kbest.pool import _PoolBuilder

    good = "0 ||| a ||| d= 0 -1 lm= -2 ||| -3"
    for damaged in ("0 ||| a ||| d= 0 -1 ||| -3", "0 ||| a ||| d: 0 -1 lm: -2 ||| -3", "0 ||| a ||| 0 -1 -2 ||| -3",
                    "0 ||| a ||| d= 0 -1 lm= -2 -3"):
        path = write(tmp_path / "f.nbest", [damaged, good, good, good])
        with pytest.raises(InputError) as error:
            _PoolBuilder(fast=fast).add_file(path)
        assert error.value.line == 1, (damaged, error.value)


def test_the_dialect_is_decided_per_file_or_by_option(cli, tmp_path):
    zmert = write(tmp_path / "cand.txt", ["0 ||| a b ||| -1 -2 -3", "0 ||| a c ||| -1 -2 -4", "1 ||| d ||| -3 0 0"])
    assert read_pool(zmert).dense_names == ["F_0", "F_1", "F_2"]
    with pytest.raises(InputError, match=r"cand.txt:1: .*Z-MERT|cand.txt:1: .*feature value"):
        read_pool(zmert, dialect="moses")
    old = write(tmp_path / "old.nbest", ["0 ||| a ||| d: 1 2 lm: -3 ||| 1", "0 ||| b ||| d: 1 3 lm: -3 ||| 1"])
    result = cli("kbest", "merge", "--out", tmp_path / "m.gz", old, "--dialect", "moses")
    assert result.returncode == 2 and "old.nbest:1:" in result.stderr
    assert cli("kbest", "merge", "--out", tmp_path / "m.gz", old, "--dialect", "moses-old").returncode == 0


def test_joshua_names_must_occur_twice(tmp_path):
    lines = ["0 ||| a ||| lm_0=-1 tm_0=-2 ||| -3", "0 ||| b ||| lm_0=-2 tm_0=-1 OOV=1 ||| -3",
             "1 ||| c ||| lm_0=-2 tm_0=-1 OOV=2 ||| -3", "1 ||| d ||| lm_0=-2 tmm_0=-1 ||| -3"]
    with pytest.raises(InputError, match=r"j.nbest:4: feature 'tmm_0'"):
        read_pool(write(tmp_path / "j.nbest", lines))
    pool = read_pool(write(tmp_path / "ok.nbest", lines[:3]))  # OOV is absent from line 1: Joshua leaves out zeros
    assert pool.dense_names == ["lm_0", "tm_0", "OOV"] and pool.dense[0, 2] == 0


def test_sentence_ids_order_errors_name_the_odd_line(tmp_path):
    ids = [0, 0, 7, 1, 1]  # line 3 stands out
    path = write(tmp_path / "s.nbest", [f"{i} ||| x{k} ||| F= {k} ||| 0" for k, i in enumerate(ids)])
    with pytest.raises(InputError, match=r"s.nbest:3: sentence id 7 is out of order"):
        read_pool(path)
    ids = [0, 0, 1, 1, 0, 1]  # ambiguous: line 5 reported, line 4 named
    path = write(tmp_path / "t.nbest", [f"{i} ||| x{k} ||| F= {k} ||| 0" for k, i in enumerate(ids)])
    with pytest.raises(InputError, match=r"t.nbest:5: sentence id 0 after 1 on line 4"):
        read_pool(path)


def test_truncated_files_are_errors(tmp_path):
    data = ("\n".join(MOSES) + ".5\n").encode()
    path = tmp_path / "cut.nbest.gz"
    full = gzip.compress(data)
    path.write_bytes(full[: len(full) - 12])
    with pytest.raises(InputError, match=r"cut.nbest.gz:\d+: gzip data ends early"):
        read_pool(path)
    plain = tmp_path / "cut.nbest"
    plain.write_bytes(data[:-3])  # '-3.5\n' cut to '-3': a valid number; only the missing line end shows the cut
    with pytest.raises(InputError, match=r"cut.nbest:5: the last line has no line end"):
        read_pool(plain)


def test_reference_errors(cli, files):
    tmp, nbest, ref, _ = files
    short = write(tmp / "short.txt", REFS[:2])  # fewer lines than the largest id + 1
    message = one_error_line(cli("kbest", "stats", nbest, "--refs", short))
    assert f"{nbest}:5: sentence id 2 is out of range" in message and "short.txt" in message
    empty = write(tmp / "empty.txt", ["the house", "   ", "hello"])
    assert f"{empty}:2: empty reference line" in one_error_line(cli("bleu", "--refs", empty, "--hyps", ref))
    odd = write(tmp / "odd.txt", [*REFS, "four"])
    message = one_error_line(cli("bleu", "--refs", ref, ref, odd, "--hyps", ref))
    assert f"{odd}:4: has 4 lines but {ref} has 3" in message
    src = write(tmp / "src.txt", ["a", "b"])
    message = one_error_line(cli("data", "subsample", "--src", src, "--refs", ref, "--index", "1", "--out-src",
                                 tmp / "s", "--out-refs", tmp / "r", "--out-ids", tmp / "i"))
    assert f"{ref}:3:" in message and "source" in message


@pytest.mark.parametrize("command", ["tune kbmira", "tune mert", "tune --pool", "rerank", "kbest stats", "kbest add"])
def test_references_longer_than_the_pool_are_chosen_by_its_ids(cli, files, command):
    """References with more lines than the pool: its ids choose the lines (as Moses's mert), so every
    command gives what the matching references give and says it covers 3 sentences of 4 reference
    lines; --refs-prefix is accepted and changes nothing."""
    tmp, nbest, ref, init = files
    longer = write(tmp / "longer.txt", [*REFS, "one more sentence"])
    out = tmp / "out"

    def run(refs, *extra):
        if command == "rerank":
            args = ["rerank", "--kbest", nbest, "--weights", init, "--out", out]
        elif command == "kbest stats":
            args = ["kbest", "stats", nbest]
        elif command == "kbest add":
            args = ["kbest", "add", "--kbest", nbest, "--out", out]
        elif command == "tune --pool":
            pool = tmp / f"{refs.stem}.pool"
            if not pool.exists():
                assert cli("kbest", "add", "--kbest", nbest, "--refs", refs, "--out", pool).returncode == 0
            args = ["tune", "kbmira", "--pool", pool, "--init", init, "--out", out]
        else:
            args = [*command.split(), "--kbest", nbest, "--init", init, "--out", out]
        return cli(*args, "--refs", refs, *extra)

    def result(done):
        assert done.returncode == 0, done.stderr
        if command == "kbest add":
            from smtlib.kbest.store import read_stored

            return read_stored(out).arrays["stats"].tobytes()
        text = out.read_text() if out.exists() else done.stdout
        return text.replace("3 sentences of 3 reference lines", "3 sentences of 4 reference lines").replace(
            '"reference_lines": 3', '"reference_lines": 4')

    exact = result(run(ref))
    out.unlink(missing_ok=True)
    for extra in ([], ["--refs-prefix"]):
        done = run(longer, *extra)
        assert result(done) == exact
        if command in ("rerank", "tune kbmira", "tune mert", "tune --pool"):
            assert "on 3 sentences of 4 reference lines" in (done.stderr + (out.read_text() if command != "rerank" else ""))
        out.unlink(missing_ok=True)
    if command == "tune --pool":  # a pool's statistics are tied to the references they were computed with
        message = one_error_line(cli("tune", "kbmira", "--pool", tmp / "ref.pool", "--init", init, "--out", out,
                                     "--refs", longer))
        assert "computed against other references" in message


def test_a_pool_with_a_missing_sentence_in_the_middle_leaves_it_out(cli, files):
    """Sentence 1 without hypotheses: rerank writes an empty line for it (and says so), and its score
    covers sentences 0 and 2 only, as bleu on those lines against those reference lines gives."""
    tmp, _, ref, init = files
    gap = write(tmp / "gap.nbest", [MOSES[0], MOSES[1], MOSES[4]])
    result = cli("rerank", "--kbest", gap, "--weights", init, "--refs", ref, "--out", tmp / "best.txt")
    assert result.returncode == 0, result.stderr
    assert "note: 1 of the 3 lines written are empty" in result.stderr
    assert (tmp / "best.txt").read_text().split("\n")[:3] == ["the house", "", "hello"]
    write(tmp / "two.txt", ["the house", "hello"])
    write(tmp / "two.ref", [REFS[0], REFS[2]])
    bleu = json.loads(cli("bleu", "--refs", tmp / "two.ref", "--hyps", tmp / "two.txt").stdout)["score"]
    assert rerank_score(result.stderr)[:2] == (pytest.approx(bleu, abs=5e-5), "2 sentences of 3 reference lines")
    # bleu on the file scores its empty line as an output (and says it covers 3 sentences); chrF shows the difference
    everything = json.loads(cli("score", "--metric", "chrf", "--refs", ref, "--hyps", tmp / "best.txt").stdout)
    assert everything["sentences"] == 3
    chrf = cli("rerank", "--kbest", gap, "--weights", init, "--refs", ref, "--metric", "chrf")
    line = next(x for x in chrf.stderr.splitlines() if x.startswith("chrF2 = "))
    assert "on 2 sentences of 3 reference lines" in line and float(line.split()[2]) > everything["score"] + 1


@pytest.mark.data
def test_scorer_data_references_are_longer_than_its_pool(cli, shared_data, tmp_path):
    """Moses's test_scorer_data: 100 sentences, 2,000 reference lines: the first 100 are scored."""
    base = shared_data / "moses-mert-nbest" / "test_scorer_data"
    refs = base / "reference.txt.gz"
    first = write(tmp_path / "ref100.txt", read_lines(refs)[:100])
    weights = tmp_path / "w.txt"
    weights.write_text("d_0 0.3\nlm_0 0.5\ntm_0 0.2\ntm_1 0.2\nw_0 -0.5\n", encoding="utf-8")
    rerank = ["rerank", "--kbest", base / "nbest.out.gz", "--weights", weights, "--out", tmp_path / "best.txt"]
    whole = cli(*rerank, "--refs", refs)
    exact = cli(*rerank, "--refs", first)
    prefix = cli(*rerank, "--refs", refs, "--refs-prefix")
    assert whole.returncode == exact.returncode == prefix.returncode == 0, whole.stderr
    score, coverage, signature = rerank_score(exact.stderr)
    assert coverage == "100 sentences of 100 reference lines"
    assert rerank_score(whole.stderr) == rerank_score(prefix.stderr) == (score, "100 sentences of 2000 reference lines",
                                                                         signature)
    stats = json.loads(cli("kbest", "stats", base / "nbest.out.gz", "--refs", refs).stdout)
    assert stats["hypotheses_per_sentence"]["mean"] == 100.0 and stats["bleu_1best_by_total"] > 5
    assert (stats["sentences"], stats["reference_lines"]) == (100, 2000)


def test_misspelt_dense_names_are_errors_and_unknown_sparse_names_only_where_the_input_has_sparse():
    """Issue 28: a name that matches no feature of the input is an error where the input has no sparse
    features, and where it has some when it is within a few edits of a dense value."""
    dense = ["d_0", "lm_0", "tm_0", "tm_1", "w_0", "TranslationModel0_0", "TranslationModel0_1", "Distortion0_0"]
    for name, meant in (("tmm_1", "tm_1"), ("TranslatonModel0_1", "TranslationModel0_1"),
                        ("Distorsion0_0", "Distortion0_0"), ("TranslationMdoel0_0", "TranslationModel0_0"),
                        ("Tm_1x", "tm_1")):
        with pytest.raises(InputError, match=rf"w.txt: weight '{name}' is not a feature of the pool, which has no "
                                             rf"sparse features \(did you mean '{meant}'\?\)"):
            check_weight_names({name: 1.0}, dense, what="the pool", path="w.txt")
        with pytest.raises(InputError, match=rf"'{name}' is not a feature of the pool and is (one edit|2 edits) from "
                                             rf"its dense value '{meant}' \(did you mean '{meant}'\?\)"):
            check_weight_names({name: 1.0}, dense, sparse_names=["WT_a"], what="the pool", path="w.txt")
        check_weight_names({name: 1.0}, dense, sparse_names=[name])  # a feature of the input: fine
    # a pool with sparse features: sparse names it lacks are fine (a tuned file of another iteration)
    check_weight_names({"tm_0": 1, "WT_zz": 0.5, "wp_a~b": 1, "cb_le1": 2, "tu_the": 1}, dense, sparse_names=["WT_a"])
    check_weight_names({"WT_zz": 0.5}, dense, has_sparse=True)  # a model of a sparse feature set
    with pytest.raises(InputError, match="which has no sparse features .did you mean 'w_0'"):
        check_weight_names({"WT_zz": 0.5}, dense)
    assert edit_distance("tmm_1", "tm_1") == 1 and edit_distance("ab", "ba") == 1 and edit_distance("", "abc") == 3
    assert edit_distance("Distorsion0_0", "Distortion0_0") == 1 and edit_distance("kitten", "sitting") == 3


def test_weights_of_a_sparse_pool_may_name_sparse_features_it_lacks(cli, files):
    """A weights file for a sparse system (Big) against the pool of another iteration: unknown sparse
    names count 0, a misspelt dense name is still an error at its line."""
    tmp, nbest, ref, init = files
    sparse = write(tmp / "sparse.nbest", [line.replace(" w= ", " WT_a= 1 w= ") if line.startswith("1 ") else line
                                          for line in MOSES])
    weights = tmp / "w.txt"
    weights.write_text("lm_0 1\ntm_0 0.5\nWT_a 0.1\n", encoding="utf-8")
    base = cli("rerank", "--kbest", sparse, "--weights", weights, "--refs", ref)
    assert base.returncode == 0, base.stderr
    weights.write_text("lm_0 1\ntm_0 0.5\nWT_a 0.1\nWT_from_another_iteration 3\n", encoding="utf-8")
    result = cli("rerank", "--kbest", sparse, "--weights", weights, "--refs", ref)
    assert result.returncode == 0 and (result.stdout, result.stderr) == (base.stdout, base.stderr)
    weights.write_text("lm_0 1\ntmm_0 0.5\nWT_a 0.1\n", encoding="utf-8")
    for command in (["rerank", "--kbest", sparse, "--weights", weights],
                    ["tune", "kbmira", "--kbest", sparse, "--refs", ref, "--init", weights, "--out", tmp / "o.w"]):
        message = one_error_line(cli(*command))
        assert f"{weights}:2: weight 'tmm_0' is not a feature of the k-best pool and is one edit from its dense value " \
               "'tm_0' (did you mean 'tm_0'?)" in message
    assert not (tmp / "o.w").exists()


@pytest.mark.data
def test_scorer_data_rerank_rejects_misspelt_dense_names(cli, shared_data, tmp_path):
    """Issue 28: `tmm_1`, `TranslatonModel0_1`, `Distorsion0_0` changed rerank's BLEU with exit 0."""
    nbest = shared_data / "moses-mert-nbest" / "test_scorer_data" / "nbest.out.gz"
    weights = tmp_path / "w.txt"
    for typo, meant in (("tmm_1", "tm_1"), ("TranslatonModel0_1", "lm_1"), ("Distorsion0_0", "d_0")):
        weights.write_text(f"d_0 0.3\nlm_0 0.5\ntm_0 0.2\n{typo} 0.2\nw_0 -0.5\n", encoding="utf-8")
        message = one_error_line(cli("rerank", "--kbest", nbest, "--weights", weights, "--out", tmp_path / "best"))
        assert f"{weights}:4: weight '{typo}' is not a feature of the k-best pool, which has no sparse features" in message
        assert f"did you mean '{meant}'?" in message
        assert not (tmp_path / "best").exists()


def test_weight_names_rule():
    dense = ["LM0_0", "TranslationModel0_0", "TranslationModel0_1", "d_0"]
    # sparse names, where the input has sparse features: fine, absent ones never fire
    check_weight_names({"LM0_0": 1, "WT_a~b": 2, "cbin_3": 1}, dense, has_sparse=True)
    check_weight_names({}, dense)  # every missing weight is 0
    for name, problem in (("lm0", "did you mean 'LM0_0'"), ("TranslationModel0_2", "out of range"),
                          ("lm0_0", "differs in case"), ("LM1_0", "does not have"), ("Distortion0_0", "does not have"),
                          ("WordPenalty", "sparse names contain '_'")):
        with pytest.raises(InputError, match=problem):
            check_weight_names({name: 1.0}, dense, path="w.txt")


def test_weights_file_values_and_lines(tmp_path):
    path = tmp_path / "w.txt"
    path.write_text("# c\nLM0_0 1\n\nTM0_0 1_0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"w.txt:4: weight of 'TM0_0': '1_0' is not a number"):
        read_weights(path)
    path.write_text("LM0_0 1\nTM0_0 2\nLM0_0 3\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"w.txt:3: .*twice \(first on line 1\)"):
        read_weights(path)


def test_set_and_param_typos_are_errors(cli, files):
    tmp, nbest, ref, init = files
    for value in ("ture", "2", ""):
        result = cli("bleu", "--refs", ref, "--hyps", ref, "--sentence", "--variant", "moses-smoothed", "--param",
                     f"bp_smooth={value}")
        assert result.returncode == 2 and "bp_smooth" in result.stderr
    for setting in ("restarts=2.5", "restarts=", "min_gain=1e-3x", "min_gain=nan", "restarts"):
        result = cli("tune", "mert", "--kbest", nbest, "--refs", ref, "--init", init, "--out", tmp / "o.w", "--set", setting)
        assert result.returncode == 2 and ("restarts" in result.stderr or "min_gain" in result.stderr), setting
        assert not (tmp / "o.w").exists()


def test_signatures_list_every_parameter():
    from smtlib.bleu.signature import BleuSignature
    from smtlib.bleu.stats import BleuSettings
    from smtlib.bleu.variants import get_variant

    settings = BleuSettings()
    seen = set()
    for params in ({}, {"value": 2.0}, {"effective_order": False}):
        signature = str(BleuSignature.for_variant(get_variant("bleu+1", **params), settings, 1))
        assert signature not in seen
        seen.add(signature)
    assert "|eff:yes|tok:13a|smooth:bleu+1[value=1]|" in str(BleuSignature.for_variant(get_variant("bleu+1"), settings, 1))
    assert str(BleuSignature(settings, 2)).startswith("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|reflen:closest|")
    assert "smooth:floor[0.10]" in str(BleuSignature(settings, 1, "floor"))


def test_written_pools_read_back_with_mixed_totals_and_extras(tmp_path):
    from smtlib.kbest.pool import write_pool

    a = write(tmp_path / "a.nbest", ["0 ||| a ||| F= 1 ||| 1 ||| 0-0", "1 ||| b ||| F= 2 ||| 2 ||| 0-0"])
    b = write(tmp_path / "b.nbest", ["0 ||| c ||| F= 3 |||", "1 ||| d ||| F= 4 |||"])
    pool = read_pool([a, b])
    write_pool(pool, tmp_path / "m.nbest")
    again = read_pool(tmp_path / "m.nbest")
    assert again.texts == pool.texts and np.isnan(again.totals).all()
    np.testing.assert_array_equal(again.dense, pool.dense)


def test_scanner_agrees_with_the_line_parser_on_numbers(tmp_path):
    """Fast conversion (Clinger's exact path) and float() give the same bits; odd tokens are rejected by both."""
    from smtlib.kbest.pool import _PoolBuilder

    rng = np.random.default_rng(3)
    tokens = ["0", "-0", "+0.0", ".5", "5.", "1e5", "1E-5", "-1.5e+3", "123456789012345678901234", "0.1", "0.30000000000000004",
              "9007199254740993", "1e-22", "1e22", "1e23", "4.9e-324", "1.7976931348623157e308", "00012", "-.0e0"]
    tokens += [repr(float(x)) for x in rng.normal(scale=1e3, size=200)] + [f"{x:.6g}" for x in rng.normal(size=200)]
    lines = [f"0 ||| x{k} ||| F= {t} ||| {t}" for k, t in enumerate(tokens)]
    path = write(tmp_path / "n.nbest", lines)
    fast, slow = _PoolBuilder(fast=True), _PoolBuilder(fast=False)
    fast.add_file(path)
    slow.add_file(path)
    values = [float(t) for t in tokens]
    for builder in (fast, slow):
        chunk = builder.chunks[0]
        assert chunk.dense[:, 0].tolist() == values and chunk.totals.tolist() == values
        assert np.array_equal(np.signbit(chunk.dense[:, 0]), np.signbit(values))
    for bad in ("1.2.3", "--1", "1e", "e5", ".", "+", "0x10", "1,5", "1e5.0", "\u0663"):
        path = write(tmp_path / "b.nbest", ["0 ||| x ||| F= 1 ||| 0", f"0 ||| y ||| F= {bad} ||| 0"])
        for builder in (_PoolBuilder(fast=True), _PoolBuilder(fast=False)):
            with pytest.raises(InputError, match="b.nbest:2:"):
                builder.add_file(path)


def test_scanner_normalises_hypotheses_as_str_split(tmp_path):
    from smtlib.kbest.pool import _PoolBuilder

    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace() and chr(c) not in "\n\r"]
    texts = [f"a{s}b  c{s}" for s in spaces] + ["\u00e9t\u00e9 \u4e2d\u6587\u3000x", " lead trail "]
    path = write(tmp_path / "h.nbest", [f"0 ||| {t} ||| F= 1 ||| 0" for t in texts])
    fast, slow = _PoolBuilder(fast=True), _PoolBuilder(fast=False)
    fast.add_file(path)
    slow.add_file(path)
    assert fast.chunks[0].texts == slow.chunks[0].texts == [" ".join(t.split()) for t in texts]
