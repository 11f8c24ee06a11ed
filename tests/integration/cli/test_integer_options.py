"""Every integer option of the commands is checked where it is parsed: a negative seed, a k-best
size of 0 or a negative job count is exit status 2 with the option named on the last line, before
any input is read (so the files named here need not exist)."""

from __future__ import annotations

import pytest

from smtlib.cli import main

CASES = [
    ("tune kbmira --kbest k --refs r --init w --out o --seed -5", "--seed", "an integer >= 0"),
    ("tune pro --kbest k --refs r --init w --out o --seed -1", "--seed", "an integer >= 0"),
    ("tune lbmert --lattice l --refs r --init w --out o --jobs 0", "--jobs", "a positive integer"),
    ("tune mira --model m --source s --refs r --init w --out o --shard -1", "--shard", "an integer >= 0"),
    ("compare --refs r --baseline h --seed -3", "--seed", "an integer >= 0"),
    ("compare --refs r --baseline h --boot-samples 0", "--boot-samples", "a positive integer"),
    ("decode --model m --weights w --k 0", "--k", "a positive integer"),
    ("decode --model m --weights w --jobs -2", "--jobs", "a positive integer"),
    ("decode --model m --weights w --stack-size -1", "--stack-size", "an integer >= 0"),
    ("decode --model m --weights w --distortion-limit -2", "--distortion-limit", "an integer >= -1"),
    ("data subsample --index 0 --seed -1", "--seed", "an integer >= 0"),
    ("train align --seed -7", "--seed", "an integer >= 0"),
    ("sgd table --run a=b --test-refs r --out o --trials 0", "--trials", "a positive integer"),
    ("loop --source s --refs r --init w --decoder d --runs 0", "--runs", "a positive integer"),
    ("loop --source s --refs r --init w --decoder d --seed -1", "--seed", "an integer >= 0"),
]


@pytest.mark.parametrize("command, option, expected", CASES, ids=[c[0].split(" --")[0] + " " + c[1] for c in CASES])
def test_a_bad_integer_is_a_usage_error_naming_the_option(command, option, expected, capsys):
    assert main(command.split()) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"argument {option}" in last and f"expected {expected}" in last, last


def test_an_output_in_a_missing_directory_creates_it_as_documented(tmp_path, capsys):
    """README: every command creates the missing directories of an output path (``mkdir -p``)."""
    (tmp_path / "ref").write_text("a b c\nd e f\n", encoding="utf-8")
    (tmp_path / "k").write_text("0 ||| a b c ||| lm= -1 ||| -1\n0 ||| a b ||| lm= -2 ||| -2\n1 ||| d e f ||| lm= -1 ||| -1\n",
                                encoding="utf-8")
    (tmp_path / "w").write_text("lm_0 1\n", encoding="utf-8")
    out = tmp_path / "new" / "deeper"
    assert main(["rerank", "--kbest", str(tmp_path / "k"), "--weights", str(tmp_path / "w"), "--out",
                 str(out / "1best")]) == 0
    assert main(["tune", "kbmira", "--kbest", str(tmp_path / "k"), "--refs", str(tmp_path / "ref"), "--init",
                 str(tmp_path / "w"), "--out", str(out / "w"), "--quiet"]) == 0
    assert (out / "1best").read_text(encoding="utf-8") == "a b c\nd e f\n" and (out / "w").exists()
