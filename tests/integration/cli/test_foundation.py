"""The foundation commands end to end: bleu, kbest, rerank, weights; exit status 2 on bad input."""

from __future__ import annotations

import gzip
import json

import pytest
import sacrebleu

from smtlib.weights import read_weights

REFS = ["The cat sat on the mat .", "A dog runs in the park !", "Hello world"]
HYPS = ["The cat sat on a mat .", "a dog is running in the park", ""]


@pytest.fixture
def files(tmp_path):
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    nbest = tmp_path / "k.nbest"
    nbest.write_text(
        "0 ||| the cat sat on the mat . ||| LM0= -1 TM0= -2 ||| 0\n"
        "0 ||| the cat on mat ||| LM0= -3 TM0= 0 ||| 0\n"
        "2 ||| hello world ||| LM0= -1 TM0= -1 s_x= 1 ||| 0\n",
        encoding="utf-8",
    )
    return tmp_path, ref, hyp, nbest


def test_bleu_json_equals_sacrebleu(cli, files):
    _, ref, hyp, _ = files
    result = cli("bleu", "--refs", ref, "--hyps", hyp, "--tokenize", "13a")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["score"] == pytest.approx(sacrebleu.corpus_bleu(HYPS, [REFS]).score, abs=1e-9)
    assert data["signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|reflen:closest|version:")
    default = json.loads(cli("bleu", "--refs", ref, "--hyps", hyp).stdout)  # no options: sacrebleu's defaults
    assert default["signature"] == data["signature"]
    assert default["score"] == pytest.approx(sacrebleu.corpus_bleu(HYPS, [REFS]).score, abs=1e-9)
    result = cli("bleu", "--refs", ref, ref, "--hyps", hyp, "--lowercase", "--tokenize", "none", "--score-only")
    expected = sacrebleu.corpus_bleu(HYPS, [REFS, REFS], lowercase=True, tokenize="none").score
    assert float(result.stdout) == pytest.approx(expected, abs=1e-4)


def test_bleu_from_stdin_and_sentence_mode(cli, files):
    _, ref, hyp, _ = files
    result = cli("bleu", "--refs", ref, input="\n".join(HYPS) + "\n", )
    assert result.returncode == 0, result.stderr
    result = cli("bleu", "--refs", ref, "--hyps", hyp, "--sentence", "--variant", "exp", "--tokenize", "13a")
    scores = [float(x) for x in result.stdout.split()]
    expected = [sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(HYPS, REFS, strict=True)]
    assert scores == pytest.approx(expected, abs=1e-5)
    assert "|eff:yes|tok:13a|smooth:exp|" in result.stderr  # sacrebleu's sentence_bleu: effective order on
    listing = cli("bleu", "--list-variants").stdout
    for name in ("bleu+1", "moses-smoothed", "liang-interpolated", "pseudo-doc", "floor", "add-k", "exp", "none"):
        assert name in listing


def test_bleu_bad_input(cli, files):
    tmp, ref, hyp, _ = files
    short = tmp / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    result = cli("bleu", "--refs", ref, "--hyps", short)
    assert result.returncode == 2 and "short.txt" in result.stderr and "lines" in result.stderr
    empty = tmp / "empty.txt"
    empty.write_text("", encoding="utf-8")
    result = cli("bleu", "--refs", empty, "--hyps", hyp)
    assert result.returncode == 2 and "empty" in result.stderr
    result = cli("bleu", "--refs", tmp / "missing.txt", "--hyps", hyp)
    assert result.returncode == 2 and "not found" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_kbest_merge_convert_stats(cli, files):
    tmp, ref, _, nbest = files
    out = tmp / "merged.nbest.gz"
    result = cli("kbest", "merge", "--out", out, nbest, nbest)
    assert result.returncode == 0, result.stderr
    lines = gzip.open(out, "rt", encoding="utf-8").read().splitlines()
    assert len(lines) == 3 and lines[2].startswith("2 ||| hello world ||| LM0= -1 TM0= -1 s_x= 1")
    old = tmp / "old.nbest"
    old.write_text("0 ||| a b ||| d: 1 2 lm: -3 ||| 1\n", encoding="utf-8")
    assert cli("kbest", "convert", old, "--out", tmp / "new.nbest").returncode == 0
    assert (tmp / "new.nbest").read_text().startswith("0 ||| a b ||| d= 1 2 lm= -3 ||| 1")
    stats = json.loads(cli("kbest", "stats", nbest, "--refs", ref, "--lowercase").stdout)
    assert stats["hypotheses"] == 3 and stats["sentences"] == 2 and stats["sparse_features"] == 1
    assert stats["bleu_oracle"] >= stats["bleu_1best_by_total"]


