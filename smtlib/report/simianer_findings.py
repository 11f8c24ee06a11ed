"""Simianer, Riezler & Dyer (2012): the findings of §5.2 about Table 2, as data, decided on our runs
(``smtlib sgd findings``, ``results/simianer_findings.md``).

The paper's Table 2 is :data:`PAPER_TSV` (read by :func:`paper_rows`): its algorithms 1-4 are ours
:data:`smtlib.tuners.sgd_mixing.ALGORITHMS` (``sgd`` on dev, ``mixsgd``, ``itermixsgd``, ``iterselsgd`` on
the training shards), its feature groups ours (``default``, ``id``, ``ng``, ``shape``, ``id-ng-shape``),
and its MIRA row (Figure 4, the mean of 100 runs of cdec's MIRA on dev) our batch tuner's row (``--baseline``,
e.g. ``kbmira`` on dev with the default features). Our rows are read by
:func:`smtlib.report.simianer.load_rows`, the loader of the table (``smtlib sgd table``).

Findings (:data:`FINDINGS`; each quotes the paper and names the rows it compares)
    (a) on dev (Algorithm 1) the templates do not beat the dense default features (the paper's 12; ours
    are the Medium system's), per template group;
    (b) IterMixSGD on the training set beats Algorithm 1 on dev with the same features, per group;
    (c) IterSelSGD with all three templates is the best row of the table: against the best other row,
    with the share of the features it keeps (its chosen epoch's non-zero features over the features
    the shards have, the paper's 100k of 4.7M);
    (d) MixSGD (the shards' weights mixed for the output only, no iteration) is worse than IterMixSGD,
    per group;
    (e) Algorithm 1 on dev with the default features beats the batch tuner on dev (the paper's
    perceptron 28.0 against MIRA's mean 27.10);
    (f) IterSelSGD with all templates beats Algorithm 1 with the default features on dev (the paper's
    0.8 BLEU).
Every comparison is a claim "A better than B" on test BLEU
    **holds** if A is significantly better, **does not hold** if A is significantly worse, **not
    significant** otherwise. Finding (a) is a claim of no gain; its comparisons are phrased "the dense
    features (default) better than the templates (+g)", so that **does not hold** (the templates
    significantly better) is the outcome that contradicts the paper, **not significant** is the
    paper's own outcome ("not significant") and **holds** (the templates significantly worse) goes
    beyond it.
The test (§5.1)
    The paper's: approximate randomization (Noreen 1989; Riezler & Maxwell 2005) on the test set's
    sentence statistics of the two rows' runs (the first directory of each name, the table's run),
    :func:`smtlib.bleu.randomization.approximate_randomization` with the given shuffles and seed, the
    same test as the table's p-values. Its two-sided p is the decisive p of the side the observed
    difference is on (a :class:`~smtlib.report.claims.RunTest` with p 1 on the other side), so a verdict
    other than not significant needs p < alpha after Holm's correction over the file's comparisons
    (:func:`smtlib.report.claims.decide_family`): the file decides one table, so all its comparisons are
    one family, and a pair of rows that two findings compare counts once. Both p-values are given.
Replicas
    Where a row has replicas (several directories for one name: other shard splits, or the batch
    tuner's dev sub-samples), the mean and s_opt (the SD across the replicas) of their test BLEU are
    shown beside the comparison; the decision stays with the table's runs.
Not run
    A comparison whose rows are not in the given runs is listed as "not run" and counts in no
    aggregate.
The paper's verdict
    The same claim on the paper's numbers: where Table 2 marks a test of the two rows (the raised
    algorithm numbers for two algorithms with the same features; the dagger for a row against the best
    feature group of its algorithm), its verdict with the same three outcomes; where §5.2's text states
    it, the text's (finding f); elsewhere the point estimates, flagged as untested.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import statistics
from collections.abc import Sequence

from smtlib.bleu.randomization import approximate_randomization
from smtlib.bleu.signature import BleuSignature
from smtlib.bleu.stats import BleuSettings
from smtlib.io import atomic_output
from smtlib.report.claims import (FAILS, HOLDS, INCONCLUSIVE, NOT_RUN, Comparison, RunTest, decide_family,
                                  verdict)
from smtlib.report.significance import ALPHA, format_p
from smtlib.report.simianer import Row, load_rows
from smtlib.tuners.sgd_mixing import ALGORITHMS

NOT_SIGNIFICANT = "not significant"
#: the paper's Table 2 (:func:`paper_rows`)
PAPER_TSV = "simianer_2012.tsv"
#: the paper's algorithm numbers -> ours; "MIRA" is the batch tuner's row
PAPER_ALGORITHMS = {str(i + 1): a for i, a in enumerate(ALGORITHMS)} | {"MIRA": "batch"}
#: the paper's feature groups as printed -> ours
PAPER_GROUPS = {"default": "default", "+id": "id", "+ng": "ng", "+shape": "shape", "+id,ng,shape": "id-ng-shape"}
TEMPLATE_GROUPS = ("id", "ng", "shape", "id-ng-shape")
GROUPS = ("default", *TEMPLATE_GROUPS)
#: a row of the table by (algorithm, tuning data, group); algorithm "batch": the batch tuner's rows
RowName = tuple[str, str, str]
BATCH: RowName = ("batch", "dev", "default")
#: ``Finding.b`` for "the best other row of the table"
BEST_OTHER = "the best other row"


def _sgd(group: str) -> RowName:
    return ("sgd", "dev", group)


def _train(algorithm: str, group: str) -> RowName:
    return (algorithm, "train", group)


@dataclasses.dataclass(frozen=True)
class Finding:
    """One finding of the paper: each of ``pairs`` is a claim "A better than B" (B :data:`BEST_OTHER`:
    the best other row, ours or the paper's); ``unit`` names what the comparisons range over;
    ``reading`` says how the verdicts bear on the paper's words; ``paper_text``: the verdict §5.2's
    text states for the comparison (else the table's marks or point estimates decide)."""

    key: str
    text: str
    quote: str
    pairs: tuple[tuple[RowName, RowName | str], ...]
    unit: str = "groups"
    reading: str = ""
    paper_text: str = ""


_DEV_QUOTE = ('§5.2: "The results on the news-commentary (nc) data show that training on the development set does '
              'not benefit from adding large feature sets – BLEU result differences between tuning 12 default '
              'features and tuning the full set of 180,000 features are not significant."')
_TRAIN_QUOTE = ('§5.2: "However, scaling all features to the full training set shows significant improvements for '
                'algorithm 3, and especially for algorithm 4, which gains 0.8 BLEU points over tuning 12 features on '
                'the development set."')

FINDINGS: tuple[Finding, ...] = (
    Finding("a", "On dev (Algorithm 1) the sparse templates do not beat the dense default features (the paper's "
            "12)", _DEV_QUOTE,
            tuple((_sgd("default"), _sgd(g)) for g in TEMPLATE_GROUPS),
            reading="each comparison is \"default better than +group\": does not hold (the templates significantly "
                    "better) contradicts the paper, not significant is the paper's own outcome, holds goes beyond it"),
    Finding("b", "Training on the training set (IterMixSGD, Algorithm 3) beats tuning the same features on dev "
            "(Algorithm 1)", _TRAIN_QUOTE, tuple((_train("itermixsgd", g), _sgd(g)) for g in GROUPS)),
    Finding("c", "IterSelSGD (Algorithm 4) with all three templates is the best row of the table",
            _TRAIN_QUOTE + ' Table 2 sets it in bold face; §5.2: "The number of features rises to 4.7 million '
            'without feature selection, which iteratively selects 100,000 features with best ℓ2 norm values across '
            'shards."', ((_train("iterselsgd", "id-ng-shape"), BEST_OTHER),), unit="comparisons"),
    Finding("d", "MixSGD (Algorithm 2: the shards' weights mixed for the output, never sent back) is worse than "
            "IterMixSGD (Algorithm 3)",
            '§5.2: "Feature templates such as rule n-grams and rule shapes only work if iterative mixing '
            '(algorithm 3) or feature selection (algorithm 4) are used."; §4: IterMixSGD mixes "after training a '
            'single epoch of the perceptron in parallel on each shard. The mixed weight vector is re-sent to each '
            'shard".',
            tuple((_train("itermixsgd", g), _train("mixsgd", g)) for g in GROUPS)),
    Finding("e", "Algorithm 1 (the perceptron) on dev with the dense default features beats the batch tuner on dev "
            "(the paper's MIRA)",
            '§5.2: "The perceptron algorithm itself compares favorably to related learning techniques such as the '
            'MIRA adaptation of Chiang et al. (2008) ... a median of 27.2 BLEU and a mean of 27.1 BLEU ... the '
            'perceptron is deterministic when started from a zero-vector of weights and achieves favorable 28.0 BLEU '
            'on the news-commentary test set."', ((_sgd("default"), BATCH),), unit="batch tuners"),
    Finding("f", "IterSelSGD (Algorithm 4) with all three templates on the training set beats Algorithm 1 with "
            "the dense default features on dev", _TRAIN_QUOTE,
            ((_train("iterselsgd", "id-ng-shape"), _sgd("default")),), unit="comparisons", paper_text=HOLDS),
)


# ------------------------------------------------------------------ the paper's numbers
def paper_rows() -> dict[RowName, dict[str, str]]:
    """The rows of :data:`PAPER_TSV` by our row name (the MIRA row: :data:`BATCH`)."""
    text = importlib.resources.files("smtlib.report").joinpath(PAPER_TSV).read_text(encoding="utf-8")
    lines = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    rows = [dict(zip(lines[0], line)) for line in lines[1:]]
    return {(PAPER_ALGORITHMS[r["algorithm"]], r["tuning_set"].removesuffix("-nc"), PAPER_GROUPS[r["features"]]): r
            for r in rows}


def paper_count(printed: str) -> float:
    """A feature count as Table 2 prints it: ``137k``, ``4.7M``, ``51``."""
    scale = {"k": 1e3, "M": 1e6}.get(printed[-1:], 1)
    return float(printed[:-1] if scale != 1 else printed) * scale


def _paper_name(row: dict) -> str:
    return "MIRA" if row["algorithm"] == "MIRA" else f"Alg. {row['algorithm']} {row['features']}"


def _side(a: float, b: float) -> str:
    return HOLDS if a > b else FAILS if a < b else NOT_SIGNIFICANT


def paper_verdict(a: dict, b: dict, rows: dict[RowName, dict], text: str = "") -> str:
    """The verdict of "``a`` better than ``b``" on the paper's rows, with what decides it (see the module
    docstring): the raised numbers, the dagger, §5.2's text (``text``), or the point estimates."""
    side = _side(float(a["test"]), float(b["test"]))
    if text:
        return f"{text} (§5.2's text)"
    numbered = a["algorithm"] != "MIRA" and b["algorithm"] != "MIRA"
    if numbered and a["features"] == b["features"]:
        marked = b["algorithm"] in a["marks"] or a["algorithm"] in b["marks"]
        return f"{side if marked else NOT_SIGNIFICANT} (Table 2's raised numbers)"
    if numbered and a["algorithm"] == b["algorithm"]:
        best = max((r for r in rows.values() if r["algorithm"] == a["algorithm"]), key=lambda r: float(r["test"]))
        if best in (a, b):
            other = b if best is a else a
            return f"{side if other['dagger'] else NOT_SIGNIFICANT} (Table 2's dagger)"
    return f"{side} (point estimates; Table 2 marks no test of these rows)"


# ------------------------------------------------------------------ our rows
def row_name(row: Row) -> RowName:
    """The name a finding uses for a row of ours: the batch tuner's rows are :data:`BATCH`'s algorithm."""
    return ("batch" if row.baseline else row.algorithm, row.data, row.group)


def _label(row: Row) -> str:
    return f"{row.algorithm} ({row.data}, {row.group})"


def _name_label(name: RowName | str) -> str:
    if isinstance(name, str):
        return name
    algorithm = "the batch tuner" if name[0] == "batch" else name[0]
    return f"{algorithm} ({name[1]}, {name[2]})"


def _replicas(row: Row) -> str | None:
    scores = row.replica_scores()
    if scores is None:
        return None
    return (f"{_label(row)}: mean {statistics.fmean(scores):.2f}, s_opt {statistics.stdev(scores):.2f} "
            f"({len(scores)} runs)")


@dataclasses.dataclass
class RowComparison(Comparison):
    """A :class:`~smtlib.report.claims.Comparison` of two rows of Table 2 for a finding: ``column`` is
    the feature group (two: A's / B's), ``label`` the claim "A better than B", ``test`` the approximate randomization
    test (``ar_p`` and ``runs`` unused), ``key`` the pair of rows; ``replicas`` the replicas' mean and s_opt."""

    finding: str = ""
    replicas: str = "-"


class _Tests:
    """Approximate randomization between rows, each unordered pair once (the same p both ways)."""

    def __init__(self, rows: Sequence[Row], trials: int, seed: int):
        self.rows, self.trials, self.seed = list(rows), trials, seed
        self.done: dict[tuple[int, int], tuple[float, float]] = {}

    def test(self, a: Row, b: Row) -> RunTest:
        i, j = self.rows.index(a), self.rows.index(b)
        key = (min(i, j), max(i, j))
        if key not in self.done:
            self.done[key] = approximate_randomization(self.rows[key[0]].stats, self.rows[key[1]].stats,
                                                       trials=self.trials, seed=self.seed)
        diff, p = self.done[key]
        diff = diff if i < j else -diff
        return RunTest("approximate randomization", diff, None, len(a.stats), p if diff > 0 else 1.0,
                       p if diff < 0 else 1.0)


def _resolve(name: RowName, rows: Sequence[Row]) -> list[Row]:
    return [r for r in rows if row_name(r) == name]


def _best_other(a: Row, rows: Sequence[Row]) -> list[Row]:
    others = [r for r in rows if r is not a]
    return [max(others, key=lambda r: r.first["test_bleu"])] if others else []


def _group(a: str, b: str) -> str:
    return a if a == b else f"{a} / {b}"


def _paper_best_other(a: RowName, paper: dict[RowName, dict]) -> RowName:
    return max((n for n in paper if n != a), key=lambda n: float(paper[n]["test"]))


def compare(rows: Sequence[Row], *, trials: int, seed: int, alpha: float = ALPHA) -> list[RowComparison]:
    """Every comparison of :data:`FINDINGS` on ``rows`` (:func:`smtlib.report.simianer.load_rows`), in
    their order, decided with Holm's correction over all of them (a pair of rows compared twice counts
    once)."""
    paper = paper_rows()
    tests = _Tests(rows, trials, seed)
    out: list[RowComparison] = []
    for finding in FINDINGS:
        for a_name, b_name in finding.pairs:
            paper_b = _paper_best_other(a_name, paper) if b_name == BEST_OTHER else b_name
            pa, pb = paper[a_name], paper[paper_b]
            paper_text = (f"{_paper_name(pa)} {pa['test']} vs {_paper_name(pb)} {pb['test']} "
                          f"({float(pa['test']) - float(pb['test']):+.2f})")
            their_verdict = paper_verdict(pa, pb, paper, finding.paper_text)
            claim = f"{_name_label(a_name)} better than " + (
                BEST_OTHER if b_name == BEST_OTHER else _name_label(b_name))
            ours_a = _resolve(a_name, rows)
            ours_b = [b for a in ours_a for b in _best_other(a, rows)] if b_name == BEST_OTHER else \
                _resolve(b_name, rows)
            if not ours_a or not ours_b:
                missing = [_name_label(n) for n, found in ((a_name, ours_a), (b_name, ours_b)) if not found]
                group = _group(a_name[2], a_name[2] if b_name == BEST_OTHER else b_name[2])
                out.append(RowComparison(group, claim, f"not in the runs: {', '.join(missing)}", None, None,
                                         None, paper_text, their_verdict, finding=finding.key))
                continue
            for a in ours_a:
                for b in ours_b:
                    test = tests.test(a, b)
                    label = claim if b_name != BEST_OTHER else f"{claim}: {_label(b)}"
                    ours = (f"{_label(a)} {a.first['test_bleu']:.2f} vs {_label(b)} {b.first['test_bleu']:.2f} "
                            f"({test.estimate:+.2f})")
                    replicas = "; ".join(filter(None, (_replicas(a), _replicas(b)))) or "-"
                    key = tuple(sorted((rows.index(a), rows.index(b))))
                    out.append(RowComparison(_group(a.group, b.group), label, ours, test, None, None, paper_text,
                                             their_verdict, key=key, finding=finding.key, replicas=replicas))
    decide(out, alpha)
    return out


def decide(comparisons: Sequence[RowComparison], alpha: float = ALPHA) -> None:
    """Holm's correction over the distinct pairs of rows of ``comparisons`` (:func:`decide_family`), then
    each comparison's verdict: holds / does not hold / not significant / not run."""
    distinct: dict[tuple, RowComparison] = {}
    for c in comparisons:
        if c.test is not None:
            distinct.setdefault(c.key, c)
    decide_family(list(distinct.values()), alpha)
    for c in comparisons:
        c.p_holm = distinct[c.key].p_holm if c.test is not None else None
        c.verdict = verdict(c.test, c.p_holm, alpha)
        if c.verdict == INCONCLUSIVE:
            c.verdict = NOT_SIGNIFICANT


def aggregate(verdicts: Sequence[str], unit: str) -> str:
    """A finding's comparisons in one phrase: "holds in 3, not significant in 2 of 5 groups (1 not run)"."""
    run = [v for v in verdicts if v != NOT_RUN]
    missing = len(verdicts) - len(run)
    if not run:
        return NOT_RUN
    if len(verdicts) == 1:
        return run[0]
    counts = ", ".join(f"{v} in {run.count(v)}" for v in (HOLDS, NOT_SIGNIFICANT, FAILS) if run.count(v))
    return f"{counts} of {len(run)} {unit}" + (f" ({missing} not run)" if missing else "")


def feature_share(rows: Sequence[Row]) -> str:
    """Finding (c)'s share of the features IterSelSGD keeps (its chosen epoch's non-zero features over
    the features in the shards), ours beside the paper's (its Algorithm 4's over Algorithm 3's)."""
    paper = paper_rows()
    kept = paper[_train("iterselsgd", "id-ng-shape")]["n_features"]
    full = paper[_train("itermixsgd", "id-ng-shape")]["n_features"]
    text = f"the paper: {kept} of {full} ({100 * paper_count(kept) / paper_count(full):.1f}%)"
    ours = _resolve(_train("iterselsgd", "id-ng-shape"), rows)
    if not ours:
        return f"features kept: not run; {text}"
    run = ours[0].first
    shards = run.get("features_in_shards")
    share = f"{shards:,} in the shards ({100 * run['n_features'] / shards:.1f}%)" if shards else "the shards' unknown"
    return f"features kept at the chosen epoch {run['chosen_epoch']}: {run['n_features']:,} of {share}; {text}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _p(p: float | None, alpha: float) -> str:
    return "-" if p is None else format_p(p, alpha)


def _ours(row: Row | None) -> list[str]:
    """Our cells of a Table 2 row: the non-zero weights of the chosen epoch (IterSelSGD: of the features the
    shards' weights have then, what its selection keeps from), devtest and test BLEU (with replicas: their
    mean and s_opt too), the chosen epoch (the batch tuner: its kept iteration)."""
    if row is None:
        return ["not run", "", "", ""]
    first = row.first
    features = f"{first['n_features']:,}"
    if row.algorithm == "iterselsgd" and first.get("features_in_shards"):
        features += f" of {first['features_in_shards']:,}"
    test = f"{first['test_bleu']:.2f}"
    scores = row.replica_scores()
    if scores is not None:
        test += f" (mean {statistics.fmean(scores):.2f}, s_opt {statistics.stdev(scores):.2f}, {len(scores)} runs)"
    return [features, f"{first['devtest_bleu']:.2f}", test, str(first["chosen_epoch"])]


def format_beside_paper(rows: Sequence[Row]) -> str:
    """The section of ``results/simianer_findings.md`` that sets our Table 2 beside the paper's, row by row
    in the paper's order (:data:`PAPER_TSV`); a row of ours the paper does not have comes last."""
    paper = paper_rows()
    ours = {row_name(r): r for r in rows}
    text = ("\n## Table 2 beside the paper's\n\n"
            "The paper tunes news-commentary German-English (141 training shards) and reports BLEU on its "
            "test-nc; ours is Multi30k German-English (29 shards), BLEU on test2017 (lowercased, as the run "
            "scores it). The levels are not comparable; the differences between rows are, and the findings "
            "above test them. Features: the paper's count of the row's weights; ours, the non-zero weights of "
            "the chosen epoch's vector (IterSelSGD: of the features the shards' weights have at that epoch, "
            "which its selection keeps from). The paper's MIRA row is the mean of 100 runs "
            "of cdec's MIRA; ours is the batch tuner's row (its first run, and the mean over its runs); its "
            "epoch is the iteration it kept, chosen on dev as the tables' protocol chooses, where the "
            "perceptron's rows choose their epoch on devtest.\n\n"
            "| algorithm | tuning data | features | paper: #features | paper: devtest | paper: test | paper: epoch | "
            "ours: #features | ours: devtest | ours: test | ours: epoch |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n")
    names = list(paper) + [name for name in ours if name not in paper]
    for name in names:
        p = paper.get(name)
        label = "MIRA / batch tuner" if name[0] == "batch" else f"{name[0]}"
        if p is not None and p["algorithm"] != "MIRA":
            label = f"Alg. {p['algorithm']}: {name[0]}"
        cells = ([p["n_features"], p["devtest"], p["test"], p["epoch"] or "-"] if p is not None
                 else ["not in the paper", "", "", ""])
        text += "| " + " | ".join([label, name[1], name[2], *cells, *_ours(ours.get(name))]) + " |\n"
    return text


def format_findings(comparisons: Sequence[RowComparison], rows: Sequence[Row], *, trials: int, seed: int,
                    signature: str, alpha: float = ALPHA) -> str:
    """``results/simianer_findings.md``: what is compared and how, one table row per comparison, one
    line per finding, our Table 2 beside the paper's (:func:`format_beside_paper`), where the paper says it."""
    m = len({c.key for c in comparisons if c.test is not None})
    text = ("# Simianer, Riezler & Dyer (2012), Table 2: the findings decided on our runs\n\n"
            "Each comparison is a claim \"A better than B\" on test BLEU between two rows of the table, decided by "
            f"the paper's test (§5.1): approximate randomization on the test set's sentence statistics of the "
            f"rows' runs (the first directory of each name), {trials} shuffles, seed {seed} (`{signature}`), with "
            f"Holm's correction over the {m} distinct pairs of rows of this file (one table, one family): "
            f"**holds** (A significantly better, Holm p < {alpha:g}), **does not hold** (A significantly worse), "
            "**not significant** (neither); **not run** where a row is not in our runs. Where a row has replicas, "
            "their mean and s_opt are shown beside it; the decision stays with the table's runs. The paper's "
            "verdict is that of its Table 2's marks where they test the two rows, else of its text or its point "
            "estimates (flagged).\n\n"
            "| # | finding | group | claim | ours (test BLEU, A - B) | replicas | p | Holm p | verdict | paper | "
            "paper's verdict |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
    for i, c in enumerate(comparisons, 1):
        text += (f"| {i} | ({c.finding}) | {c.column} | {_cell(c.label)} | {_cell(c.ours)} | {_cell(c.replicas)} | "
                 f"{_p(c.test and c.test.p, alpha)} | {_p(c.p_holm, alpha)} | **{c.verdict}** | {_cell(c.paper)} | "
                 f"{c.paper_verdict} |\n")
    text += "\n## Findings\n\n"
    for f in FINDINGS:
        mine = [c for c in comparisons if c.finding == f.key]
        paper = aggregate([c.paper_verdict.split(" (")[0] for c in mine], f.unit)
        text += f"- ({f.key}) {f.text}: **{aggregate([c.verdict for c in mine], f.unit)}**; the paper: {paper}"
        if f.key == "c":
            text += f"; {feature_share(rows)}"
        text += (f" ({f.reading})" if f.reading else "") + ".\n"
    text += format_beside_paper(rows)
    text += "\n## Where the paper says it\n\n"
    text += "".join(f"- ({f.key}) {f.quote}\n" for f in FINDINGS)
    return text


def write_findings(runs: list[str], test_refs: str, out: str, *, trials: int, seed: int, alpha: float = ALPHA,
                   settings: BleuSettings | None = None, baselines: list[str] = (), devtest: str = "test2016",
                   test: str = "test2017") -> list[RowComparison]:
    """Decide :data:`FINDINGS` on the runs and write the Markdown to ``out`` (atomically); the arguments are
    :func:`smtlib.report.simianer.write_table2`'s. Returns the comparisons.

    Raises
    ------
    InputError
        As :func:`smtlib.report.simianer.load_rows`.
    """
    settings = settings or BleuSettings(tokenize="none")
    rows = load_rows(runs, test_refs, settings=settings, baselines=baselines, devtest=devtest, test=test)
    comparisons = compare(rows, trials=trials, seed=seed, alpha=alpha)
    signature = f"{BleuSignature(settings, 1)}|ar:{trials}|ties:count|seed:{seed}"
    text = format_findings(comparisons, rows, trials=trials, seed=seed, signature=signature, alpha=alpha)
    with atomic_output(out) as fh:
        fh.write(text)
    return comparisons
