"""Simianer, Riezler & Dyer (2012)'s findings on Table 2's runs (smtlib.report.simianer_findings) and
`smtlib sgd findings`.

The paper's table is checked against the paper's text and its verdicts against the marks read by
hand; the comparisons run on small synthetic run directories whose test outputs are perfect (GOOD),
half wrong (MID) or all wrong (BAD), so that every outcome is known in advance; the p-values
against the table's (`smtlib sgd table`) and Holm's correction computed here.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import sacrebleu

from smtlib.bleu.replicas import holm
from smtlib.bleu.stats import BleuSettings
from smtlib.errors import InputError
from smtlib.report.claims import FAILS, HOLDS, NOT_RUN
from smtlib.report.simianer import load_rows, write_table2
from smtlib.report.simianer_findings import (
    BATCH,
    FINDINGS,
    NOT_SIGNIFICANT,
    aggregate,
    compare,
    paper_count,
    paper_rows,
    paper_verdict,
    write_findings,
)
from tests.support.repo import REPO

PAPER = REPO.parent / "shared" / "papers" / "004_ebf16191bd92046f.txt"
NOUNS = ["man", "dog", "girl", "boy", "woman", "cat", "child", "horse", "bird", "player"]
PLACES = ["street", "park", "beach", "field", "kitchen", "garden"]
REFS = [f"a {n} walks in the {p} today ." for n in NOUNS for p in PLACES]  # 60 distinct sentences
GOOD = REFS
MID = REFS[:30] + ["a man ."] * 30
BAD = ["a man ."] * 60
TRIALS = 999  # the smallest p is 1 / 1000: with Holm over up to 20 pairs still below 0.05
SETTINGS = BleuSettings(tokenize="none")


def _bleu(hyps):
    return sacrebleu.corpus_bleu(hyps, [REFS], tokenize="none").score


def _sgd_run(directory, hyps, *, nonzero=12, in_shards=12):
    """A run directory of rules/simianer.smk: test.out, its BLEU, the chosen epoch (2 of 2)."""
    directory.mkdir(parents=True)
    (directory / "test.out").write_text("\n".join(hyps) + "\n")
    (directory / "test.bleu.json").write_text(json.dumps({"score": _bleu(hyps)}))
    (directory / "chosen.json").write_text(json.dumps({"chosen_epoch": 2, "epochs": [
        {"epoch": e, "devtest_bleu": 20.0 + e, "nonzero_features": nonzero, "features_in_shards": in_shards}
        for e in (1, 2)]}))
    return directory


def _batch_run(directory, hyps):
    """A run of the tables' workflow: summary.json, best.weights, the test output."""
    directory.mkdir(parents=True)
    (directory / "test.test2017.1best").write_text("\n".join(hyps) + "\n")
    (directory / "summary.json").write_text(json.dumps({"best_iteration": 4, "tests": {"test2016": 25.0,
                                                                                         "test2017": _bleu(hyps)}}))
    (directory / "best.weights").write_text("LM0 0.5\nWordPenalty -0.2\n")
    return directory


@pytest.fixture
def refs(tmp_path):
    path = tmp_path / "test.ref"
    path.write_text("\n".join(REFS) + "\n")
    return path


def _runs(tmp_path, outputs: dict[tuple[str, str, str], list], **features):
    """``--run`` items of ``outputs``: (algorithm, data, group) -> its directories' test outputs (the
    first is the table's run); ``features[algorithm]`` = (nonzero, in shards) of its chosen epoch."""
    items = []
    for (algorithm, data, group), replicas in outputs.items():
        for split, hyps in enumerate(replicas, 1):
            d = _sgd_run(tmp_path / group / f"{algorithm}-{data}" / f"split{split}", hyps,
                         **dict(zip(("nonzero", "in_shards"), features.get(algorithm, (12, 12)))))
            items.append(f"{algorithm}:{data}:{group}={d}")
    return items


def _decide(tmp_path, refs, outputs, baselines=(), trials=TRIALS, seed=3, **features):
    rows = load_rows(_runs(tmp_path, outputs, **features), str(refs), settings=SETTINGS, baselines=list(baselines))
    return compare(rows, trials=trials, seed=seed)


