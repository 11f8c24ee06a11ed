"""A model directory's own weights are ``default.weights``; a directory written before the rename keeps
``weights.init``, which the library still finds (smtlib.system.modeldir.default_weights_file)."""

from smtlib.system.modeldir import DEFAULT_WEIGHTS, OLD_DEFAULT_WEIGHTS, default_weights_file


def test_the_new_name_is_found_and_preferred(tmp_path):
    assert default_weights_file(tmp_path) == tmp_path / DEFAULT_WEIGHTS  # the name to write
    (tmp_path / OLD_DEFAULT_WEIGHTS).write_text("LM0_0 0.5\n", encoding="utf-8")
    assert default_weights_file(tmp_path) == tmp_path / OLD_DEFAULT_WEIGHTS
    (tmp_path / DEFAULT_WEIGHTS).write_text("LM0_0 0.5\n", encoding="utf-8")
    assert default_weights_file(tmp_path) == tmp_path / DEFAULT_WEIGHTS