def test_rerank_one_line_per_id(cli, files):
    tmp, ref, _, nbest = files
    weights = tmp / "w.txt"
    weights.write_text("# comment\nLM0_0 1\nTM0_0 1\n", encoding="utf-8")
    result = cli("rerank", "--kbest", nbest, "--weights", weights)
    assert result.stdout.split("\n")[:3] == ["the cat sat on the mat .", "", "hello world"]
    weights.write_text("LM0_0 0\nTM0_0 1\n", encoding="utf-8")
    result = cli("rerank", "--kbest", nbest, "--weights", weights, "--out", tmp / "best.txt", "--refs", ref, "--lowercase")
    assert (tmp / "best.txt").read_text().split("\n")[0] == "the cat on mat"
    assert "BLEU =" in result.stderr


def test_bad_kbest_leaves_no_output(cli, files):
    tmp, _, _, nbest = files
    bad = tmp / "bad.nbest"
    bad.write_text("0 ||| a ||| LM0= 1 ||| 0\n0 ||| b ||| LM0= nan ||| 0\n", encoding="utf-8")
    out = tmp / "out.nbest"
    result = cli("kbest", "merge", "--out", out, nbest, bad)
    assert result.returncode == 2
    assert "bad.nbest:2" in result.stderr and "not finite" in result.stderr
    assert not out.exists() and not list(tmp.glob(".tmp-*"))


def test_weights_moses_ini_round_trip(cli, tmp_path):
    weights = tmp_path / "w.txt"
    weights.write_text("LM0_0 0.5\nTranslationModel0_0 0.2\nTranslationModel0_1 0.3\nWT_a~b 0.01\n", encoding="utf-8")
    ini = tmp_path / "moses.ini"
    ini.write_text("[feature]\nLM0 order=4\nPhraseDictionaryMemory name=TranslationModel0 num-features=2\n\n"
                   "[weight]\nLM0= 1\nTranslationModel0= 1 1\n", encoding="utf-8")
    result = cli("weights", "to-moses-ini", weights, "--ini", ini, "--out", tmp_path / "new.ini")
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "new.ini").read_text()
    assert "[feature]\nLM0 order=4" in text and "TranslationModel0= 0.2 0.3" in text and "LM0= 1\n" not in text
    weights.write_text("LM1_0 0.5\n", encoding="utf-8")  # a dense feature the moses.ini does not have
    result = cli("weights", "to-moses-ini", weights, "--ini", ini, "--out", tmp_path / "bad.ini")
    assert result.returncode == 2 and "w.txt:1" in result.stderr and "LM0_0" in result.stderr
    assert cli("weights", "from-moses-ini", tmp_path / "new.ini", "--out", tmp_path / "back.txt").returncode == 0
    assert read_weights(tmp_path / "back.txt") == {"LM0_0": 0.5, "TranslationModel0_0": 0.2, "TranslationModel0_1": 0.3,
                                                   "WT_a~b": 0.01}


def test_bad_weights_file(cli, files):
    tmp, _, _, nbest = files
    weights = tmp / "w.txt"
    weights.write_text("LM0_0 1 2\n", encoding="utf-8")
    result = cli("rerank", "--kbest", nbest, "--weights", weights)
    assert result.returncode == 2 and "w.txt:1" in result.stderr


def test_help_and_unknown_command(cli):
    assert cli("--help").returncode == 0
    assert cli("bleu", "--help").returncode == 0
    assert cli("no-such-command").returncode == 2
    assert cli("tune", "no-such-method", "--kbest", "x").returncode == 2


@pytest.mark.data
def test_old_moses_ini_weights(cli, shared_data, tmp_path):
    ini = shared_data / "moses-mert-nbest/regression/mert-moses-new-aggregate/moses.ini.gz"
    assert cli("weights", "from-moses-ini", ini, "--out", tmp_path / "w.txt").returncode == 0
    weights = read_weights(tmp_path / "w.txt")
    assert list(weights) == [f"d_{k}" for k in range(7)] + ["lm_0"] + [f"tm_{k}" for k in range(5)] + ["w_0"]
    assert weights["d_0"] == 0.4 and weights["lm_0"] == 0.5 and weights["w_0"] == -1.0


