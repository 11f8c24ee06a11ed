"""Table 2 of Simianer, Riezler & Dyer (2012) and its per-epoch figure, from the runs of
``rules/simianer.smk`` (``smtlib sgd table``/``plot``).

``table`` writes Table 2's rows and the approximate-randomization p-values of each pair of runs of
the same feature group on the test set (:mod:`smtlib.bleu.randomization`): ``significant_vs`` lists the
algorithms (1-4) a row differs from at p < alpha (the paper's raised numbers), ``vs_best_group`` the
test against the best feature group of the same algorithm (the paper's dagger). :func:`load_rows` is the
one reader of the runs' files and test statistics, for the table and for the paper's findings
(:mod:`smtlib.report.simianer_findings`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re

import numpy as np

from smtlib.bleu.randomization import approximate_randomization
from smtlib.bleu.corpus import corpus_bleu_from_stats
from smtlib.bleu.references import read_references
from smtlib.bleu.replicas import Layout, selection_sd
from smtlib.bleu.stats import BleuSettings
from smtlib.errors import InputError
from smtlib.io import atomic_output, read_json, read_lines
from smtlib.report.figures import pyplot, save_figure
from smtlib.weights import read_weights
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


def group_runs(runs: list[tuple[str, str, str, str]]) -> dict[tuple[str, str, str], list[str]]:
    """(algorithm, data, group) -> its run directories, in the order given: a name given more than once
    has replicas (the same run on other shard splits); its first directory is the table's run."""
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for algorithm, data, group, directory in runs:
        grouped.setdefault((algorithm, data, group), []).append(directory)
    return grouped


def _output_file(directory: str, name: str) -> str:
    """``directory/name``, or its gzipped copy ``name.gz`` where only that exists (a published record
    directory, :mod:`smtlib.report.publish_simianer`)."""
    path = os.path.join(directory, name)
    return path + ".gz" if not os.path.exists(path) and os.path.exists(path + ".gz") else path


def _test_outputs(path: str, n_refs: int) -> list[str]:
    hyps = read_lines(path, what="test translations", allow_empty=True)
    if len(hyps) != n_refs:
        raise InputError(f"{len(hyps)} test translations for {n_refs} references", path)
    return hyps


def _sgd_run(directory: str) -> dict:
    """The chosen epoch of a run of ``rules/simianer.smk``, its devtest and test BLEU, its test output."""
    path = os.path.join(directory, "chosen.json")
    chosen = read_json(path, "chosen epoch")
    test = read_json(os.path.join(directory, "test.bleu.json"), "test BLEU")
    try:
        epoch = chosen["epochs"][chosen["chosen_epoch"] - 1]
        return {"n_features": epoch["nonzero_features"], "features_in_shards": epoch.get("features_in_shards"),
                "devtest_bleu": epoch["devtest_bleu"], "test_bleu": float(test["score"]),
                "chosen_epoch": chosen["chosen_epoch"], "test_bleu_file": os.path.join(directory, "test.bleu.json"),
                "directory": directory}
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise InputError(f"not a run of smtlib sgd choose and smtlib bleu (no {e})", path) from None


def _batch_run(directory: str, devtest: str, test: str) -> dict:
    """A tuning run of the tables' workflow (``results/tune/...``) in a row of Table 2: the weights it
    kept (its best dev iteration, shown as the chosen epoch), their devtest and test BLEU, test output."""
    summary = read_json(os.path.join(directory, "summary.json"), "run summary")
    tests = summary.get("tests", {})
    for name in (devtest, test):
        if name not in tests:
            raise InputError(f"the run has no test set {name!r} (it has {', '.join(tests) or 'none'})",
                             os.path.join(directory, "summary.json"))
    weights = read_weights(os.path.join(directory, "best.weights"))
    return {"n_features": sum(1 for value in weights.values() if value != 0), "features_in_shards": None,
            "devtest_bleu": float(tests[devtest]), "test_bleu": float(tests[test]),
            "chosen_epoch": int(summary["best_iteration"]),
            "test_bleu_file": os.path.join(directory, f"test.{test}.bleu.json"), "directory": directory,
            "test_out": _output_file(directory, f"test.{test}.1best")}


