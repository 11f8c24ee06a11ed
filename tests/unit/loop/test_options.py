"""The loop's options: --range, the checks of LoopOptions, the configuration a working directory is bound
to, and the names of --fixed and --range (smtlib.loop.options, smtlib.loop.constraints)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from smtlib.errors import InputError
from smtlib.loop.constraints import clip, resolve
from smtlib.loop.options import LoopOptions, RangeSpec, configuration_difference, parse_range


def test_ranges_are_name_low_high():
    assert parse_range("LM0_0:-1..1") == RangeSpec("LM0_0", -1.0, 1.0)
    assert parse_range("TranslationModel0: 0 .. 2.5") == RangeSpec("TranslationModel0", 0.0, 2.5)
    assert parse_range("a:b_c:-3..-2") == RangeSpec("a:b_c", -3.0, -2.0)  # the last ':' separates
    for text, message in [("LM0_0", "expects NAME:LO..HI"), ("LM0_0:1-2", "expects NAME:LO..HI"),
                          (":0..1", "expects NAME:LO..HI"), ("x:a..1", "'a' is not a number"),
                          ("x:2..1", "the low bound 2 is above the high bound 1"), ("x:nan..1", "is not a number")]:
        with pytest.raises(InputError, match=message):
            parse_range(text)


def _options(tmp_path, **changes) -> LoopOptions:
    for name in ("dev.src", "dev.en", "w"):
        if not (tmp_path / name).exists():
            (tmp_path / name).write_text("a b\n")
    base = LoopOptions(source=str(tmp_path / "dev.src"), refs=(str(tmp_path / "dev.en"),), init=str(tmp_path / "w"),
                       decoder="dec {weights}")
    return dataclasses.replace(base, **changes)


@pytest.mark.parametrize("changes, message", [
    ({"method": "kbmria"}, "did you mean 'kbmira'"),
    ({"start_from": "mert"}, "is the method itself"),
    ({"start_params": {"max_iter": "5"}}, "there is no --start-from"),
    ({"dialect": "klingon"}, "unknown --dialect"),
    ({"k": 0}, "--k must be at least 1"),
    ({"jobs": 0}, "--jobs must be at least 1"),
    ({"max_iterations": 0}, "--max-iterations"),
    ({"epsilon": -1.0}, "--epsilon"),
    ({"prev_nbest": 0}, "--prev-nbest must be at least 1"),
    ({"historic_interpolation": 1.5}, "the share of the new weights"),
    ({"runs": 0}, "--runs"),
    ({"test": "t.src"}, "--test and --test-refs go together"),
    ({"ranges": (RangeSpec("a", 0, 1), RangeSpec("a", 1, 2))}, "--range a is given twice"),
    ({"fixed": ("a", "b", "a")}, "--fixed a is given twice"),
    ({"fixed": ("a",), "ranges": (RangeSpec("a", 0, 1),)}, "a is both --fixed and given a --range"),
])
def test_bad_options_are_one_line_each(tmp_path, changes, message):
    with pytest.raises(InputError, match=message):
        _options(tmp_path, **changes).check()
    _options(tmp_path, dialect="cdec").check()
    assert _options(tmp_path, dialect="cdec").read_dialect == "joshua"


def test_the_configuration_compares_inputs_by_content(tmp_path):
    options = _options(tmp_path)
    recorded = options.configuration({"C": 0.01}, None)
    assert configuration_difference(recorded, options.configuration({"C": 0.01}, None)) is None
    (tmp_path / "moved.en").write_text("a b\n")
    moved = dataclasses.replace(options, refs=(str(tmp_path / "moved.en"),), jobs=4, max_iterations=3, quiet=True)
    assert configuration_difference(recorded, moved.configuration({"C": 0.01}, None)) is None
    (tmp_path / "moved.en").write_text("a c\n")
    assert configuration_difference(recorded, moved.configuration({"C": 0.01}, None)) == "--refs (the file's content)"
    other = dataclasses.replace(options, seed=3, decoder="dec2 {weights}", ranges=(RangeSpec("x", 0, 1),))
    assert configuration_difference(recorded, other.configuration({"C": 0.1}, None)) == (
        "--decoder (dec {weights} -> dec2 {weights}); --set ({'C': 0.01} -> {'C': 0.1}); --seed (0 -> 3); "
        "--range ([] -> [['x', 0, 1]])")
    assert configuration_difference(recorded, dataclasses.replace(options, method="pro").configuration({}, None)) == \
        "--method (mert -> pro)"


def test_fixed_and_range_names_are_weights_or_dense_features():
    names = ["LM0_0", "TranslationModel0_0", "TranslationModel0_1", "WordPenalty0_0", "WT_a~b"]
    box = resolve(names, ["WT_a~b"], [RangeSpec("TranslationModel0", -1, 1), RangeSpec("LM0_0", 0, 2)])
    assert box.fixed.tolist() == [False, False, False, False, True]
    assert box.lower.tolist() == [0, -1, -1, -np.inf, -np.inf] and box.upper.tolist() == [2, 1, 1, np.inf, np.inf]
    clipped, moved = clip(np.array([3.0, -2.0, 0.5, 9.0, 7.0]), box)
    assert clipped.tolist() == [2.0, -1.0, 0.5, 9.0, 7.0] and moved == [0, 1]
    with pytest.raises(InputError, match=r"--range LMO_0: no feature of the decoder's n-best lists has this name "
                                         r"\(did you mean 'LM0_0'\?\)"):
        resolve(names, [], [RangeSpec("LMO_0", 0, 1)])
    with pytest.raises(InputError, match="--fixed TranslationModel1"):
        resolve(names, ["TranslationModel1"], [])
