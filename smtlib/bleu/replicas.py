"""Comparing systems tuned several times: mean, s_sel, s_opt and a stratified randomization test.

Clark, Dyer, Lavie & Smith (2011), "Better Hypothesis Testing for Statistical Machine Translation:
Controlling for Optimizer Instability" (ACL), and their tool MultEval (``multeval eval``), which
Cherry & Foster (2012, §4.3) follow in running every cell several times. Each system is a group of
R optimizer replicas (test-set outputs of R tuning runs); for each system and metric:

mean
    The average over replicas of the replica's corpus score (MultEval's ``AVG``).
s_sel
    Test-set selection variance (Clark et al., §3): for each replica, the sample standard deviation
    (Bessel's n - 1, as MultEval's ``MathUtils.stddev``) of the corpus score over ``boot_samples``
    bootstrap resamples of the test sentences (drawn with replacement, as many as there are), then
    the arithmetic mean of these standard deviations over the replicas (MultEval's
    ``RESAMPLED_STDDEV_AVG``).
s_opt
    Optimizer instability: the sample standard deviation (n - 1) of the R replica scores
    (MultEval's ``STDDEV``); undefined (NaN, printed ``-``) for one replica.
p
    Approximate randomization against the baseline over all replicas at once (Clark et al., §4):
    the statistic is the difference of the two systems' scores on the concatenation of their R
    outputs (summed statistics of all replicas, not the mean of replica scores), and a shuffle
    exchanges sentence i of replica r of one system with sentence i of replica r of the other, each
    (sentence, replica) pair independently with probability 1/2
    (:func:`smtlib.bleu.randomization.paired_randomization`). The two systems must have the same
    number of replicas; replica r of the one is paired with replica r of the other.

95 % interval (``ci``)
    sacrebleu's paired-bootstrap ``μ ± CI`` (``estimate_ci``): on each of ``boot_samples`` resamples
    of the test sentences (the ones s_sel uses, the same for every system, as sacrebleu's paired
    resamples), the mean over replicas of the replica scores; μ is the mean of these, the CI half the
    distance between the ones at sorted indices K // 40 and K - K // 40 - 1 (:func:`confidence_interval`).
    With one replica it is sacrebleu's interval; it does not include optimizer instability (s_opt).
Corrections
    :func:`correct_p_values` (Holm over one metric's systems-vs-baseline tests) and :func:`all_pairs`
    (the test for every pair, Holm over all pairs of a metric), both with the project's
    :func:`holm`.

Metrics (:data:`METRICS`) score summed additive per-sentence statistics (:data:`STATISTICS`): BLEU
(:func:`smtlib.bleu.corpus.bleu_from_stats`, sacrebleu's) and the length ratio (hypothesis length
over effective reference length, MultEval's ``Length``), both from the BLEU statistics row. A metric
with other additive statistics is one :data:`STATISTICS` entry for its rows and one :data:`METRICS`
entry for its score, as chrF, chrF++ and TER are (:mod:`smtlib.bleu.metrics`, sacrebleu's
scores; TER, like MultEval's, lower is better); statistics shared by several metrics are computed
once and every metric sees the same bootstrap resamples and shuffles. Scores are 0-1 here (the length ratio is the
ratio), 0-100 when printed.

Deviations from MultEval (``jhclark/multeval``, read at its ``StratifiedApproximateRandomizationTest``,
``BootstrapResampler``, ``MultEvalModule``, ``MathUtils`` and ``AsciiTable``):

* The shuffle. MultEval's current test also permutes each sentence's replicas before swapping and
  reads the second pseudo-system through the inverse permutation, so when the permutation is not an
  involution (a 3-cycle, a third of the sentences for R = 3) the two pseudo-systems are not
  complements: some hypotheses count twice and others not at all. That narrows the null distribution;
  on MultEval's example (baseline vs system 1, Length) it gives p = 0.090 where the exchange of
  complementary pairs used here (MultEval's earlier test, and the first pseudo-system of its current
  one) gives p = 0.097 (100,000 shuffles each; ``tests/unit/bleu/test_compare.py`` re-enacts both).
* p-value ties: ``ties="count"`` (Riezler & Maxwell's ``>=``) is the default, so identical systems get
  p = 1; ``ties="strict"`` is MultEval's ``>`` (identical systems get 1 / (shuffles + 1), printed
  0.00). Both add one to numerator and denominator, as MultEval does.
* Random numbers: MultEval seeds nothing; here everything follows ``seed``. The same bootstrap
  resamples serve every replica of every system, and each comparison with the baseline starts from
  the same seed, so a system's numbers do not depend on which other systems are compared.
* ``boot_samples`` defaults to 1,000 (MultEval: 10,000); s_sel's Monte-Carlo error is then about
  s_sel / sqrt(2 * boot_samples * R).
* BLEU is sacrebleu's (:mod:`smtlib.bleu.corpus`) with the project's tokenization and case
  settings. MultEval's jBLEU (a port of mteval-v13a that does not tokenize) gives the same corpus
  BLEU on tokenized text scored with ``--tokenize none`` and one reference, as on its example data;
  with several references the two may pick a different reference length where two are equally close.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from smtlib.bleu.corpus import bleu_from_stats
from smtlib.bleu.randomization import TIES, paired_randomization
from smtlib.bleu.stats import HYP_LEN, REF_LEN, STATS_WIDTH, BleuSettings, compute_stats
from smtlib.errors import InputError


@dataclasses.dataclass(frozen=True)
class Statistics:
    """Additive per-sentence statistics: ``compute(hypotheses, references, settings)`` gives
    ``(N, width)`` rows whose column sums a corpus metric scores."""

    width: int
    compute: Callable[[Sequence[str], Sequence[Sequence[str]], BleuSettings], np.ndarray]


def _bleu_rows(hypotheses: Sequence[str], references: Sequence[Sequence[str]], settings: BleuSettings) -> np.ndarray:
    return compute_stats(hypotheses, np.arange(len(hypotheses)), references, settings)


def length_ratio(stats: np.ndarray) -> float:
    """Hypothesis length over effective reference length of a summed BLEU statistics row
    (MultEval's ``Length``, there times 100)."""
    return float(stats[HYP_LEN]) / float(stats[REF_LEN]) if stats[REF_LEN] > 0 else float("nan")


def _metric_rows(name: str) -> Callable[[Sequence[str], Sequence[Sequence[str]], BleuSettings], np.ndarray]:
    """Rows of a metric of :mod:`smtlib.bleu.metrics`: chrF takes the case setting
    (``--lowercase``), TER sacrebleu's defaults (it lowercases)."""

    def rows(hypotheses, references, settings: BleuSettings) -> np.ndarray:
        from smtlib.bleu.metrics import MetricOptions, get_metric

        metric = get_metric(name, MetricOptions(bleu=settings, lowercase=settings.lowercase))
        return metric.stats(hypotheses, np.arange(len(hypotheses)), references)

    return rows


def _metric_score(name: str) -> Callable[[np.ndarray], float]:
    """The corpus score of a summed row of metric ``name`` (its settings do not change the formula)."""
    metric = []

    def score(row: np.ndarray) -> float:
        if not metric:
            from smtlib.bleu.metrics import get_metric

            metric.append(get_metric(name))
        return metric[0].corpus(row)

    return score


#: name -> per-sentence additive statistics
STATISTICS: dict[str, Statistics] = {
    "bleu": Statistics(STATS_WIDTH, _bleu_rows),
    "chrf": Statistics(18, _metric_rows("chrf")),
    "chrf++": Statistics(24, _metric_rows("chrf++")),
    "ter": Statistics(2, _metric_rows("ter")),
}


@dataclasses.dataclass(frozen=True)
class ReplicaMetric:
    """A corpus metric computed from summed additive per-sentence statistics.

    Attributes
    ----------
    title
        Column title (MultEval's metric name).
    statistics
        Key of :data:`STATISTICS` whose rows the metric sums.
    score
        One summed statistics row -> the corpus score (0-1 scale; printed times 100).
    bigger_is_better
        Direction, shown as an arrow in the LaTeX table (None: neither, as for the length ratio).
    """

    title: str
    statistics: str
    score: Callable[[np.ndarray], float]
    bigger_is_better: bool | None = True


#: name -> metric; ``smtlib compare --metrics`` reads its choices and defaults from here.
METRICS: dict[str, ReplicaMetric] = {
    "bleu": ReplicaMetric("BLEU", "bleu", bleu_from_stats),
    "length": ReplicaMetric("Length", "bleu", length_ratio, None),
    "chrf": ReplicaMetric("chrF", "chrf", _metric_score("chrf")),
    "chrf++": ReplicaMetric("chrF++", "chrf++", _metric_score("chrf++")),
    "ter": ReplicaMetric("TER", "ter", _metric_score("ter"), False),
}
#: the metrics ``smtlib compare`` shows by default (MultEval's BLEU and Length)
DEFAULT_METRICS = ("bleu", "length")


@dataclasses.dataclass(frozen=True)
class Layout:
    """The chosen metrics, and where each :data:`STATISTICS` entry they need sits in a system's
    concatenated statistics rows (each entry once, however many metrics read it)."""

    metrics: tuple[str, ...]
    columns: dict[str, slice]  # statistics name -> its columns

    @classmethod
    def of(cls, metrics: Sequence[str]) -> Layout:
        if not metrics:
            raise InputError("no metric chosen")
        unknown = [m for m in metrics if m not in METRICS]
        if unknown:
            raise InputError(f"unknown metric {unknown[0]!r} (choose from {', '.join(METRICS)})")
        if len(set(metrics)) != len(metrics):
            raise InputError("a metric is chosen twice")
        columns, start = {}, 0
        for name in dict.fromkeys(METRICS[m].statistics for m in metrics):
            columns[name] = slice(start, start + STATISTICS[name].width)
            start += STATISTICS[name].width
        return cls(tuple(metrics), columns)

    def rows(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]], settings: BleuSettings) -> np.ndarray:
        """``(N, W)`` statistics of one output: every needed :data:`STATISTICS` entry, side by side."""
        return np.hstack([STATISTICS[name].compute(hypotheses, references, settings) for name in self.columns])

    def score(self, sums: np.ndarray) -> np.ndarray:
        """``(K, P)`` scores of ``(K, W)`` summed rows, one column per metric."""
        out = np.empty((len(sums), len(self.metrics)))
        for j, name in enumerate(self.metrics):
            metric = METRICS[name]
            cols = self.columns[metric.statistics]
            out[:, j] = [metric.score(row[cols]) for row in sums]
        return out