def _of(comparisons, finding):
    return [c for c in comparisons if c.finding == finding]


# ------------------------------------------------------------------ the paper
def test_the_transcribed_table_is_the_papers():
    rows = paper_rows()
    assert len(rows) == 1 + 5 + 5 + 5 + 3
    mira = rows[BATCH]
    assert (mira["test"], mira["devtest"], mira["n_features"]) == ("27.10", "-", "12")
    assert "100 runs" in mira["note"] and "C = 0.01" in mira["note"] and "15 passes" in mira["note"]
    assert paper_count(rows[("iterselsgd", "train", "id-ng-shape")]["n_features"]) == 100_000
    assert paper_count(rows[("itermixsgd", "train", "id-ng-shape")]["n_features"]) == 4_700_000
    assert paper_count(rows[("sgd", "dev", "shape")]["n_features"]) == 51
    if not PAPER.exists():
        pytest.skip("the paper's text is not here")
    lines = PAPER.read_text(encoding="utf-8").splitlines()
    superscript = str.maketrans("1234", "¹²³⁴")
    for r in rows.values():
        devtest = "–" if r["devtest"] == "-" else r["devtest"] + (f" @{r['epoch']}" if r["epoch"] else "")
        cells = f"| {r['features']} | {r['n_features']} | {devtest} | {r['test']}"
        line = next(x for x in lines if cells in x and (r["algorithm"] == "MIRA") == x.startswith("| MIRA"))
        printed = line.split(cells)[1].split("|")[0].strip()
        if r["dagger"] and r["marks"]:
            assert printed == f"^{{†{r['marks']}}}", (r, printed)
        elif r["dagger"]:
            assert printed == "[†]", (r, printed)
        else:
            assert printed == r["marks"].translate(superscript), (r, printed)


def _in_text(part: str, text: str) -> bool:
    """``part`` in ``text``, or its two halves in order (a footnote or table between them, as at a page
    break)."""
    if part in text:
        return True
    words = part.split(" ")
    for cut in range(3, len(words) - 2):
        head, tail = " ".join(words[:cut]), " ".join(words[cut:])
        if head in text and tail in text[text.index(head) + len(head):]:
            return True
    return False


def test_the_quotes_are_the_papers():
    if not PAPER.exists():
        pytest.skip("the paper's text is not here")
    text = re.sub(r"\s+", " ", PAPER.read_text(encoding="utf-8").replace("*", "").replace("ℓ_2", "ℓ2"))
    for f in FINDINGS:
        quoted = re.findall(r'"([^"]+)"', f.quote)
        assert quoted, f.key
        for part in (p for q in quoted for p in q.split(" ... ")):
            assert _in_text(part.strip(" ."), text), (f.key, part)


def test_the_papers_verdicts_are_its_marks():
    """Read off Table 2 by hand: the raised numbers (same features), the dagger (against the algorithm's
    best group), §5.2's text, else point estimates."""
    rows = paper_rows()

    def verdict(a, b, text=""):
        return paper_verdict(rows[a], rows[b], rows, text)

    groups = ("default", "id", "ng", "shape", "id-ng-shape")
    # (b) Algorithm 3 against Algorithm 1: 27.94 vs 28.0 unmarked; id, ng and all marked 1; shape 28.31 unmarked
    assert [verdict(("itermixsgd", "train", g), ("sgd", "dev", g)).split(" (")[0] for g in groups] == [
        NOT_SIGNIFICANT, HOLDS, HOLDS, NOT_SIGNIFICANT, HOLDS]
    # (d) Algorithm 3 against Algorithm 2: default unmarked, the templates marked 2
    assert [verdict(("itermixsgd", "train", g), ("mixsgd", "train", g)).split(" (")[0] for g in groups] == [
        NOT_SIGNIFICANT, HOLDS, HOLDS, HOLDS, HOLDS]
    # (a) default against all templates, Algorithm 1's best group: no dagger on default
    assert verdict(("sgd", "dev", "default"), ("sgd", "dev", "id-ng-shape")) == f"{NOT_SIGNIFICANT} (Table 2's dagger)"
    assert verdict(("sgd", "dev", "default"), ("sgd", "dev", "id")).startswith(f"{HOLDS} (point estimates")
    assert verdict(("sgd", "dev", "default"), ("sgd", "dev", "shape")).startswith(f"{FAILS} (point estimates")
    # (c) 28.81 against Algorithm 3's 28.55, marked 3; (e) 28.0 against MIRA's mean, untested
    assert verdict(("iterselsgd", "train", "id-ng-shape"), ("itermixsgd", "train", "id-ng-shape")) == \
        f"{HOLDS} (Table 2's raised numbers)"
    assert verdict(("mixsgd", "train", "id"), ("mixsgd", "train", "ng")) == f"{FAILS} (Table 2's dagger)"
    assert verdict(("sgd", "dev", "default"), BATCH).startswith(f"{HOLDS} (point estimates")
    assert verdict(("iterselsgd", "train", "id-ng-shape"), ("sgd", "dev", "default"), HOLDS) == \
        f"{HOLDS} (§5.2's text)"


# ------------------------------------------------------------------ each finding's outcomes
@pytest.mark.parametrize("a, b, expected", [(GOOD, BAD, HOLDS), (BAD, GOOD, FAILS), (MID, MID, NOT_SIGNIFICANT)])
@pytest.mark.parametrize("finding, a_name, b_name", [
    ("b", ("itermixsgd", "train", "ng"), ("sgd", "dev", "ng")),
    ("d", ("itermixsgd", "train", "shape"), ("mixsgd", "train", "shape")),
    ("f", ("iterselsgd", "train", "id-ng-shape"), ("sgd", "dev", "default")),
    ("a", ("sgd", "dev", "default"), ("sgd", "dev", "id")),  # "default better than +id"
])
def test_each_finding_holds_fails_or_is_not_significant(tmp_path, refs, finding, a_name, b_name, a, b, expected):
    comparisons = _decide(tmp_path, refs, {a_name: [a], b_name: [b]})
    mine = [c for c in _of(comparisons, finding) if c.verdict != NOT_RUN]
    assert len(mine) == 1 and mine[0].verdict == expected
    assert mine[0].test.estimate == pytest.approx(_bleu(a) - _bleu(b))


@pytest.mark.parametrize("a, b, expected", [(GOOD, BAD, HOLDS), (BAD, GOOD, FAILS), (MID, MID, NOT_SIGNIFICANT)])
def test_the_perceptron_against_the_batch_tuner(tmp_path, refs, a, b, expected):
    batch = [f"kbmira:dev:default={_batch_run(tmp_path / 'kb', b)}"]
    (e,) = _of(_decide(tmp_path, refs, {("sgd", "dev", "default"): [a]}, baselines=batch), "e")
    assert e.verdict == expected and "kbmira (dev, default)" in e.ours


@pytest.mark.parametrize("other, expected", [(MID, HOLDS), (GOOD, NOT_SIGNIFICANT)])
def test_iterselsgd_against_the_best_other_row(tmp_path, refs, other, expected):
    outputs = {("iterselsgd", "train", "id-ng-shape"): [GOOD], ("sgd", "dev", "default"): [BAD],
               ("itermixsgd", "train", "ng"): [other]}
    (c,) = _of(_decide(tmp_path, refs, outputs), "c")
    assert c.verdict == expected and "itermixsgd (train, ng)" in c.label


def test_iterselsgd_below_another_row_does_not_hold(tmp_path, refs):
    outputs = {("iterselsgd", "train", "id-ng-shape"): [MID], ("mixsgd", "train", "id"): [GOOD]}
    (c,) = _of(_decide(tmp_path, refs, outputs), "c")
    assert c.verdict == FAILS and "mixsgd (train, id)" in c.label


