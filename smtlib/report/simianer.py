"""Table 2 of Simianer, Riezler & Dyer (2012) and its per-epoch figure, from the runs of
``rules/simianer.smk`` (``smtlib sgd table``/``plot``).

``table`` writes Table 2's rows and the approximate-randomization p-values of each pair of runs of
the same feature group on the test set (:mod:`smtlib.bleu.randomization`): ``significant_vs`` lists the
algorithms (1-4) a row differs from at p < alpha (the paper's raised numbers), ``vs_best_group`` the
test against the best feature group of the same algorithm (the paper's dagger).
"""

from __future__ import annotations

import json
import os
import re

import numpy as np

from smtlib.bleu.randomization import approximate_randomization
from smtlib.bleu.references import read_references
from smtlib.bleu.stats import BleuSettings, compute_stats
from smtlib.errors import InputError
from smtlib.io import atomic_output, read_json, read_lines
from smtlib.report.figures import pyplot, save_figure
from smtlib.tuners.sgd_mixing import ALGORITHMS


def parse_runs(items: list[str]) -> list[tuple[str, str, str, str]]:
    """``ALGORITHM:DATA:GROUP=DIR`` -> (algorithm, data, group, dir)."""
    runs = []
    for item in items:
        match = re.fullmatch(r"([a-z]+):([a-z]+):([A-Za-z0-9_.-]+)=(.+)", item)
        if not match:
            raise InputError(f"--run {item!r} is not ALGORITHM:DATA:GROUP=DIR")
        runs.append(match.groups())
    return runs


def write_table2(runs: list[str], test_refs: str, out: str, *, trials: int, seed: int, alpha: float) -> int:
    """Write Table 2's rows of the ``ALGORITHM:DATA:GROUP=DIR`` runs to ``out``; returns the row count."""
    refs = read_references([test_refs])
    settings = BleuSettings(tokenize="none")
    runs = parse_runs(runs)
    rows, stats = [], []
    for algorithm, data, group, directory in runs:
        chosen = read_json(os.path.join(directory, "chosen.json"), "chosen epoch")
        test = read_json(os.path.join(directory, "test.bleu.json"), "test BLEU")
        hyps = read_lines(os.path.join(directory, "test.out"), what="test translations", allow_empty=True)
        if len(hyps) != len(refs[0]):
            raise InputError(f"{len(hyps)} test translations for {len(refs[0])} references",
                             os.path.join(directory, "test.out"))
        stats.append(compute_stats(hyps, np.arange(len(hyps)), refs, settings))
        epoch = chosen["epochs"][chosen["chosen_epoch"] - 1]
        rows.append({"algorithm": algorithm, "tuning_data": data, "features": group,
                     "n_features": epoch["nonzero_features"], "devtest_bleu": epoch["devtest_bleu"],
                     "test_bleu": float(test["score"]), "chosen_epoch": chosen["chosen_epoch"]})
    number = {a: str(i + 1) for i, a in enumerate(ALGORITHMS)}
    for i, row in enumerate(rows):
        beaten = []  # Table 2's raised numbers: other algorithms of the same group, p < alpha
        p_values = {}
        for j, other in enumerate(rows):
            if j == i or other["features"] != row["features"]:
                continue
            _, p = approximate_randomization(stats[i], stats[j], trials=trials, seed=seed)
            p_values[f"{other['algorithm']}-{other['tuning_data']}"] = round(p, 4)
            if p < alpha:
                beaten.append(number[other["algorithm"]])
        row["significant_vs"] = ",".join(sorted(set(beaten))) or "-"
        row["p_values"] = json.dumps(p_values, sort_keys=True)
    for i, row in enumerate(rows):
        # Table 2's dagger: significantly different from the best feature group of the same algorithm
        same = [j for j, other in enumerate(rows)
                if (other["algorithm"], other["tuning_data"]) == (row["algorithm"], row["tuning_data"])]
        best = max(same, key=lambda j: (rows[j]["test_bleu"], -j))
        if best == i:
            row["vs_best_group"] = "best"
        else:
            _, p = approximate_randomization(stats[i], stats[best], trials=trials, seed=seed)
            row["vs_best_group"] = ("dagger " if p < alpha else "") + f"p={p:.4f}"
    columns = ["algorithm", "tuning_data", "features", "n_features", "devtest_bleu", "test_bleu",
               "chosen_epoch", "significant_vs", "vs_best_group", "p_values"]
    with atomic_output(out) as fh:
        fh.write("\t".join(columns) + "\n")
        for row in rows:
            values = [f"{row[c]:.2f}" if c.endswith("_bleu") else str(row[c]) for c in columns]
            fh.write("\t".join(values) + "\n")
    return len(rows)


def plot_epochs(runs: list[str], out: str) -> None:
    """Active features and devtest BLEU per epoch of the ``ALGORITHM:DATA:GROUP=DIR`` runs."""
    from matplotlib.ticker import MaxNLocator

    plt = pyplot()
    runs = parse_runs(runs)
    fig, (ax_f, ax_b) = plt.subplots(1, 2, figsize=(11, 4))
    for algorithm, data, group, directory in runs:
        chosen = read_json(os.path.join(directory, "chosen.json"), "chosen epoch")
        epochs = [e["epoch"] for e in chosen["epochs"]]
        label = f"{algorithm} ({data}, {group})"
        ax_f.plot(epochs, [e["nonzero_features"] for e in chosen["epochs"]], marker="o", label=label)
        ax_b.plot(epochs, [e["devtest_bleu"] for e in chosen["epochs"]], marker="o", label=label)
    for ax in (ax_f, ax_b):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_f.set_yscale("log")
    ax_f.set_xlabel("epoch")
    ax_f.set_ylabel("active (non-zero) features")
    ax_b.set_xlabel("epoch")
    ax_b.set_ylabel("devtest BLEU")
    ax_b.legend(fontsize=7)
    fig.suptitle("Simianer et al. (2012) on Multi30k de-en: active features and devtest BLEU per epoch")
    fig.tight_layout()
    save_figure(fig, out, tight=False)