@dataclasses.dataclass(frozen=True)
class SystemResult:
    """One system's row of the comparison; arrays have one entry per metric (0-1 scale)."""

    name: str
    replicas: np.ndarray  # (R, P) corpus score of each replica
    mean: np.ndarray
    s_sel: np.ndarray
    s_opt: np.ndarray
    p_value: np.ndarray | None  # None for the baseline; corrected if ``p_uncorrected`` is set
    boot_mean: np.ndarray | None = None  # mean of the bootstrap distribution of the replica mean
    ci_half: np.ndarray | None = None  # half-width of its 95 % interval (sacrebleu's ``± CI``)
    p_uncorrected: np.ndarray | None = None  # the p-values before a multiple-testing correction


def bootstrap_counts(n_items: int, samples: int, seed: int, block: int = 500):
    """Blocks of bootstrap resamples as ``(k, n_items)`` count matrices: each resample draws
    ``n_items`` items with replacement (Efron & Tibshirani 1993; Koehn 2004)."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < samples:
        k = min(block, samples - done)
        draws = rng.integers(0, n_items, size=(k, n_items)) + (np.arange(k) * n_items)[:, None]
        yield np.bincount(draws.ravel(), minlength=k * n_items).reshape(k, n_items).astype(np.float64)
        done += k


def bootstrap_scores(stats: np.ndarray, score: Callable[[np.ndarray], np.ndarray], *, samples: int = 1000,
                     seed: int = 0) -> np.ndarray:
    """``(R, samples, P)`` scores of each replica of ``(R, N, W)`` statistics on the same bootstrap
    resamples of the N test sentences (:func:`bootstrap_counts` with ``seed``)."""
    if samples < 2:
        raise InputError(f"bootstrap samples must be >= 2, got {samples}")
    scores = [[] for _ in range(len(stats))]
    for counts in bootstrap_counts(stats.shape[1], samples, seed):
        for r, replica in enumerate(stats):
            scores[r].append(score(counts @ replica))
    return np.stack([np.vstack(s) for s in scores])


def selection_sd(stats: np.ndarray, score: Callable[[np.ndarray], np.ndarray], *, samples: int = 1000, seed: int = 0) -> np.ndarray:
    """s_sel: the mean over replicas of the bootstrap standard deviation of each replica's score.

    ``stats`` is ``(R, N, W)``; ``score`` maps ``(K, W)`` sums to ``(K, P)``. Returns ``(P,)``.
    """
    return _s_sel(bootstrap_scores(stats, score, samples=samples, seed=seed))


def _s_sel(scores: np.ndarray) -> np.ndarray:
    return scores.std(axis=1, ddof=1).mean(axis=0)


def confidence_interval(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, half-width of the 95 % interval) of ``(K, P)`` bootstrap scores, per column: sacrebleu's
    paired-bootstrap ``μ ± CI`` (``sacrebleu.significance.estimate_ci``): of the K sorted scores, the
    interval runs from the one at index ``K // 40`` to the one ``K // 40`` from the top."""
    ordered = np.sort(np.asarray(scores, dtype=np.float64), axis=0)
    low = len(ordered) // 40
    return ordered.mean(axis=0), 0.5 * (ordered[len(ordered) - low - 1] - ordered[low])


def paired_bootstrap(
    stats_a: np.ndarray, stats_b: np.ndarray, score: Callable[[np.ndarray], np.ndarray], *, samples: int = 1000, seed: int = 0
) -> np.ndarray:
    """p-values of Koehn's (2004) paired bootstrap test as sacrebleu's ``--paired-bs`` computes them
    (Moses's ``bootstrap-hypothesis-difference-significance.pl``): resample the sentences of both
    systems alike; the centred absolute differences ``|d*| - mean |d*|`` that exceed the observed ``|d|``,
    plus one, over ``samples`` + 1. ``stats_a``/``stats_b`` are ``(N, W)``; returns ``(P,)``."""
    observed = np.abs(score(stats_a.sum(axis=0)[None]) - score(stats_b.sum(axis=0)[None]))[0]
    diffs = np.vstack([np.abs(score(c @ stats_a) - score(c @ stats_b)) for c in bootstrap_counts(len(stats_a), samples, seed)])
    return ((diffs - diffs.mean(axis=0) > observed).sum(axis=0) + 1) / (samples + 1)


def summarize_system(name: str, stats: np.ndarray, layout: Layout, boot_samples: int = 1000,
                     seed: int = 0) -> SystemResult:
    """One system's row without a test: replica scores, mean, s_sel, s_opt and the 95 % interval of
    its ``(R, N, W)`` statistics (``p_value`` None). :func:`compare_systems` adds the p-values; the
    tables (:mod:`smtlib.report.significance`) take theirs from the column's pair tests instead.

    The interval is the paired bootstrap's (sacrebleu's ``--paired-bs``): the mean over replicas of
    each replica's score on a bootstrap resample of the test sentences (the same resamples s_sel uses,
    shared by all systems), and :func:`confidence_interval` of these K means. With one replica it is
    sacrebleu's interval; with R replicas it is that of the replica mean under test-set resampling
    (optimizer instability, s_opt, is not in it)."""
    replicas = layout.score(stats.sum(axis=1))
    s_opt = replicas.std(axis=0, ddof=1) if len(replicas) > 1 else np.full(replicas.shape[1], np.nan)
    boot = bootstrap_scores(stats, layout.score, samples=boot_samples, seed=seed)
    boot_mean, ci_half = confidence_interval(boot.mean(axis=0))
    return SystemResult(name, replicas=replicas, mean=replicas.mean(axis=0), s_sel=_s_sel(boot), s_opt=s_opt,
                        p_value=None, boot_mean=boot_mean, ci_half=ci_half)


