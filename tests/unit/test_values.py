"""smtlib.values's option types: what an integer or a positive number option accepts and how it refuses the rest."""

import argparse

import pytest

from smtlib.values import integer_at_least, positive_float


@pytest.mark.parametrize("minimum, text, value", [(1, "1", 1), (1, "80", 80), (0, "0", 0), (0, "+3", 3)])
def test_integer_at_least_accepts(minimum, text, value):
    assert integer_at_least(minimum)(text) == value


@pytest.mark.parametrize("minimum, text, expected", [
    (1, "0", "a positive integer"), (1, "-2", "a positive integer"), (1, "2.5", "a positive integer"),
    (1, "1_000", "a positive integer"), (0, "-1", "an integer >= 0"), (0, "x", "an integer >= 0"),
    (0, "", "an integer >= 0"),
])
def test_integer_at_least_refuses(minimum, text, expected):
    with pytest.raises(argparse.ArgumentTypeError, match=f"expected {expected}, got {text!r}"):
        integer_at_least(minimum)(text)


@pytest.mark.parametrize("text, value", [("0.3", 0.3), ("2", 2.0), ("1e-3", 0.001), (" .5 ", 0.5)])
def test_positive_float_accepts(text, value):
    assert positive_float(text) == value


@pytest.mark.parametrize("text", ["0", "-0.3", "nan", "inf", "x", "", "0.3.1"])
def test_positive_float_refuses(text):
    with pytest.raises(argparse.ArgumentTypeError, match=f"expected a number above 0, got {text!r}"):
        positive_float(text)


def test_a_refused_option_is_a_usage_error(capsys):
    from smtlib.cli import main

    assert main(["train", "phrases", "--max-phrase-length", "0"]) == 2
    assert "expected a positive integer, got '0'" in capsys.readouterr().err
