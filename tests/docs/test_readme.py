"""The README is a short front page: at most 160 lines, and exactly two command blocks, the install
and main job and the test command that .ci/run runs."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MAIN_JOB = 'pip install -e ".[workflow,system]" && snakemake --cores 8 --config data_dir=../shared/data -- results/table4.tsv'
TESTS = 'pip install -e ".[test]" && python -m pytest -q -n auto'


def test_the_readme_is_short():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 160, len(lines)


def test_the_readme_has_exactly_the_two_commands():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    assert [b.strip() for b in blocks] == [MAIN_JOB, TESTS]
    assert not re.search(r"^(    |\t)\S", text, flags=re.M), "an indented code block"


def test_ci_runs_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest -q -n auto -p no:cacheprovider" in ci
    assert ci.index("python -m pytest") < ci.index("python -m sphinx")


def test_the_table4_excerpt_is_the_published_table_and_the_papers():
    """Every number of the README's Table 4 excerpt is read again from docs/results/table4/table4.tsv
    and the paper's transcription, so republishing the table cannot leave the README stale."""
    ours = {}
    for line in (REPO / "docs/results/table4/table4.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        f = line.split("\t")
        ours[f[0]] = {"medium": (f[6], f[7], f[8]), "big": (f[10], f[11], f[12])}
    paper = {}
    for line in (REPO / "smtlib/report/cherry_foster_2012.tsv").read_text(encoding="utf-8").splitlines():
        f = line.split("\t")
        if f[0] == "table4":
            paper[(f[2], f[3])] = (f[5], f[6])
    text = (REPO / "README.md").read_text(encoding="utf-8")
    rows = [line.strip("|").split("|") for line in text.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip() in ours]
    assert [r[0].strip() for r in rows] == list(ours)

    def cell(fs, method):
        test, sd, sig = ours[method][fs]
        if test == "n/a":
            return ["n/a", "n/a", "n/a"]
        p = paper[(method, fs)]
        return [f"{test} ({sd})", sig, f"{p[0]} ({p[1]})"]

    for row in rows:
        method = row[0].strip()
        assert [c.strip() for c in row[1:]] == cell("medium", method) + cell("big", method), method


#: the README's Simianer excerpt: its first cell -> our row (algorithm, tuning data, features) and the
#: paper's (algorithm number or MIRA, feature group as smtlib/report/simianer_2012.tsv prints it)
SIMIANER_ROWS = {
    "Alg. 1 on dev, dense": (("sgd", "dev", "default"), ("1", "default")),
    "Alg. 1 on dev, all templates": (("sgd", "dev", "id-ng-shape"), ("1", "+id,ng,shape")),
    "Alg. 3 (IterMixSGD) on train, dense": (("itermixsgd", "train", "default"), ("3", "default")),
    "Alg. 3 (IterMixSGD) on train, all templates": (("itermixsgd", "train", "id-ng-shape"), ("3", "+id,ng,shape")),
    "Alg. 4 (IterSelSGD) on train, all templates": (("iterselsgd", "train", "id-ng-shape"), ("4", "+id,ng,shape")),
    "batch kb-mira on dev, dense (paper: MIRA)": (("kbmira", "dev", "default"), ("MIRA", "default")),
}


def test_the_simianer_excerpt_is_the_published_table_and_the_papers():
    """Every number of the README's Simianer Table 2 excerpt is read again from the published
    docs/results/simianer_table2/simianer_table2.tsv and the paper's transcription."""
    lines = (REPO / "docs/results/simianer_table2/simianer_table2.tsv").read_text(encoding="utf-8").splitlines()
    head = lines[0].split("\t")
    ours = {}
    for line in lines[1:]:
        row = dict(zip(head, line.split("\t")))
        ours[(row["algorithm"], row["tuning_data"], row["features"])] = row
    paper = {}
    for line in (REPO / "smtlib/report/simianer_2012.tsv").read_text(encoding="utf-8").splitlines():
        f = line.split("\t")
        if not line.startswith("#") and f[0] != "algorithm":
            paper[(f[0], f[2])] = f[5]
    text = (REPO / "README.md").read_text(encoding="utf-8")
    rows = [line.strip("|").split("|") for line in text.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip() in SIMIANER_ROWS]
    assert [r[0].strip() for r in rows] == list(SIMIANER_ROWS)
    for row in rows:
        key, paper_key = SIMIANER_ROWS[row[0].strip()]
        run = ours[key]
        cell = run["test_bleu"]
        if int(run["replicas"]) > 1:
            cell += f" (mean {run['test_mean']}, s_opt {run['test_s_opt']}, {run['replicas']} runs)"
        assert [c.strip() for c in row[1:]] == [cell, paper[paper_key]], row[0]