def compare_systems(
    baseline: np.ndarray,
    systems: Mapping[str, np.ndarray],
    layout: Layout,
    *,
    baseline_name: str = "baseline",
    ar_shuffles: int = 10_000,
    boot_samples: int = 1000,
    seed: int = 0,
    ties: str = "count",
) -> list[SystemResult]:
    """The baseline's row and one row per system, with p-values against the baseline.

    Parameters
    ----------
    baseline, systems
        ``(R, N, W)`` statistics (:meth:`Layout.rows` of each replica's output), all with the same
        R and N.
    layout
        The metrics and where their statistics sit.
    ar_shuffles, boot_samples, seed, ties
        Randomization shuffles, bootstrap resamples, the seed of both, the p-value convention
        (:data:`smtlib.bleu.randomization.TIES`).
    """
    if ties not in TIES:
        raise InputError(f"unknown tie convention {ties!r} (choose from {', '.join(TIES)})")
    results = [summarize_system(baseline_name, baseline, layout, boot_samples, seed)]
    flat_base = baseline.reshape(-1, baseline.shape[-1])  # replica-major rows: (replica, sentence)
    for name, stats in systems.items():
        if stats.shape != baseline.shape:
            raise InputError(f"system {name!r} has {stats.shape[0]} replicas of {stats.shape[1]} sentences, "
                             f"the baseline {baseline.shape[0]} of {baseline.shape[1]}")
        _, p = paired_randomization(flat_base, stats.reshape(flat_base.shape), layout.score,
                                    trials=ar_shuffles, seed=seed, ties=ties)
        results.append(dataclasses.replace(summarize_system(name, stats, layout, boot_samples, seed), p_value=p))
    return results


#: multiple-testing corrections of ``smtlib compare --correction``
CORRECTIONS = ("none", "holm")


def holm(ps: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: the i-th smallest of m becomes
    max over j <= i of min(1, (m - j + 1) p_(j)). The project's one implementation: ``smtlib
    compare --correction holm`` and the tables' marks (:mod:`smtlib.report.significance`) use it."""
    m = len(ps)
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda k: ps[k])):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adjusted[i] = running
    return adjusted


def _adjust(ps: Sequence[float], correction: str) -> list[float]:
    """``ps`` corrected together (:func:`holm`)."""
    if correction not in CORRECTIONS:
        raise InputError(f"unknown correction {correction!r} (choose from {', '.join(CORRECTIONS)})")
    if correction == "none":
        return [float(p) for p in ps]
    return holm([float(p) for p in ps])


def correct_p_values(results: Sequence[SystemResult], correction: str) -> list[SystemResult]:
    """The systems' p-values against the baseline corrected together, metric by metric (the family of
    one metric's column: one test per system); ``p_uncorrected`` keeps the raw ones. ``none`` returns
    the results as they are."""
    _adjust([], correction)  # an unknown correction is an error
    if correction == "none":
        return list(results)
    tested = [i for i, r in enumerate(results) if r.p_value is not None]
    if not tested:
        return list(results)
    raw = np.array([results[i].p_value for i in tested])  # (systems, P)
    adjusted = np.column_stack([_adjust(raw[:, j], correction) for j in range(raw.shape[1])])
    out = list(results)
    for k, i in enumerate(tested):
        out[i] = dataclasses.replace(results[i], p_value=adjusted[k], p_uncorrected=raw[k])
    return out


@dataclasses.dataclass(frozen=True)
class PairMatrix:
    """p-values of every pair of systems: ``p[j, a, b]`` for metric j (symmetric, NaN on the diagonal),
    ``raw`` before the correction (the same when ``correction`` is ``none``)."""

    names: tuple[str, ...]
    p: np.ndarray  # (P, S, S)
    raw: np.ndarray
    correction: str


def all_pairs(
    systems: Mapping[str, np.ndarray],
    layout: Layout,
    *,
    ar_shuffles: int = 10_000,
    seed: int = 0,
    ties: str = "count",
    correction: str = "none",
) -> PairMatrix:
    """The stratified randomization test (as :func:`compare_systems` runs it) for every pair of
    ``systems`` (``(R, N, W)`` statistics each, in table order), each pair from the same ``seed``, so
    a pair with the baseline gets the p of :func:`compare_systems`. The correction is applied per metric
    over all S(S-1)/2 pairs."""
    names = tuple(systems)
    shapes = {stats.shape for stats in systems.values()}
    if len(shapes) > 1:
        raise InputError(f"the systems' statistics differ in shape: {sorted(shapes)}")
    pairs = [(a, b) for a in range(len(names)) for b in range(a + 1, len(names))]
    flat = [stats.reshape(-1, stats.shape[-1]) for stats in systems.values()]
    raw = np.full((len(layout.metrics), len(names), len(names)), np.nan)
    for a, b in pairs:
        _, p = paired_randomization(flat[a], flat[b], layout.score, trials=ar_shuffles, seed=seed, ties=ties)
        raw[:, a, b] = raw[:, b, a] = p
    adjusted = raw.copy()
    if pairs:
        for j in range(len(layout.metrics)):
            for (a, b), q in zip(pairs, _adjust([raw[j, a, b] for a, b in pairs], correction), strict=True):
                adjusted[j, a, b] = adjusted[j, b, a] = q
    return PairMatrix(names, adjusted, raw, correction)


