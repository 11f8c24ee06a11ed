"""Distributed pairwise-ranking SGD on the training set (Simianer, Riezler & Dyer 2012), step by step,
for a workflow that runs each shard of each epoch as its own job (``rules/simianer.smk``).

  smtlib sgd shards --work WORK --shards Z --seed S --out-dir DIR      # DIR/shard{z}.src/.ref/.ids
  smtlib sgd fold --work WORK --held-out DIR/shard0.ids [...] --alignments grow-diag-final-and union --out FOLD
  smtlib sgd templates --model MEDIUM --groups id ng shape --out DIR   # + rule templates (§3)
  smtlib sgd zero --model MODEL --out ep0.weights                      # the zero start (§5.2)
  smtlib sgd mix --algorithm itermixsgd --shard-weights ep3/shard*.weights [--state ep2/mix.json] \\
      --out ep3/weights --next ep3/next.weights --state-out ep3/mix.json [--k K | --k-fraction F]
  smtlib sgd choose --epochs ep1 ep2 ... --out chosen.weights --info chosen.json
  smtlib sgd table --run NAME=DIR ... --test-refs REF --out table.tsv [--trials N --seed S]
  smtlib sgd plot --run NAME=DIR ... --out epochs.png

One epoch of one shard is ``smtlib decode`` of the shard (100-best, distinct) with the weights the
epoch starts from, then ``smtlib tune sgd --set epochs=1 --set start=init --set select=last`` on
that k-best list: one pass of Algorithm 1 over the shard (:mod:`smtlib.tuners.sgd`; features the
shard never fires keep their value). ``mix`` is the step between epochs:

``sgd`` (Algorithm 1, one shard) and ``mixsgd`` (Algorithm 2)
    every shard continues from its own weights (``--next`` is not used); the returned vector after
    epoch t is (1/Z) Σ_z (1/t) Σ_{t'≤t} w_{z,t'} (Algorithm 1's average over epochs, mixed over shards).
``itermixsgd`` (Algorithm 3)
    v = (1/Z) Σ_z w_z, the start of every shard in the next epoch and the returned vector.
``iterselsgd`` (Algorithm 4)
    the K feature columns of W = [w_1 ... w_Z] with the largest ℓ2 norm are kept and averaged, the
    others set to 0 (ℓ1/ℓ2 joint selection). K: ``--k``, else ceil(``--k-fraction`` × D) (D: features
    with a non-zero weight in some shard; default 100,000 / 4.7M, the paper's share, Table 2), never
    fewer than the dense features (as :class:`smtlib.tuners.sgd.IterSelSGD`).

Deviation from the paper's per-sentence loop (Algorithms 1-4 decode sentence i with w_{t,i,0}, the
weights after the updates of sentences 0..i-1): a shard job decodes all its sentences with the
weights the epoch starts from, and the SGD pass then re-scores each sentence's k-best list with the
current in-shard weights before its update (as :mod:`smtlib.tuners.sgd` does). Decoding sentence by
sentence would need the decoder inside the update loop; with ~1,000 sentences per shard and
η = 1e-4, the weights move little within one shard pass.

``choose`` picks the epoch with the best devtest BLEU (Table 2's "@" column; ties: the earlier epoch).
``table`` writes Table 2's rows and the approximate-randomization p-values of each pair of runs of
the same feature group on the test set (:mod:`smtlib.bleu.randomization`): ``significant_vs`` lists the
algorithms (1-4) a row differs from at p < alpha (the paper's raised numbers), ``vs_best_group`` the
test against the best feature group of the same algorithm (the paper's dagger).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys

import numpy as np

from smtlib.errors import InputError
from smtlib.io import atomic_output
from smtlib.weights import _DENSE_VALUE, DENSE_FAMILY, read_weights, write_weights

ALGORITHMS = ("sgd", "mixsgd", "itermixsgd", "iterselsgd")
#: Simianer et al. (2012), Table 2: Algorithm 4 keeps K = 100,000 of the 4.7M features of Algorithm 3
PAPER_K_FRACTION = 100_000 / 4_700_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = sub.add_parser("shards", help="split the prepared training corpus into random shards")
    p.add_argument("--work", required=True, help="smtlib train work directory (corpus.src, corpus.tgt)")
    p.add_argument("--shards", type=int, required=True, help="number of shards Z")
    p.add_argument("--seed", type=int, default=1, help="random seed of the split (default 1)")
    p.add_argument("--out-dir", required=True)

    p = sub.add_parser("fold", help="a work directory without the held-out sentences (jackknifing)")
    p.add_argument("--work", required=True, help="the full corpus's smtlib train work directory")
    p.add_argument("--held-out", nargs="+", required=True, help="sentence-id files (shard*.ids) left out")
    p.add_argument("--alignments", nargs="+", required=True, help="symmetrizations to carry over (aligned.NAME)")
    p.add_argument("--out", required=True, help="the fold's work directory")

    p = sub.add_parser("templates", help="a medium model + the rule templates of Simianer et al. (2012), §3")
    p.add_argument("--model", required=True, help="medium model directory")
    p.add_argument("--groups", nargs="+", required=True, choices=("id", "ng", "shape"))
    p.add_argument("--out", required=True, help="output model directory")

    p = sub.add_parser("zero", help="the zero weight vector of a model (the paper's start, §5.2)")
    p.add_argument("--model", required=True)
    p.add_argument("--out", required=True)

    p = sub.add_parser("mix", help="mix (and select) the shards' weights after an epoch")
    p.add_argument("--algorithm", required=True, choices=ALGORITHMS)
    p.add_argument("--shard-weights", nargs="+", required=True, help="each shard's weights after the epoch")
    p.add_argument("--state", help="the previous epoch's mix.json (none after epoch 1)")
    p.add_argument("--out", required=True, help="the vector the algorithm returns after this epoch")
    p.add_argument("--next", required=True, help="the vector the next epoch's shards start from")
    p.add_argument("--state-out", required=True, help="this epoch's mix.json")
    p.add_argument("--k", type=int, default=0, help="iterselsgd: features kept (0: from --k-fraction)")
    p.add_argument("--k-fraction", type=float, default=PAPER_K_FRACTION,
                   help=f"iterselsgd: share of the features kept when --k is 0 (default {PAPER_K_FRACTION:.5f})")

    p = sub.add_parser("choose", help="the epoch with the best devtest BLEU")
    p.add_argument("--epochs", nargs="+", required=True,
                   help="epoch directories in order (each with weights, mix.json, devtest.bleu.json)")
    p.add_argument("--out", required=True, help="the chosen epoch's weights")
    p.add_argument("--info", required=True, help="JSON: chosen epoch, devtest BLEU per epoch, #features")

    p = sub.add_parser("table", help="Table 2 of Simianer et al. (2012) with significance")
    p.add_argument("--run", nargs="+", required=True, metavar="ALGORITHM:DATA:GROUP=DIR",
                   help="run directories (chosen.json, test.bleu.json, test.out)")
    p.add_argument("--test-refs", required=True, help="test references (for the significance test)")
    p.add_argument("--trials", type=int, default=10_000, help="approximate randomization shuffles (default 10000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--out", required=True)

    p = sub.add_parser("plot", help="active features and devtest BLEU per epoch")
    p.add_argument("--run", nargs="+", required=True, metavar="ALGORITHM:DATA:GROUP=DIR")
    p.add_argument("--out", required=True)


# -- helpers ---------------------------------------------------------------------------------------
def is_dense_name(name: str) -> bool:
    """A dense value name (``LM0_0``, ``TranslationModel1_3``), as opposed to a sparse feature."""
    match = _DENSE_VALUE.match(name)
    return bool(match) and DENSE_FAMILY.fullmatch(match.group("group")) is not None


def _stack(weights: list[dict[str, float]]) -> tuple[list[str], np.ndarray]:
    """Feature names (dense first in file order, then sparse sorted) and the Z x D matrix W."""
    dense: dict[str, None] = {}
    sparse: set[str] = set()
    for w in weights:
        for name in w:
            if is_dense_name(name):
                dense.setdefault(name)
            else:
                sparse.add(name)
    names = list(dense) + sorted(sparse)
    index = {n: i for i, n in enumerate(names)}
    matrix = np.zeros((len(weights), len(names)))
    for z, w in enumerate(weights):
        for name, value in w.items():
            matrix[z, index[name]] = value
    return names, matrix


def select_columns(matrix: np.ndarray, k: int) -> np.ndarray:
    """Indices of the K columns of W with the largest ℓ2 norm (ties: the lower index), sorted."""
    norms = np.sqrt(np.einsum("zd,zd->d", matrix, matrix))
    if k >= matrix.shape[1]:
        return np.arange(matrix.shape[1])
    return np.sort(np.lexsort((np.arange(matrix.shape[1]), -norms))[:k])


def mix_epoch(
    algorithm: str,
    shard_weights: list[dict[str, float]],
    state: dict | None,
    *,
    k: int = 0,
    k_fraction: float = PAPER_K_FRACTION,
) -> tuple[dict[str, float], dict[str, float], dict]:
    """One mixing step (see the module docstring): (returned vector, next start, new state)."""
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r} (known: {', '.join(ALGORITHMS)})")
    if algorithm == "sgd" and len(shard_weights) != 1:
        raise InputError(f"sgd (Algorithm 1) has one shard, got {len(shard_weights)} shard weights")
    names, matrix = _stack(shard_weights)
    n_dense = sum(1 for n in names if is_dense_name(n))
    epoch = 1 if state is None else int(state["epoch"]) + 1
    info: dict = {"algorithm": algorithm, "epoch": epoch, "shards": len(shard_weights),
                  "features_in_shards": int(np.count_nonzero(np.any(matrix != 0, axis=0)))}
    if algorithm in ("sgd", "mixsgd"):
        mean = matrix.sum(axis=0) / len(shard_weights)
        total = dict(state["sum"]) if state else {}
        for name, value in zip(names, mean.tolist()):
            total[name] = total.get(name, 0.0) + value
        out = {name: value / epoch for name, value in total.items()}
        nxt: dict[str, float] = {}  # every shard goes on from its own weights
        info["sum"] = total
    elif algorithm == "itermixsgd":
        mean = matrix.sum(axis=0) / len(shard_weights)
        out = dict(zip(names, mean.tolist()))
        nxt = out
    else:
        if not (k >= 0 and 0.0 < k_fraction <= 1.0):
            raise InputError("iterselsgd: --k must be >= 0 and --k-fraction in (0, 1]")
        d = info["features_in_shards"]
        kept = k if k > 0 else max(n_dense, math.ceil(k_fraction * d), 1)
        columns = select_columns(matrix, kept)
        mean = np.zeros(len(names))
        mean[columns] = matrix[:, columns].sum(axis=0) / len(shard_weights)
        out = {names[c]: float(mean[c]) for c in columns.tolist()}
        for name in names[:n_dense]:
            out.setdefault(name, 0.0)
        nxt = out
        info["k"] = int(kept)
    info["nonzero_features"] = sum(1 for v in out.values() if v != 0.0)
    out = {n: v for n, v in out.items() if v != 0.0 or is_dense_name(n)}
    nxt = {n: v for n, v in nxt.items() if v != 0.0 or is_dense_name(n)}
    return out, nxt, info


def _write_json(path: str, data) -> None:
    with atomic_output(path) as fh:
        json.dump(data, fh, indent=1)


def _read_json(path: str, what: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise InputError(f"missing {what}", path) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON ({exc.msg})", path, exc.lineno) from None


def _parse_runs(items: list[str]) -> list[tuple[str, str, str, str]]:
    """``ALGORITHM:DATA:GROUP=DIR`` -> (algorithm, data, group, dir)."""
    runs = []
    for item in items:
        match = re.fullmatch(r"([a-z]+):([a-z]+):([A-Za-z0-9_.-]+)=(.+)", item)
        if not match:
            raise InputError(f"--run {item!r} is not ALGORITHM:DATA:GROUP=DIR")
        runs.append(match.groups())
    return runs


def choose_epoch(bleus: list[float]) -> int:
    """1-based epoch of the best devtest BLEU; ties go to the earlier epoch."""
    if not bleus:
        raise InputError("no epoch to choose from")
    return int(np.argmax(np.asarray(bleus))) + 1


# -- actions ---------------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> int:
    if args.action == "shards":
        from smtlib.system.jackknife import write_shards

        sizes = write_shards(args.work, args.out_dir, args.shards, args.seed)
        print(json.dumps({"shards": len(sizes), "sizes": sizes}))
    elif args.action == "fold":
        from smtlib.system.jackknife import read_ids, write_fold_work

        held = np.unique(np.concatenate([read_ids(p) for p in args.held_out]))
        print(json.dumps(write_fold_work(args.work, held, args.out, tuple(args.alignments))))
    elif args.action == "templates":
        from smtlib.system.sparse import rule_template_model

        print(json.dumps(rule_template_model(args.model, args.out, tuple(args.groups))))
    elif args.action == "zero":
        from smtlib.system.modeldir import read_model_spec

        spec = read_model_spec(args.model)
        write_weights(args.out, {n: 0.0 for n in spec.dense_weight_names()},
                      header="the zero vector (Simianer et al. 2012, §5.2: started at zero weight vector)")
    elif args.action == "mix":
        state = _read_json(args.state, "mix state") if args.state else None
        weights = [dict(read_weights(p)) for p in args.shard_weights]
        out, nxt, info = mix_epoch(args.algorithm, weights, state, k=args.k, k_fraction=args.k_fraction)
        write_weights(args.out, out, header=f"{args.algorithm} epoch {info['epoch']}: returned vector")
        write_weights(args.next, nxt, header=f"{args.algorithm} epoch {info['epoch']}: next epoch's start")
        _write_json(args.state_out, info)
        print(json.dumps({k: v for k, v in info.items() if k != "sum"}))
    elif args.action == "choose":
        epochs = []
        for directory in args.epochs:
            bleu = _read_json(os.path.join(directory, "devtest.bleu.json"), "devtest BLEU")["score"]
            mix = _read_json(os.path.join(directory, "mix.json"), "mix state")
            epochs.append({"epoch": int(mix["epoch"]), "devtest_bleu": float(bleu),
                           "nonzero_features": int(mix["nonzero_features"]),
                           "features_in_shards": int(mix["features_in_shards"])})
        best = choose_epoch([e["devtest_bleu"] for e in epochs])
        chosen = os.path.join(args.epochs[best - 1], "weights")
        write_weights(args.out, dict(read_weights(chosen)), header=f"epoch {best}, the best devtest BLEU")
        _write_json(args.info, {"chosen_epoch": best, "epochs": epochs, "weights": chosen})
        print(json.dumps({"chosen_epoch": best}))
    elif args.action == "table":
        _table(args)
    elif args.action == "plot":
        _plot(args)
    return 0


def _table(args: argparse.Namespace) -> None:
    from smtlib.bleu.randomization import approximate_randomization
    from smtlib.bleu.references import read_references
    from smtlib.bleu.stats import BleuSettings, compute_stats
    from smtlib.io import read_lines

    refs = read_references([args.test_refs])
    settings = BleuSettings(tokenize="none")
    runs = _parse_runs(args.run)
    rows, stats = [], []
    for algorithm, data, group, directory in runs:
        chosen = _read_json(os.path.join(directory, "chosen.json"), "chosen epoch")
        test = _read_json(os.path.join(directory, "test.bleu.json"), "test BLEU")
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
            _, p = approximate_randomization(stats[i], stats[j], trials=args.trials, seed=args.seed)
            p_values[f"{other['algorithm']}-{other['tuning_data']}"] = round(p, 4)
            if p < args.alpha:
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
            _, p = approximate_randomization(stats[i], stats[best], trials=args.trials, seed=args.seed)
            row["vs_best_group"] = ("dagger " if p < args.alpha else "") + f"p={p:.4f}"
    columns = ["algorithm", "tuning_data", "features", "n_features", "devtest_bleu", "test_bleu",
               "chosen_epoch", "significant_vs", "vs_best_group", "p_values"]
    with atomic_output(args.out) as fh:
        fh.write("\t".join(columns) + "\n")
        for row in rows:
            values = [f"{row[c]:.2f}" if c.endswith("_bleu") else str(row[c]) for c in columns]
            fh.write("\t".join(values) + "\n")
    print(f"wrote {args.out}: {len(rows)} rows", file=sys.stderr)


def _plot(args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = _parse_runs(args.run)
    fig, (ax_f, ax_b) = plt.subplots(1, 2, figsize=(11, 4))
    for algorithm, data, group, directory in runs:
        chosen = _read_json(os.path.join(directory, "chosen.json"), "chosen epoch")
        epochs = [e["epoch"] for e in chosen["epochs"]]
        label = f"{algorithm} ({data}, {group})"
        ax_f.plot(epochs, [e["nonzero_features"] for e in chosen["epochs"]], marker="o", label=label)
        ax_b.plot(epochs, [e["devtest_bleu"] for e in chosen["epochs"]], marker="o", label=label)
    from matplotlib.ticker import MaxNLocator

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
    tmp = args.out + ".tmp.png"
    fig.savefig(tmp, dpi=120)
    os.replace(tmp, args.out)
