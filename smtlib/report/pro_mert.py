"""Hopkins & May (2011) §3, §4.2, Figure 3: can MERT / PRO / batch MIRA learn back a gold linear model?

A synthetic candidate pool of 500 "sentences" x 100 "candidates" with features drawn uniformly
from [0, 500] in Δ dimensions, a random gold weight vector w* (standard normal), and the gold
score of a candidate g = w*·x (a decomposable gold function, H&M eq. 1). Each tuner runs once on
the pool (one optimisation step of the tuning loop), optimising the gold score through
:func:`smtlib.tuners.corpus_metric.additive_metric` (the tuners' BLEU path is untouched), and we
report cos(w, w*). "Noisy": the tuners see x + N(0, 500^2) per feature while g uses the clean x
(H&M §4.2). ``reps`` repetitions with fresh data per setting (H&M: 3).

Settings: PRO with H&M's sampler (Γ=5000, Ξ=50, α step at 0.05; the 0.05 threshold is negligible
on this score scale), the logistic-regression classifier with at most 30 L-BFGS iterations (as
MegaM in Moses) and Ψ = 1 (the classifier's own weights, as in H&M's synthetic experiment; the
interpolation of §5.4.3 belongs to the tuning loop). MERT: coordinate + 2 random directions per
round from a random starting point plus random restarts; the number of restarts is reduced at
high dimension to keep the run within about 30 minutes (:data:`MERT_RESTARTS`; H&M used 20), which
is written into the TSV. kbmira: Cherry & Foster's Algorithm 1 with g as the sentence score.

Every random draw is seeded by (dimension, repetition), so the cosines do not depend on which other
dimensions, methods or repetitions run; only the ``cpu_seconds`` column varies between runs.
The workflow draws the figure with ``smtlib report pro-mert``; ``benchmarks/synthetic_pro_mert.py``
runs the same experiment standalone.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from smtlib.errors import InputError
from smtlib.kbest.format import FeatureGroup
from smtlib.kbest.pool import KBestPool
from smtlib.report.figures import pyplot
from smtlib.tuners.kbmira import KbMira
from smtlib.tuners.mert import Mert
from smtlib.tuners.corpus_metric import additive_metric
from smtlib.tuners.pro import Pro

#: dimensions of H&M's Figure 3
DIMS = (10, 20, 50, 100, 200, 500, 1000)
#: the tuners compared (H&M: PRO and MERT; batch MIRA added as Cherry & Foster's kb-mira)
METHODS = ("pro", "kbmira", "mert")
#: MERT random restarts besides the starting point per dimension (H&M: 20); reduced where 20 would not fit the time budget
MERT_RESTARTS = {10: 20, 20: 20, 50: 20, 100: 20, 200: 20, 500: 10, 1000: 5}
SENTENCES, CANDIDATES, NOISE_SD = 500, 100, 500.0
COLUMNS = ("method", "dim", "features", "rep", "cosine", "cpu_seconds", "mert_restarts")


@dataclass(frozen=True)
class Trial:
    """One tuner on one synthetic pool: the cosine of its weights with w* and its CPU seconds."""

    method: str
    dim: int
    features: str  # "clean" or "noisy"
    rep: int
    cosine: float
    cpu_seconds: float
    mert_restarts: int | str  # "" for the other methods


def make_pool(dim: int, noisy: bool, rep: int) -> tuple[KBestPool, np.ndarray, np.ndarray]:
    """The synthetic pool (features the tuners see), the gold score per candidate and w*."""
    rng = np.random.default_rng([dim, rep, 20110727])
    n = SENTENCES * CANDIDATES
    clean = rng.uniform(0.0, 500.0, size=(n, dim))
    gold = rng.standard_normal(dim)
    gains = clean @ gold
    seen = clean + rng.normal(0.0, NOISE_SD, size=clean.shape) if noisy else clean
    del clean
    pool = KBestPool(
        offsets=np.arange(SENTENCES + 1, dtype=np.int64) * CANDIDATES,
        texts=[""] * n,
        dense=seen,
        groups=(FeatureGroup("F", dim),),
        sparse=sp.csr_matrix((n, 0)),
        sparse_names=[],
        totals=np.full(n, np.nan),
        extras=[None] * n,
    )
    return pool, gains, gold


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """cos(a, b); 0 when either is the zero vector."""
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return float(a @ b / (na * nb)) if na > 0 and nb > 0 else 0.0


def _tuner(method: str, dim: int, rep: int):
    if method == "mert":
        return Mert(seed=rep, random_restarts=MERT_RESTARTS.get(dim, 0))
    if method == "pro":
        return Pro(seed=rep, psi=1.0)
    if method == "kbmira":
        return KbMira(seed=rep)
    raise InputError(f"no synthetic PRO-vs-MERT setting for method {method!r} (choose from {', '.join(METHODS)})")


def tune_one(method: str, pool: KBestPool, gains: np.ndarray, dim: int, rep: int) -> tuple[np.ndarray, dict]:
    """One optimisation step of ``method`` on ``pool`` towards the gold score; its weights and params."""
    metric = additive_metric(gains)
    init = np.random.default_rng([dim, rep, 7]).standard_normal(dim)  # a random starting point
    tuner = _tuner(method, dim, rep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = tuner.fit_metric(pool, init, metric)
    return result.weights, dict(tuner.params)


def run_experiment(
    dims: list[int], reps: int, methods: list[str], progress: Callable[[Trial], None] | None = None
) -> list[Trial]:
    """Every method on a clean and a noisy pool per dimension and repetition (H&M Figure 3).

    Parameters
    ----------
    dims
        Feature dimensions Δ.
    reps
        Repetitions per dimension, each with a fresh pool and gold vector.
    methods
        Tuners among :data:`METHODS`.
    progress
        Called with each trial as it ends (e.g. to print it).
    """
    for method in methods:
        if method not in METHODS:
            _tuner(method, 1, 0)  # raises the InputError naming the choices
    if reps < 1 or not dims or min(dims) < 1:
        raise InputError("the synthetic experiment needs dimensions >= 1 and at least one repetition")
    trials = []
    for dim in dims:
        for noisy in (False, True):
            for rep in range(reps):
                pool, gains, gold = make_pool(dim, noisy, rep)
                for method in methods:
                    start = time.process_time()
                    weights, params = tune_one(method, pool, gains, dim, rep)
                    seconds = time.process_time() - start
                    trial = Trial(method, dim, "noisy" if noisy else "clean", rep, cosine(weights, gold), seconds,
                                  params.get("random_restarts", ""))
                    trials.append(trial)
                    if progress is not None:
                        progress(trial)
                del pool
    return trials


def describe(trial: Trial) -> str:
    """One progress line for a trial."""
    return (f"{trial.method:7s} dim={trial.dim:5d} {trial.features} rep={trial.rep} cos={trial.cosine:.4f} "
            f"cpu={trial.cpu_seconds:.1f}s")


def format_trials(trials: list[Trial]) -> str:
    """TSV of the trials (:data:`COLUMNS`)."""
    lines = ["\t".join(COLUMNS) + "\n"]
    for t in trials:
        lines.append(f"{t.method}\t{t.dim}\t{t.features}\t{t.rep}\t{t.cosine:.6f}\t{t.cpu_seconds:.2f}\t"
                     f"{t.mert_restarts}\n")
    return "".join(lines)


def pro_clean_cosine(trials: list[Trial]) -> float:
    """Mean cosine of PRO on clean features at the largest dimension (NaN without such trials)."""
    if not trials:
        return float("nan")
    top = max(t.dim for t in trials)
    values = [t.cosine for t in trials if t.method == "pro" and t.features == "clean" and t.dim == top]
    return float(np.mean(values)) if values else float("nan")


def plot_trials(trials: list[Trial]):
    """Mean cosine (± min/max over repetitions, shaded) against dimensionality, as H&M's Figure 3:
    solid lines and filled circles on clean features, dashed lines and open squares on noisy ones, one
    colour per method."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    colors = {"pro": "tab:blue", "mert": "tab:red", "kbmira": "tab:green"}
    for method in sorted({t.method for t in trials}):
        for feats, style in (("clean", "-"), ("noisy", "--")):
            sel = [t for t in trials if t.method == method and t.features == feats]
            dims = sorted({t.dim for t in sel})
            if not dims:
                continue
            vals = [[t.cosine for t in sel if t.dim == d] for d in dims]
            mean = [np.mean(v) for v in vals]
            lo = [np.min(v) for v in vals]
            hi = [np.max(v) for v in vals]
            label = f"{'Noisy ' if feats == 'noisy' else ''}{method.upper() if method != 'kbmira' else 'kb-MIRA'}"
            ax.plot(dims, mean, style, marker="o" if feats == "clean" else "s", color=colors.get(method),
                    markerfacecolor=None if feats == "clean" else "none", label=label)
            ax.fill_between(dims, lo, hi, color=colors.get(method), alpha=0.12)
    all_dims = sorted({t.dim for t in trials})
    ax.set_xscale("log")  # H&M's dimensions span 10 to 1,000
    ax.set_xticks(all_dims, [str(d) for d in all_dims])
    ax.minorticks_off()
    title = "Synthetic parameter learning (Hopkins & May 2011, Fig. 3)"
    if len(all_dims) == 1:  # e.g. the tiny and quick configs: a point per method, not a curve
        ax.set_xlim(all_dims[0] / 2, all_dims[0] * 2)
        title += f"\none dimensionality only ({all_dims[0]}): a point per method"
    ax.set_xlabel("Dimensionality (log scale)")
    ax.set_ylabel("cosine(learned, gold)")
    ax.set_ylim(-0.05, 1.02)
    ax.set_title(title)
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig
