"""`smtlib report pro-mert` / :mod:`smtlib.report.pro_mert`: Hopkins & May (2011) §4.2, Figure 3."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.cli import main
from smtlib.errors import InputError
from smtlib.report.pro_mert import CANDIDATES, SENTENCES, cosine, make_pool, pro_clean_cosine, run_experiment


def test_the_pool_scores_candidates_by_the_gold_weights_and_noise_only_touches_what_tuners_see():
    pool, gains, gold = make_pool(3, noisy=False, rep=0)
    assert pool.dense.shape == (SENTENCES * CANDIDATES, 3)
    assert pool.dense.min() >= 0.0 and pool.dense.max() <= 500.0  # H&M: features uniform on [0, 500]
    np.testing.assert_allclose(gains, pool.dense @ gold)  # g = w*.x, decomposable
    noisy, noisy_gains, noisy_gold = make_pool(3, noisy=True, rep=0)
    np.testing.assert_array_equal(noisy_gold, gold)
    np.testing.assert_array_equal(noisy_gains, gains)  # the gold score uses the clean features
    assert np.abs(noisy.dense - pool.dense).std() > 100.0  # N(0, 500^2) added to what the tuners see


def test_cosine():
    assert cosine(np.array([1.0, 0.0]), np.array([0.0, 2.0])) == 0.0
    assert cosine(np.array([1.0, 1.0]), np.array([3.0, 3.0])) == pytest.approx(1.0)
    assert cosine(np.zeros(2), np.ones(2)) == 0.0


def test_pro_and_kbmira_learn_back_a_low_dimensional_gold_model():
    trials = run_experiment([4], 1, ["pro", "kbmira"])
    assert [(t.method, t.features) for t in trials] == [("pro", "clean"), ("kbmira", "clean"),
                                                         ("pro", "noisy"), ("kbmira", "noisy")]
    for t in trials:  # H&M Figure 3: at low dimension both recover w* (noise costs a little)
        assert t.cosine > (0.99 if t.features == "clean" else 0.9), t
    assert pro_clean_cosine(trials) == trials[0].cosine
    # seeded by (dimension, repetition): a trial does not depend on the other methods run
    alone = run_experiment([4], 1, ["kbmira"])
    assert [t.cosine for t in alone] == [trials[1].cosine, trials[3].cosine]


def test_unknown_methods_and_empty_settings_are_input_errors():
    with pytest.raises(InputError, match="choose from pro, kbmira, mert"):
        run_experiment([4], 1, ["svm"])
    with pytest.raises(InputError):
        run_experiment([4], 0, ["pro"])


def test_the_cli_writes_the_table_and_the_figure(tmp_path, capsys):
    # in-process (smtlib.cli.main): a child process would pay the tuners' imports and compilation again
    status = main(["report", "pro-mert", "--dims", "3", "--reps", "1", "--methods", "kbmira",
                   "--out", str(tmp_path / "p.tsv"), "--figure", str(tmp_path / "p.png")])
    stderr = capsys.readouterr().err
    assert status == 0, stderr
    rows = [line.split("\t") for line in (tmp_path / "p.tsv").read_text().splitlines()]
    assert rows[0] == ["method", "dim", "features", "rep", "cosine", "cpu_seconds", "mert_restarts"]
    assert [row[:4] for row in rows[1:]] == [["kbmira", "3", "clean", "0"], ["kbmira", "3", "noisy", "0"]]
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    assert "kbmira  dim=    3 clean rep=0" in stderr
    status = main(["report", "pro-mert", "--dims", "3", "--methods", "svm", "--out", str(tmp_path / "q.tsv"),
                   "--figure", str(tmp_path / "q.png")])
    assert status == 2 and "choose from" in capsys.readouterr().err and not (tmp_path / "q.tsv").exists()


def test_the_figure_has_a_log_axis_with_the_dimensions_and_says_when_there_is_only_one():
    """Issue 28, item 13: the quick config's single dimension drew three dots on a 9.6-10.4 axis."""
    from smtlib.report.figures import pyplot
    from smtlib.report.pro_mert import Trial, plot_trials

    def trials(dims):
        return [Trial(m, d, f, 0, 0.5, 0.1, "") for m in ("pro", "kbmira") for d in dims for f in ("clean", "noisy")]

    fig = plot_trials(trials([10, 100, 1000]))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and [t.get_text() for t in ax.get_xticklabels()] == ["10", "100", "1000"]
    pyplot().close(fig)
    fig = plot_trials(trials([10]))
    ax = fig.axes[0]
    assert ax.get_xlim() == pytest.approx((5, 20)) and "one dimensionality only" in ax.get_title()
    pyplot().close(fig)