def test_kbest_cli_bad_inputs(cli, files):
    tmp, ref, _, nbest = files
    two_refs = tmp / "two.txt"
    two_refs.write_text("a\nb\n", encoding="utf-8")
    result = cli("kbest", "stats", nbest, "--refs", two_refs)  # nbest has id 2
    assert result.returncode == 2 and "sentence id 2" in result.stderr
    empty = tmp / "empty.nbest"
    empty.write_text("", encoding="utf-8")
    result = cli("kbest", "merge", "--out", tmp / "o.gz", empty)
    assert result.returncode == 2 and "empty.nbest" in result.stderr and "empty" in result.stderr
    decreasing = tmp / "dec.nbest"
    decreasing.write_text("1 ||| a ||| F= 1 ||| 0\n0 ||| b ||| F= 1 ||| 0\n", encoding="utf-8")
    result = cli("kbest", "merge", "--out", tmp / "o.gz", decreasing)
    assert result.returncode == 2 and "dec.nbest:2" in result.stderr
    assert not (tmp / "o.gz").exists()


def test_top_level_help_imports_no_command_module():
    """``smtlib --help`` lists the commands from their one-line help without importing any of them."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from smtlib.cli import main\n"
        "main(['--help'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('smtlib.') and m.count('.') > 1 or m == 'numpy'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "tune" in out
    assert out.strip().splitlines()[-1] == "[]"


def test_tune_list_imports_no_optimizer():
    """``smtlib tune --list`` reads the registry only: no tuner module, no numba, scipy or pandas."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from smtlib.cli import main\n"
        "main(['tune', '--list'])\n"
        "heavy = ('numba', 'scipy', 'pandas', 'smtlib.kbest.pool', 'smtlib.tuners.mert')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    assert lines[-1] == "[]"
    assert any(line.startswith("lbmira\t") for line in lines)


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077, 0o002])
def test_atomic_outputs_get_the_mode_of_a_plain_open(cli, tmp_path, umask):
    """Issue 28: the temporary file's private 0600 must not become the output's mode."""
    import os
    import stat

    from smtlib.io import atomic_output, write_lines

    old = os.umask(umask)
    try:
        with open(tmp_path / "plain.txt", "w") as fh:
            fh.write("x\n")
        expected = stat.S_IMODE(os.stat(tmp_path / "plain.txt").st_mode)
        assert expected == 0o666 & ~umask
        with atomic_output(tmp_path / "atomic.txt") as out:
            out.write("x\n")
        with atomic_output(tmp_path / "atomic.gz") as out:
            out.write("x\n")
        write_lines(tmp_path / "lines.gz", ["a", "b"])
        (tmp_path / "w.txt").write_text("LM0_0 1\n", encoding="utf-8")
        # a command in a child process, which inherits the umask
        assert cli("weights", "to-moses-ini", tmp_path / "w.txt", "--out", tmp_path / "cli.ini").returncode == 0
    finally:
        os.umask(old)
    for name in ("atomic.txt", "atomic.gz", "lines.gz", "cli.ini"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == expected, name


OLD_INI = """# an old-format moses.ini
[ttable-file]
0 0 0 3 /tm/phrase-table.gz

[lmodel-file]
8 0 3 /lm/lm.blm

[distortion-file]
0-0 wbe-msd-bidirectional-fe-allff 2 /rm/reordering-table.gz

# distortion weights: the distance one, then the reordering table's
[weight-d]
0.3
0.1   # forward
0.2

[weight-l]
0.5

[weight-t]
0.2
0.2
0.2

[weight-w]
-1

[distortion-limit]
6
"""


def test_weights_to_old_moses_ini_replaces_the_old_sections_in_place(cli, tmp_path):
    """Issue 28: an old-format moses.ini got a [weight] section next to its old sections, which kept the
    old values (two contradictory weight sets); now the old sections get the new values in place."""
    ini = tmp_path / "old.ini"
    ini.write_text(OLD_INI, encoding="utf-8")
    assert cli("weights", "from-moses-ini", ini, "--out", tmp_path / "w.txt").returncode == 0
    weights = read_weights(tmp_path / "w.txt")
    assert list(weights) == ["d_0", "d_1", "d_2", "lm_0", "tm_0", "tm_1", "tm_2", "w_0"]
    new = {**weights, "d_1": 0.625, "lm_0": 0.25, "tm_2": -0.125, "w_0": 0.5}
    del new["tm_0"]  # a missing weight is 0
    (tmp_path / "new.txt").write_text("".join(f"{n} {v}\n" for n, v in new.items()), encoding="utf-8")
    result = cli("weights", "to-moses-ini", tmp_path / "new.txt", "--ini", ini, "--out", tmp_path / "new.ini")
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "new.ini").read_text(encoding="utf-8")
    assert "[weight]" not in text
    assert text == (OLD_INI.replace("0.1   # forward", "0.625   # forward").replace("[weight-l]\n0.5", "[weight-l]\n0.25")
                    .replace("[weight-t]\n0.2\n0.2\n0.2", "[weight-t]\n0\n0.2\n-0.125").replace("[weight-w]\n-1",
                                                                                             "[weight-w]\n0.5"))
    assert cli("weights", "from-moses-ini", tmp_path / "new.ini", "--out", tmp_path / "back.txt").returncode == 0
    assert read_weights(tmp_path / "back.txt") == {**new, "tm_0": 0.0}
    # the old dialect has no place for sparse weights; a misspelt name is an error as everywhere
    for extra, message in (("WT_a~b 1\n", "'WT_a~b' is not a feature of the moses.ini"), ("tmm_1 1\n", "did you mean 'tm_1'")):
        (tmp_path / "bad.txt").write_text("lm_0 1\n" + extra, encoding="utf-8")
        result = cli("weights", "to-moses-ini", tmp_path / "bad.txt", "--ini", ini, "--out", tmp_path / "bad.ini")
        assert result.returncode == 2 and "bad.txt:2:" in result.stderr and message in result.stderr, result.stderr
        assert not (tmp_path / "bad.ini").exists()


