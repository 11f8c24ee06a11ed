"""``smtlib sgd plot`` (smtlib.report.simianer.plot_epochs): every row of Table 2 drawn apart."""

from __future__ import annotations

import json

import pytest

from smtlib.errors import InputError
from smtlib.report.simianer import GROUP_ORDER, epoch_styles, plot_epochs
from smtlib.tuners.sgd_mixing import ALGORITHMS

#: the full configuration's 18 rows (config.yaml, simianer.groups)
ROWS = ([("sgd", "dev", g) for g in GROUP_ORDER] + [("mixsgd", "train", g) for g in GROUP_ORDER]
        + [("itermixsgd", "train", g) for g in GROUP_ORDER]
        + [("iterselsgd", "train", g) for g in ("id", "ng", "id-ng-shape")])


def test_the_eighteen_rows_have_eighteen_styles_a_colour_per_group_and_a_line_per_algorithm():
    styles = epoch_styles(ROWS)
    assert len(set(styles.values())) == 18
    for group in GROUP_ORDER:  # one colour per group, five colours in all
        assert len({styles[r][0] for r in ROWS if r[2] == group}) == 1
    assert len({styles[r][0] for r in ROWS}) == 5
    for algorithm in ALGORITHMS:  # one line and marker per algorithm, four in all
        assert len({styles[r][1:3] for r in ROWS if r[0] == algorithm}) == 1
    assert len({styles[r][1:3] for r in ROWS}) == 4
    assert all((styles[r][3] == "white") == (r[1] == "dev") for r in ROWS)  # hollow markers: tuned on dev


def test_a_colour_means_the_same_group_whatever_rows_are_drawn():
    full = epoch_styles(ROWS)
    quick = epoch_styles([("itermixsgd", "train", "shape"), ("sgd", "dev", "default"), ("sgd", "dev", "shape")])
    assert quick["sgd", "dev", "default"] == full["sgd", "dev", "default"]
    assert quick["itermixsgd", "train", "shape"] == full["itermixsgd", "train", "shape"]
    other = epoch_styles([("sgd", "dev", "zz"), ("sgd", "dev", "default")])  # an unknown group goes last
    assert other["sgd", "dev", "default"][0] == full["sgd", "dev", "default"][0]
    assert other["sgd", "dev", "zz"][0] != other["sgd", "dev", "default"][0]


def test_the_plot_is_written(tmp_path):
    items = []
    for k, (algorithm, data, group) in enumerate(ROWS[:6]):
        run = tmp_path / f"run{k}"
        run.mkdir()
        epochs = [{"epoch": e, "devtest_bleu": 30 + e + k / 10, "nonzero_features": 10 * (k + 1)} for e in (1, 2, 3)]
        (run / "chosen.json").write_text(json.dumps({"chosen_epoch": 2, "epochs": epochs}))
        items.append(f"{algorithm}:{data}:{group}={run}")
    out = tmp_path / "epochs.png"
    plot_epochs(items, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_chosen_epoch_that_is_not_among_the_epochs_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    epochs = [{"epoch": e, "devtest_bleu": 30.0, "nonzero_features": 10} for e in (1, 2)]
    (run / "chosen.json").write_text(json.dumps({"chosen_epoch": 3, "epochs": epochs}))
    with pytest.raises(InputError, match="chosen epoch 3 is not one of its epochs"):
        plot_epochs([f"sgd:dev:default={run}"], str(tmp_path / "epochs.png"))
    assert not (tmp_path / "epochs.png").exists()
