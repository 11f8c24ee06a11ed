"""The published Simianer Table 2 (docs/results/simianer_table2/) rebuilds from its records alone.

The records keep each run's chosen epoch, test BLEU and test output, and the batch row's runs; the
table's significance tests and the findings read nothing else but the test references, prepared from
../shared/data as the workflow's data step prepares them (``smtlib.data.fetch``). Both commands are given the runs as the workflow's ``simianer_table`` and
``simianer_findings`` rules give them: every row's first split in the table's order, then the
replicas' later splits, split by split.
"""

import gzip
import shutil
import subprocess
import sys

import pytest

from smtlib.data.fetch import fetch_pair
from tests.support.repo import REPO

PUBLISHED = REPO / "docs" / "results" / "simianer_table2"

pytestmark = [pytest.mark.data, pytest.mark.slow]


def _gunzip(src, dst) -> None:
    with gzip.open(src, "rb") as f, open(dst, "wb") as out:
        shutil.copyfileobj(f, out)


def _run_options(work) -> tuple[list[str], list[str]]:
    """The ``--run`` and ``--baseline`` arguments over copies of the records under ``work``."""
    lines = (PUBLISHED / "simianer_table2.tsv").read_text(encoding="utf-8").splitlines()
    head = lines[0].split("\t")
    rows = [dict(zip(head, line.split("\t"))) for line in lines[1:]]
    sharded = [r for r in rows if r["algorithm"] != "kbmira"]
    runs = []
    for split in range(1, max(int(r["replicas"]) for r in sharded) + 1):
        for r in sharded:
            if int(r["replicas"]) < split:
                continue
            rel = f"{r['features']}/{r['algorithm']}-{r['tuning_data']}/split{split}"
            record, run = PUBLISHED / "runs" / rel, work / "runs" / rel
            run.mkdir(parents=True)
            for name in ("chosen.json", "test.bleu.json"):
                shutil.copy(record / name, run / name)
            _gunzip(record / "test.out.gz", run / "test.out")
            runs.append(f"{r['algorithm']}:{r['tuning_data']}:{r['features']}={run}")
    (batch,) = [r for r in rows if r["algorithm"] == "kbmira"]
    baselines = []
    for record in sorted((PUBLISHED / "runs" / "baseline" / "kbmira").iterdir()):
        run = work / "baseline" / record.name
        run.mkdir(parents=True)
        for name in ("summary.json", "best.weights"):
            shutil.copy(record / name, run / name)
        _gunzip(record / "test.test2017.1best.gz", run / "test.test2017.1best")
        baselines.append(f"kbmira:{batch['tuning_data']}:{batch['features']}={run}")
    assert len(baselines) == int(batch["replicas"])
    return runs, baselines


def test_the_published_table_and_findings_rebuild_from_the_records(tmp_path, shared_data):
    fetch_pair("de-en", tmp_path / "data", data_dir=shared_data, download=False, parts=["test.test2017"])
    refs = tmp_path / "data" / "test.test2017.ref"
    runs, baselines = _run_options(tmp_path)
    common = ["--run", *runs, "--devtest-name", "test2016", "--test-name", "test2017",
              "--baseline", *baselines, "--test-refs", str(refs), "--trials", "10000", "--seed", "1",
              "--tokenize", "none", "--lowercase"]
    for action, name in (("table", "simianer_table2.tsv"), ("findings", "simianer_findings.md")):
        out = tmp_path / name
        subprocess.run([sys.executable, "-m", "smtlib", "sgd", action, *common, "--out", str(out)],
                       check=True, cwd=tmp_path, capture_output=True)
        assert out.read_bytes() == (PUBLISHED / name).read_bytes(), name