def format_pairs_text(pairs: PairMatrix, layout: Layout) -> str:
    """One matrix per metric: row system against column system, p-values to two decimals (``-`` on the
    diagonal), with the correction named in the block's title."""
    what = "uncorrected" if pairs.correction == "none" else \
        f"{pairs.correction.capitalize()}-corrected over {len(pairs.names) * (len(pairs.names) - 1) // 2} pairs"
    first = max(15, max(len(n) for n in pairs.names) + 1)
    width = max(10, max(len(n) for n in pairs.names) + 2)
    out = []
    for j, m in enumerate(layout.metrics):
        out.append(f"{METRICS[m].title} p-values, all pairs ({what}):\n")
        out.append(("".ljust(first) + "".join(n.ljust(width) for n in pairs.names)).rstrip() + "\n")
        for a, name in enumerate(pairs.names):
            cells = ["-" if a == b else f"{pairs.p[j, a, b]:.2f}" for b in range(len(pairs.names))]
            out.append((name.ljust(first) + "".join(c.ljust(width) for c in cells)).rstrip() + "\n")
    return "".join(out)


def format_pairs_tsv(pairs: PairMatrix, layout: Layout) -> str:
    """One line per metric and pair (each pair once, in table order), unrounded: metric, system_a,
    system_b, p (corrected), p_uncorrected, correction."""
    lines = ["metric\tsystem_a\tsystem_b\tp\tp_uncorrected\tcorrection\n"]
    for j, m in enumerate(layout.metrics):
        for a in range(len(pairs.names)):
            for b in range(a + 1, len(pairs.names)):
                lines.append(f"{m}\t{pairs.names[a]}\t{pairs.names[b]}\t{pairs.p[j, a, b]:.6f}\t"
                             f"{pairs.raw[j, a, b]:.6f}\t{pairs.correction}\n")
    return "".join(lines)


# -- tables -----------------------------------------------------------------------------------------
# MultEval's rounding (its README): one decimal for scores and standard deviations, two for p-values.
def _cell(result: SystemResult, j: int) -> str:
    s_opt = "-" if np.isnan(result.s_opt[j]) else f"{100 * result.s_opt[j]:.1f}"
    p = "-" if result.p_value is None else f"{result.p_value[j]:.2f}"
    return f"{100 * result.mean[j]:.1f} ({100 * result.s_sel[j]:.1f}/{s_opt}/{p})"


def _ci_cell(result: SystemResult, j: int, pm: str = "±") -> str:
    return f"{100 * result.boot_mean[j]:.1f} {pm} {100 * result.ci_half[j]:.1f}"


def format_text(results: Sequence[SystemResult], layout: Layout, *, ci: bool = False, correction: str = "none") -> str:
    """MultEval's ASCII table: ``n=R``, then per metric ``mean (s_sel/s_opt/p)`` in columns of 23; with
    ``ci`` one more column per metric after those, ``<metric> μ ± 95% CI`` (the paired bootstrap's mean
    and 95 % half-width, sacrebleu's ``--paired-bs`` cell), so MultEval's columns keep their places.
    A correction other than ``none`` adds a line after the table saying the p-values are corrected."""
    first = max(15, max(len(r.name) for r in results) + 1)
    header = [f"n={len(results[0].replicas)}"] + [f"{METRICS[m].title} (s_sel/s_opt/p)" for m in layout.metrics]
    lines = [header] + [[r.name] + [_cell(r, j) for j in range(len(layout.metrics))] for r in results]
    if ci:
        header += [f"{METRICS[m].title} μ ± 95% CI" for m in layout.metrics]
        for line, r in zip(lines[1:], results, strict=True):
            line += [_ci_cell(r, j) for j in range(len(layout.metrics))]
    text = "".join((row[0].ljust(first) + "".join(c.ljust(23) for c in row[1:])).rstrip() + "\n" for row in lines)
    if correction != "none":
        tested = sum(r.p_value is not None for r in results)
        text += (f"p: {correction.capitalize()}-corrected over the {tested} systems' tests against "
                 f"{results[0].name!r}, per metric\n")
    return text