#: the replicas' statistics and score (:mod:`smtlib.bleu.replicas`)
LAYOUT = Layout.of(["bleu"])


@dataclasses.dataclass(frozen=True, eq=False)
class Row:
    """One row of Table 2: a run name and its directories (the first is the table's run, the others its
    replicas), with what the table and the findings read of them.

    ``runs``: each directory's numbers (:func:`_sgd_run`, :func:`_batch_run`); ``stats``: the table's
    run's sentence statistics on the test set (its :data:`LAYOUT` rows, BLEU's only, for the
    approximate randomization test); ``replica_rows``: every replica's statistics rows in
    :data:`LAYOUT` (R, N, W), None for a run without replicas; ``baseline``: a batch tuning run. Rows
    compare by identity.
    """

    algorithm: str
    data: str
    group: str
    runs: list[dict]
    stats: np.ndarray
    replica_rows: np.ndarray | None
    baseline: bool = False

    @property
    def first(self) -> dict:
        """The table's run (the first directory of the name)."""
        return self.runs[0]

    def replica_scores(self) -> np.ndarray | None:
        """Every replica's test BLEU from its output (the first is the table's run), None without replicas."""
        if self.replica_rows is None:
            return None
        return LAYOUT.score(self.replica_rows.sum(axis=1))[:, 0] * 100


def load_rows(runs: list[str], test_refs: str, *, settings: BleuSettings | None = None,
              baselines: list[str] = (), devtest: str = "test2016", test: str = "test2017") -> list[Row]:
    """Table 2's rows of the ``ALGORITHM:DATA:GROUP=DIR`` runs and the ``METHOD:dev:GROUP=DIR``
    ``baselines`` (after the runs), in the order given; the one reader of the runs' files.

    The test outputs are scored with ``settings`` (default: tokenize none), which must give the BLEU the
    table's run was scored with, so that the significance tests are about the BLEU the table shows.

    Raises
    ------
    InputError
        For a missing or malformed file, a test output whose line count is not the references', or a
        test output that does not score the BLEU its run records.
    """
    refs = read_references([test_refs])
    settings = settings or BleuSettings(tokenize="none")
    named = [(name, [_sgd_run(d) for d in dirs], False) for name, dirs in group_runs(parse_runs(runs)).items()]
    named += [(name, [_batch_run(d, devtest, test) for d in dirs], True)
              for name, dirs in group_runs(parse_runs(list(baselines))).items()]
    rows = []
    for (algorithm, data, group), replicas, baseline in named:
        first = replicas[0]
        outputs = [_test_outputs(r.get("test_out") or _output_file(r["directory"], "test.out"), len(refs[0]))
                   for r in replicas]
        all_rows = np.stack([LAYOUT.rows(hyps, refs, settings) for hyps in outputs])  # BLEU statistics only
        stats = all_rows[0]
        rescored = 100 * corpus_bleu_from_stats(stats.sum(axis=0))
        if abs(rescored - first["test_bleu"]) > 0.005:
            raise InputError(f"the test output scores {rescored:.2f} BLEU with these settings, the run says "
                             f"{first['test_bleu']:.2f}: give the BLEU settings the run was scored with",
                             first["test_bleu_file"])
        rows.append(Row(algorithm, data, group, replicas, stats, all_rows if len(replicas) > 1 else None, baseline))
    return rows