# ------------------------------------------------------------------ not run, Holm, replicas
def test_comparisons_of_missing_rows_are_not_run(tmp_path, refs):
    comparisons = _decide(tmp_path, refs, {("sgd", "dev", "default"): [GOOD], ("sgd", "dev", "ng"): [BAD]})
    assert len(comparisons) == sum(len(f.pairs) for f in FINDINGS)  # every comparison listed
    run = [c for c in comparisons if c.verdict != NOT_RUN]
    assert [(c.finding, c.verdict) for c in run] == [("a", HOLDS)]
    missing = next(c for c in comparisons if c.finding == "e")
    assert missing.test is None and missing.p_holm is None and "not in the runs" in missing.ours
    assert "batch tuner" in missing.ours
    (a,) = [f for f in FINDINGS if f.key == "a"]
    assert aggregate([c.verdict for c in _of(comparisons, "a")], a.unit) == "holds in 1 of 1 groups (3 not run)"


def test_holm_over_the_distinct_pairs_decides(tmp_path, refs):
    """Holm's adjustment over every distinct pair of rows of the file; a pair two findings compare counts
    once. With 99 shuffles the smallest p is 0.01: significant alone, not after Holm over 9 pairs."""
    outputs = {("sgd", "dev", g): [BAD] for g in ("default", "id", "ng", "shape", "id-ng-shape")}
    outputs |= {("itermixsgd", "train", g): [GOOD] for g in ("default", "id", "ng", "shape", "id-ng-shape")}
    outputs[("iterselsgd", "train", "id-ng-shape")] = [GOOD]
    comparisons = _decide(tmp_path, refs, outputs, trials=99)
    tested = [c for c in comparisons if c.test is not None]
    distinct = {c.key: c.test.p for c in tested}
    # (c)'s best other row and (f)'s Algorithm 1 default: different pairs; (a) 4, (b) 5, (c) 1, (f) 1
    assert len(tested) == 11 and len(distinct) == 11
    adjusted = dict(zip(distinct, holm(list(distinct.values()))))
    assert all(c.p_holm == adjusted[c.key] for c in tested)
    b = _of(comparisons, "b")
    assert all(c.test.p < 0.05 for c in b) and all(c.verdict == NOT_SIGNIFICANT for c in b)
    assert min(c.p_holm for c in b) >= 0.05
    # a pair two findings share: (c) and (f) when the best other row is Algorithm 1's default
    shared = _decide(tmp_path / "shared", refs, {("iterselsgd", "train", "id-ng-shape"): [GOOD],
                                                 ("sgd", "dev", "default"): [BAD]})
    c, f = _of(shared, "c")[0], _of(shared, "f")[0]
    assert c.key == f.key and c.test.p == f.test.p and c.p_holm == f.p_holm == c.test.p  # a family of one


def test_replicas_are_shown_and_the_table_run_decides(tmp_path, refs):
    replicas = [GOOD, MID, REFS[:45] + ["a man ."] * 15]
    comparisons = _decide(tmp_path, refs, {("itermixsgd", "train", "default"): replicas,
                                           ("sgd", "dev", "default"): [MID]})
    (b,) = [c for c in _of(comparisons, "b") if c.test is not None]
    assert b.verdict == HOLDS and b.test.estimate == pytest.approx(_bleu(GOOD) - _bleu(MID))
    scores = [_bleu(h) for h in replicas]
    assert b.replicas == (f"itermixsgd (train, default): mean {np.mean(scores):.2f}, "
                          f"s_opt {np.std(scores, ddof=1):.2f} (3 runs)")


def test_p_values_are_the_tables(tmp_path, refs):
    """One loader and one test: a same-group pair's p is the table's p_values cell."""
    runs = _runs(tmp_path, {("sgd", "dev", "ng"): [MID], ("itermixsgd", "train", "ng"): [REFS[:40] + BAD[40:]]})
    write_table2(runs, str(refs), str(tmp_path / "t.tsv"), trials=500, seed=7, alpha=0.05, settings=SETTINGS)
    header, first, _ = [line.split("\t") for line in (tmp_path / "t.tsv").read_text().splitlines()]
    table_p = json.loads(dict(zip(header, first))["p_values"])["itermixsgd-train"]
    comparisons = write_findings(runs, str(refs), str(tmp_path / "f.md"), trials=500, seed=7, settings=SETTINGS)
    (b,) = [c for c in _of(comparisons, "b") if c.test is not None]
    assert round(b.test.p, 4) == table_p