def format_tsv(results: Sequence[SystemResult], layout: Layout, *, ci: bool = False, correction: str = "none") -> str:
    """One line per system and metric, unrounded (scores 0-100): system, metric, n, mean, s_sel, s_opt,
    p (``-`` for the baseline), then the replica scores (comma-separated). With ``ci``, then
    boot_mean, ci_half, ci_low, ci_high (the paired bootstrap's mean, its 95 % half-width, mean -/+
    half-width); with a correction the p column is ``p_<correction>`` and p_uncorrected follows last."""
    corrected = correction != "none"
    header = ["system", "metric", "n", "mean", "s_sel", "s_opt", f"p_{correction}" if corrected else "p", "replicas"]
    header += ["boot_mean", "ci_half", "ci_low", "ci_high"] if ci else []
    header += ["p_uncorrected"] if corrected else []
    lines = ["\t".join(header) + "\n"]
    for r in results:
        for j, m in enumerate(layout.metrics):
            p = "-" if r.p_value is None else f"{r.p_value[j]:.6f}"
            replicas = ",".join(f"{100 * x:.6f}" for x in r.replicas[:, j])
            line = (f"{r.name}\t{m}\t{len(r.replicas)}\t{100 * r.mean[j]:.6f}\t{100 * r.s_sel[j]:.6f}\t"
                    f"{100 * r.s_opt[j]:.6f}\t{p}\t{replicas}")
            if ci:
                mu, half = 100 * r.boot_mean[j], 100 * r.ci_half[j]
                line += f"\t{mu:.6f}\t{half:.6f}\t{mu - half:.6f}\t{mu + half:.6f}"
            if corrected:
                line += "\t-" if r.p_uncorrected is None else f"\t{r.p_uncorrected[j]:.6f}"
            lines.append(line + "\n")
    return "".join(lines)


_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {"~": r"\textasciitilde{}", "^": r"\^{}", "\\": r"\textbackslash{}"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def format_latex(results: Sequence[SystemResult], layout: Layout, note: str = "", *, ci: bool = False,
                 correction: str = "none") -> str:
    """A ``tabular`` in MultEval's layout (metric, system, mean, s_sel, s_opt, p), MultEval's rounding;
    no package beyond LaTeX itself. ``note`` becomes a leading ``%`` comment. With ``ci`` a last column
    ``$\\mu \\pm$ 95\\% CI``; with a correction the p column's title names it."""
    out = [f"% {line}\n" for line in note.splitlines()]
    out.append(f"\\begin{{tabular}}{{llrrrr{'r' if ci else ''}}}\n\\hline\n")
    p_title = "$p$-value" if correction == "none" else f"$p$ ({correction.capitalize()})"
    ci_title = " & $\\mu \\pm$ 95\\% CI" if ci else ""
    out.append(f"Metric & System & Avg & $\\overline{{s}}_\\mathrm{{sel}}$ & $s_\\mathrm{{opt}}$ & {p_title}{ci_title} \\\\\n\\hline\n")
    for j, m in enumerate(layout.metrics):
        metric = METRICS[m]
        arrow = {True: " $\\uparrow$", False: " $\\downarrow$", None: ""}[metric.bigger_is_better]
        for i, r in enumerate(results):
            name = metric.title + arrow if i == 0 else ""
            s_opt = "-" if np.isnan(r.s_opt[j]) else f"{100 * r.s_opt[j]:.1f}"
            p = "-" if r.p_value is None else f"{r.p_value[j]:.2f}"
            extra = " & " + _ci_cell(r, j, "$\\pm$") if ci else ""
            out.append(f"{name} & {_latex_escape(r.name)} & {100 * r.mean[j]:.1f} & {100 * r.s_sel[j]:.1f} & {s_opt} & {p}{extra} \\\\\n")
        out.append("\\hline\n")
    out.append("\\end{tabular}\n")
    return "".join(out)