def test_weights_to_new_moses_ini_rewrites_its_weight_section_in_place(cli, tmp_path):
    ini = tmp_path / "moses.ini"
    ini.write_text("[feature]\nLM0 order=4\nPhraseDictionaryMemory name=TranslationModel0 num-features=2\n"
                   "WordPenalty\n\n[weight]\nLM0= 1\n# the phrase table\nTranslationModel0= 1 1\nWordPenalty0= -1\n\n"
                   "[distortion-limit]\n6\n", encoding="utf-8")
    weights = tmp_path / "w.txt"
    weights.write_text("TranslationModel0_1 0.25\nLM0_0 0.5\nwp_a~b 0.125\n", encoding="utf-8")
    result = cli("weights", "to-moses-ini", weights, "--ini", ini, "--out", tmp_path / "new.ini")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "new.ini").read_text(encoding="utf-8") == (
        "[feature]\nLM0 order=4\nPhraseDictionaryMemory name=TranslationModel0 num-features=2\nWordPenalty\n\n"
        "[weight]\nLM0= 0.5\nTranslationModel0= 0 0.25\nWordPenalty0= 0\nwp_a~b= 0.125\n\n[distortion-limit]\n6\n")
    assert cli("weights", "from-moses-ini", tmp_path / "new.ini", "--out", tmp_path / "back.txt").returncode == 0
    assert read_weights(tmp_path / "back.txt") == {"LM0_0": 0.5, "TranslationModel0_0": 0.0, "TranslationModel0_1": 0.25,
                                                   "WordPenalty0_0": 0.0, "wp_a~b": 0.125}


@pytest.mark.data
def test_weights_round_trip_through_moses_old_regression_ini(cli, shared_data, tmp_path):
    ini = shared_data / "moses-mert-nbest/regression/mert-moses-new-aggregate/moses.ini.gz"
    assert cli("weights", "from-moses-ini", ini, "--out", tmp_path / "w.txt").returncode == 0
    tuned = {name: value / 2 for name, value in read_weights(tmp_path / "w.txt").items()}
    (tmp_path / "tuned.txt").write_text("".join(f"{n} {v!r}\n" for n, v in tuned.items()), encoding="utf-8")
    assert cli("weights", "to-moses-ini", tmp_path / "tuned.txt", "--ini", ini, "--out", tmp_path / "t.ini").returncode == 0
    text = (tmp_path / "t.ini").read_text(encoding="utf-8")
    assert "[weight]" not in text and "[weight-d]\n0.2\n0.075\n" in text
    assert cli("weights", "from-moses-ini", tmp_path / "t.ini", "--out", tmp_path / "back.txt").returncode == 0
    assert read_weights(tmp_path / "back.txt") == tuned
    original = gzip.decompress(ini.read_bytes()).decode().splitlines()
    assert len(text.splitlines()) == len(original)  # the same layout, only values changed