def write_table2(runs: list[str], test_refs: str, out: str, *, trials: int, seed: int, alpha: float,
                 settings: BleuSettings | None = None, boot_samples: int = 1000,
                 baselines: list[str] = (), devtest: str = "test2016", test: str = "test2017") -> int:
    """Write Table 2's rows of the ``ALGORITHM:DATA:GROUP=DIR`` runs to ``out``; returns the row count.

    The significance tests score the test outputs with ``settings`` (give the ones ``test.bleu.json``
    was scored with, so that the tests are about the BLEU the table shows). A run named more than once
    has replicas: its row is the first directory's; ``replicas``, ``test_mean``, ``test_s_sel`` and
    ``test_s_opt`` summarize all of them (:mod:`smtlib.bleu.replicas`, as ``smtlib compare``).

    ``baselines`` (``METHOD:dev:GROUP=DIR``) are batch tuning runs of the tables' workflow on the same
    system, the paper's MIRA row: their row shows the kept iteration as the chosen epoch and the
    ``devtest``/``test`` sets' BLEU from their ``summary.json``; repeated names are replicas (the
    tables' dev sub-samples). They enter the p-values of their feature group, not the raised
    algorithm numbers (those are the paper's Algorithms 1-4).
    """
    loaded = load_rows(runs, test_refs, settings=settings, baselines=baselines, devtest=devtest, test=test)
    stats = [r.stats for r in loaded]
    rows = []
    for r in loaded:
        row = {"algorithm": r.algorithm, "tuning_data": r.data, "features": r.group,
               **{key: r.first[key] for key in ("n_features", "devtest_bleu", "test_bleu", "chosen_epoch")},
               "replicas": len(r.runs), "test_mean": "-", "test_s_sel": "-", "test_s_opt": "-"}
        scores = r.replica_scores()
        if scores is not None:
            s_sel = selection_sd(r.replica_rows, LAYOUT.score, samples=boot_samples, seed=seed)[0] * 100
            row.update(test_mean=f"{scores.mean():.2f}", test_s_sel=f"{s_sel:.2f}",
                       test_s_opt=f"{scores.std(ddof=1):.2f}")
        rows.append(row)
    number = {a: str(i + 1) for i, a in enumerate(ALGORITHMS)}
    for i, row in enumerate(rows):
        differs = []  # Table 2's raised numbers: other algorithms of the same group differing at p < alpha
        p_values = {}
        for j, other in enumerate(rows):
            if j == i or other["features"] != row["features"]:
                continue
            _, p = approximate_randomization(stats[i], stats[j], trials=trials, seed=seed)
            p_values[f"{other['algorithm']}-{other['tuning_data']}"] = round(p, 4)
            if p < alpha and other["algorithm"] in number:
                differs.append(number[other["algorithm"]])
        row["significant_vs"] = ",".join(sorted(set(differs))) or "-"
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
               "chosen_epoch", "significant_vs", "vs_best_group", "p_values",
               "replicas", "test_mean", "test_s_sel", "test_s_opt"]
    with atomic_output(out) as fh:
        fh.write("\t".join(columns) + "\n")
        for row in rows:
            values = [f"{row[c]:.2f}" if c.endswith("_bleu") else str(row[c]) for c in columns]
            fh.write("\t".join(values) + "\n")
    return len(rows)


#: the feature groups of ``config.yaml``'s ``simianer.groups``, in the order their colours are given
GROUP_ORDER = ("default", "id", "ng", "shape", "id-ng-shape")
#: (line style, marker) per algorithm, in the order of :data:`ALGORITHMS`
_METHOD_STYLES = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1, 1, 1)), "v"), ((0, (1, 1)), "P"))


def _canonical(order: tuple[str, ...], present: set[str]) -> list[str]:
    """``order``'s names, then the others of ``present`` by name: the slots of colours and line styles."""
    return [*order, *sorted(present - set(order))]


def _legend_order(keys: list[tuple[str, str, str]]) -> tuple[list[str], list[tuple[str, str]]]:
    """The feature groups and the (algorithm, tuning data) pairs of ``keys``, as the configuration names
    them (:data:`GROUP_ORDER`, :data:`ALGORITHMS`), any others after them by name."""
    groups = _canonical(GROUP_ORDER, {g for _, _, g in keys})
    algorithms = _canonical(ALGORITHMS, {a for a, _, _ in keys})
    present = {(a, d) for a, d, _ in keys}
    return ([g for g in groups if any(g == k[2] for k in keys)],
            sorted(present, key=lambda m: (algorithms.index(m[0]), m[1])))