# ------------------------------------------------------------------ the file and the command
def test_findings_file(tmp_path, refs):
    runs = _runs(tmp_path, {("iterselsgd", "train", "id-ng-shape"): [GOOD], ("sgd", "dev", "default"): [BAD],
                            ("sgd", "dev", "id"): [BAD]}, iterselsgd=(100, 4700))
    out = tmp_path / "findings.md"
    comparisons = write_findings(runs, str(refs), str(out), trials=TRIALS, seed=2, settings=SETTINGS)
    text = out.read_text()
    table = [line for line in text.splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(table) == len(comparisons) == 17
    assert sum("**not run**" in line for line in table) == sum(c.verdict == NOT_RUN for c in comparisons) == 14
    assert "Holm's correction over the 2 distinct pairs" in text  # (c) and (f) compare the same pair
    assert f"{TRIALS} shuffles, seed 2" in text
    findings = {line[3]: line for line in text.splitlines() if line.startswith("- (") and "**" in line}
    assert "**not significant in 1 of 1 groups (3 not run)**" in findings["a"]
    assert "**holds**" in findings["c"] and "100 of 4,700 in the shards (2.1%)" in findings["c"]
    assert "the paper: 100k of 4.7M (2.1%)" in findings["c"]
    assert "**not run**; the paper: holds" in findings["e"]
    assert "(f) IterSelSGD" in text and "§5.2" in text
    # our Table 2 beside the paper's, in the paper's row order: 19 rows, ours where we ran them
    beside = text.split("## Table 2 beside the paper's")[1].split("## Where the paper says it")[0]
    lines = [line for line in beside.splitlines() if line.startswith("| ") and not line.startswith("| algorithm")]
    assert len(lines) == 19 and lines[0].startswith("| MIRA / batch tuner | dev | default | 12 | - | 27.10 |")
    assert f"| Alg. 4: iterselsgd | train | id-ng-shape | 100k | 26.8 | 28.81 | 8 | 100 of 4,700 | 22.00 | " \
        f"{_bleu(GOOD):.2f} | 2 |" in lines
    assert f"| Alg. 1: sgd | dev | id | 137k | 25.53 | 27.6 | - | 12 | 22.00 | {_bleu(BAD):.2f} | 2 |" in lines
    assert sum(line.endswith("| not run |  |  |  |") for line in lines) == 16


def test_the_command_writes_the_file_and_is_deterministic(tmp_path, refs, cli):
    runs = _runs(tmp_path, {("sgd", "dev", "default"): [GOOD], ("sgd", "dev", "shape"): [MID]})
    args = ["sgd", "findings", "--run", *runs, "--test-refs", refs, "--trials", "300", "--seed", "5",
            "--tokenize", "none"]
    for name in ("a.md", "b.md"):
        r = cli(*args, "--out", tmp_path / name)
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "a.md").read_text() == (tmp_path / "b.md").read_text()
    assert "| sgd (dev, default) better than sgd (dev, shape) |" in (tmp_path / "a.md").read_text()


@pytest.mark.parametrize("damage", ["missing", "short", "chosen"])
def test_the_command_refuses_bad_input(tmp_path, refs, cli, damage):
    (run,) = _runs(tmp_path, {("sgd", "dev", "default"): [GOOD]})
    directory = run.split("=", 1)[1]
    if damage == "missing":
        (tmp_path / directory / "test.out").unlink()
    elif damage == "short":
        (tmp_path / directory / "test.out").write_text("\n".join(GOOD[:-1]) + "\n")
    else:
        (tmp_path / directory / "chosen.json").write_text(json.dumps({"chosen_epoch": 3, "epochs": []}))
    r = cli("sgd", "findings", "--run", run, "--test-refs", refs, "--trials", "10", "--tokenize", "none",
            "--out", tmp_path / "f.md")
    assert r.returncode == 2, r.stderr
    assert not (tmp_path / "f.md").exists()
    with pytest.raises(InputError):
        load_rows([run], str(refs), settings=SETTINGS)