SPHINX = ("`", ":mod:", ":func:", ":class:", ":meth:", ":data:")


@pytest.mark.parametrize("command", ["bleu", "score", "kbest", "tune", "rerank", "weights", "train", "decode", "data", "sgd",
                                     "report"])
def test_command_help_is_plain_text(command, capsys):
    """Issue 28: `smtlib CMD --help` printed the module docstring with its Sphinx markup."""
    from smtlib.cli import main

    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert not [s for s in SPHINX if s in out], out


def test_tune_method_help_shows_its_summary_settings_and_required_options(cli):
    """Issue 28: `smtlib tune kbmira --help` printed the generic help, hid the settings behind
    --help-params and showed --init as optional."""
    from smtlib.tuners.registry import get_tuner_class, summary

    result = cli("tune", "kbmira", "--help")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    usage = out.split("\n\n", 1)[0]
    assert usage == "usage: smtlib tune kbmira (--kbest K [K ...] | --pool POOL) --refs REF [REF ...] --init W --out W [options]"
    assert f"kbmira: {summary('kbmira')}" in out
    for key, value in get_tuner_class("kbmira").defaults.items():
        assert f"\n  {key}={value}\n" in out + "\n"
    assert "--init W, -i W        initial weights file (required)" in out
    for option in ("--lattice", "--paths-out", "--jobs", "--model", "--source", "--stack-size", "--mix"):
        assert option not in out, option  # options of the lattice tuners and online MIRA (issue 26)
    assert not [s for s in SPHINX if s in out], out
    lattice = cli("tune", "lbmira", "--help").stdout
    assert "usage: smtlib tune lbmira --lattice LATTICE [LATTICE ...] --refs REF [REF ...] --init W --out W" in lattice
    assert "density=50.0" in lattice and "--paths-out" in lattice and "--jobs" in lattice
    for option in ("--pool", "--dialect", "--model", "--stack-size", "--mix"):
        assert option not in lattice, option
    online = cli("tune", "mira", "--help").stdout
    assert "usage: smtlib tune mira --model MODEL --source SRC --refs REF [REF ...] --init W --out W" in online
    assert "smtlib tune mira --mix SHARD_JSON" in online and "--stack-size" in online
    for option in ("--kbest", "--pool", "--dialect", "--lattice", "--paths-out", "--jobs"):
        assert option not in online, option


def test_tune_takes_only_its_kinds_options(cli):
    """Issue 26: a k-best method does not accept (and silently ignore) a lattice or decoder option."""
    for extra in (["--lattice", "x.lat"], ["--model", "m"], ["--jobs", "2"]):
        result = cli("tune", "kbmira", "--kbest", "x.nbest", "--refs", "r", "--init", "w", "--out", "o", *extra)
        assert result.returncode == 2 and f"unrecognized arguments: {extra[0]}" in result.stderr, result.stderr
    result = cli("tune", "lbmira", "--lattice", "x.lat", "--refs", "r", "--init", "w", "--out", "o", "--pool", "p")
    assert result.returncode == 2 and "unrecognized arguments: --pool" in result.stderr, result.stderr


def test_every_tune_method_has_its_help(capsys):
    from smtlib.cli import main
    from smtlib.tuners.registry import get_tuner_class, list_tuners, summary

    for method in list_tuners():
        assert main(["tune", method, "--help"]) == 0, method
        out = capsys.readouterr().out
        assert out.startswith(f"usage: smtlib tune {method} ") and f"{method}: {summary(method)}" in out
        assert all(f"  {key}={value}" in out for key, value in get_tuner_class(method).defaults.items()), method


@pytest.mark.parametrize("extra", [[], ["--help"], ["--help-params"], ["--kbest", "x.nbest"]])
def test_unknown_tune_method_says_did_you_mean(cli, extra):
    result = cli("tune", "kbmiraa", *extra)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("smtlib tune: error: unknown tuning method 'kbmiraa' (did you mean 'kbmira'?)")