def epoch_styles(keys: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], tuple[object, ...]]:
    """(algorithm, data, group) -> (colour, line style, marker, marker face) of its curves in
    :func:`plot_epochs`.

    One colour per feature group and one line style and marker per algorithm, the marker hollow for
    tuning on dev and filled for the training set, so that the 18 rows of the full table stay apart
    (the default colour cycle has 10 colours) and a reader finds a group or an algorithm across the
    rows at a glance. Each group and algorithm has a fixed slot (:data:`GROUP_ORDER`,
    :data:`ALGORITHMS`, any other after them by name), so that a colour or a line means the same in the
    quick run as in the full one."""
    from matplotlib import colormaps

    groups = _canonical(GROUP_ORDER, {g for _, _, g in keys})
    algorithms = _canonical(ALGORITHMS, {a for a, _, _ in keys})
    palette = colormaps["tab10"].colors
    styles = {}
    for a, d, g in keys:
        colour = palette[groups.index(g) % len(palette)]
        line, marker = _METHOD_STYLES[algorithms.index(a) % len(_METHOD_STYLES)]
        styles[a, d, g] = (colour, line, marker, "white" if d == "dev" else colour)
    return styles


def plot_epochs(runs: list[str], out: str) -> None:
    """Active features and devtest BLEU per epoch of the ``ALGORITHM:DATA:GROUP=DIR`` runs, the chosen
    epoch of each run circled (the paper's "@"). The legends, below the panels, give the colour of each
    feature group and the line of each algorithm (:func:`epoch_styles`)."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    plt = pyplot()
    runs = [(a, d, g, dirs[0]) for (a, d, g), dirs in group_runs(parse_runs(runs)).items()]
    styles = epoch_styles([(a, d, g) for a, d, g, _ in runs])
    fig, (ax_f, ax_b) = plt.subplots(1, 2, figsize=(11, 5))
    for algorithm, data, group, directory in runs:
        chosen = read_json(os.path.join(directory, "chosen.json"), "chosen epoch")
        epochs = [e["epoch"] for e in chosen["epochs"]]
        colour, line, marker, face = styles[algorithm, data, group]
        style = dict(color=colour, linestyle=line, marker=marker, markerfacecolor=face, markersize=4, linewidth=1.2)
        ax_f.plot(epochs, [e["nonzero_features"] for e in chosen["epochs"]], **style)
        ax_b.plot(epochs, [e["devtest_bleu"] for e in chosen["epochs"]], **style)
        best = next((e for e in chosen["epochs"] if e["epoch"] == chosen["chosen_epoch"]), None)
        if best is None:
            raise InputError(f"{directory}/chosen.json: the chosen epoch {chosen['chosen_epoch']} is not one of its "
                             f"epochs {epochs}")
        ax_b.plot([best["epoch"]], [best["devtest_bleu"]], linestyle="none", marker="o", markersize=10,
                  markerfacecolor="none", markeredgecolor=colour, markeredgewidth=1.2)
    for ax in (ax_f, ax_b):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("epoch")
    ax_f.set_yscale("log")
    ax_f.set_ylabel("active (non-zero) features")
    ax_b.set_ylabel("devtest BLEU")
    groups, methods = _legend_order(list(styles))
    colour_of = {g: style[0] for (_, _, g), style in styles.items()}
    line_of = {(a, d): (line, marker, "white" if d == "dev" else "black")
               for (a, d, _), (_, line, marker, _) in styles.items()}
    group_handles = [Line2D([], [], color=colour_of[g], linewidth=3) for g in groups]
    method_handles = [Line2D([], [], color="black", linestyle=line, marker=marker, markerfacecolor=face, markersize=4)
                      for line, marker, face in (line_of[m] for m in methods)]
    method_handles.append(Line2D([], [], linestyle="none", marker="o", markersize=10, markerfacecolor="none",
                                 markeredgecolor="black"))
    # two rows below the panels: the groups' colours, then the algorithms' lines and the chosen epoch
    fig.legend(group_handles, [f"features: {g}" for g in groups], loc="lower center", bbox_to_anchor=(0.5, 0.055),
               ncol=len(groups), fontsize=8, frameon=False)
    fig.legend(method_handles, [f"{a} ({d})" for a, d in methods] + ["epoch chosen on devtest"],
               loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=len(method_handles), fontsize=8, frameon=False)
    fig.suptitle("Simianer et al. (2012) on Multi30k de-en: active features and devtest BLEU per epoch")
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    save_figure(fig, out, tight=False)
