"""Hopkins & May (2011)'s stability experiment through `snakemake` (rules/stability.smk), at the tiny size.

* A dry run plans the seed-only replicas: one run per method and seed on the full dev set, its
  optimizer seed 1000 N + it, PRO with Psi = 0.1 there only, and nothing of the tables' plan changes.
* The target `stability` end to end on config/tiny.yaml (fr-en, Medium, kb-mert, PRO and kb-mira,
  2 seeds, 2 iterations): the files' structure, every test BLEU of a curve recomputed with sacrebleu
  from the iteration's 1-best output, the SDs and the F-test recomputed from the curves, and the
  replica whose seed is tuning.seed equal byte for byte to the table's full-dev-set run (the replicas
  differ from it in the seed only).

Skipped when ../shared/data is absent (the data_dir fixture).
"""

from __future__ import annotations

import csv
import re
import statistics

import pytest

from tests.support.workflow_runner import REPO, jobs_of, snakemake

TINY = REPO / "config/tiny.yaml"


def test_dry_run_plans_one_replica_per_method_and_seed(tmp_path, data_dir):
    r = snakemake(tmp_path, "-n", "-p", "stability", configfile=TINY, data_dir=data_dir, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    tunes = jobs_of(r.stdout, "tune_first") + jobs_of(r.stdout, "tune")
    runs = {re.search(r"results/tune/fr-en/medium/(\w+)/(seed=\d)/s0/it\d/weights", j["output"]).groups()
            for j in tunes}
    assert runs == {(m, f"seed={s}") for m in ("mert", "pro", "kbmira") for s in (1, 2)}
    commands = [ln for ln in r.stdout.splitlines() if "smtlib tune " in ln]
    for line in commands:
        seed = int(re.search(r"/seed=(\d)/s0/", line).group(1))
        it = int(re.search(r"--out \S+/it(\d)/weights", line).group(1))
        assert f"--seed {1000 * seed + it} " in line, line
        assert ("--set psi=0.1" in line) == (" tune pro " in line), line
        assert "/dev/s0.ref" in line  # the full dev set
    # the test sets decoded with the weights of iterations 2 and 3 (1: the initial weights', shared)
    decodes = jobs_of(r.stdout, "decode_test_iteration")
    assert len(decodes) == 6 * 2 * 2
    # the tables' plan does not name a replica
    r = snakemake(tmp_path, "-n", "-p", "results/table4_extended.tsv", configfile=TINY, data_dir=data_dir,
                  timeout=300)
    assert r.returncode == 0 and "seed=" not in r.stdout and "decode_test_iteration" not in r.stdout


def _tsv(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


@pytest.mark.slow
def test_tiny_stability_end_to_end(tiny_table4_run):
    table_run = "results/tune/fr-en/medium/kbmira/default/s0"  # one of Table 4's runs
    work = tiny_table4_run.check()  # conftest.py: `stability` is one of its targets
    out = work / "results/stability"
    assert sorted(p.name for p in out.iterdir()) == ["fr-en.md", "fr-en.png", "fr-en.tsv"]
    replicas = _tsv(out / "fr-en.tsv")
    assert [(row["method"], row["setting"]) for row in replicas] == [
        (m, f"seed={s}") for m in ("mert", "pro", "kbmira") for s in (1, 2)]
    # each replica's row is its test curve's: recompute from the curve files
    curves = {}
    for row in replicas:
        run = work / f"results/tune/fr-en/medium/{row['method']}/{row['setting']}/s0"
        curve = _tsv(run / "test_curve.tsv")
        curves[(row["method"], row["setting"])] = curve
        assert [int(c["iteration"]) for c in curve] == [0, 1, 2]
        test = [float(c["test_bleu"]) for c in curve]
        assert float(row["final_test"]) == pytest.approx(test[-1], abs=1e-4)
        assert float(row["descent"]) == pytest.approx(sum(max(0.0, a - b) for a, b in zip(test, test[1:])), abs=2e-4)
        kept = next(c for c in curve if c["best"] == "1")
        assert int(row["kept_iteration"]) == int(kept["iteration"])
        # the dev column is the run's learning curve (select_best)
        dev = _tsv(run / "curve.tsv")
        assert [c["dev_bleu"] for c in dev] == [c["dev_bleu"] for c in curve]
    # a test BLEU of the curve is the BLEU of that iteration's output, by sacrebleu
    import sacrebleu

    run = work / "results/tune/fr-en/medium/pro/seed=2/s0"
    per_set = []
    for t in ("test2016", "test2017"):
        hyps = (run / f"it3/test.{t}.1best").read_text(encoding="utf-8").splitlines()
        refs = (work / f"results/data/fr-en/test.{t}.ref").read_text(encoding="utf-8").splitlines()
        per_set.append(sacrebleu.corpus_bleu(hyps, [refs], tokenize="none", lowercase=True).score)
    last = curves[("pro", "seed=2")][-1]
    assert float(last["test_test2016"]) == pytest.approx(per_set[0], abs=1e-4)
    assert float(last["test_bleu"]) == pytest.approx(statistics.fmean(per_set), abs=1e-4)
    # the findings: each method's SD of the final Test, and the F-test of PRO's against kb-mert's
    from scipy import stats

    finals = {m: [float(c[-1]["test_bleu"]) for (mm, _), c in curves.items() if mm == m]
              for m in ("mert", "pro", "kbmira")}
    md = (out / "fr-en.md").read_text(encoding="utf-8")
    for method, name in (("mert", "kb-mert"), ("pro", "pro"), ("kbmira", "kb-mira")):
        row = f"| medium | {name} | 2 | {statistics.fmean(finals[method]):.2f} | {statistics.stdev(finals[method]):.2f} |"
        assert row in md, (row, md)
    ratio = statistics.variance(finals["pro"]) / statistics.variance(finals["mert"])
    p = min(1.0, 2 * min(stats.f.cdf(ratio, 1, 1), stats.f.sf(ratio, 1, 1)))
    claim = next(ln for ln in md.splitlines() if ln.startswith("| 1 | PRO's final test BLEU varies less"))
    assert f"| {p:.4f} |" in claim or (p < 0.0001 and "<0.0001" in claim), (p, claim)
    assert claim.count("**") == 2 and re.search(r"\*\*(holds|does not hold|inconclusive)\*\*", claim)
    assert "SD 0.05 vs 0.13 (5 runs each)" in md  # the paper's numbers beside ours
    # seed-only: the replica at tuning.seed (1) is the table's full-dev-set run, step for step
    for it in (1, 2):
        replica = (work / f"results/tune/fr-en/medium/kbmira/seed=1/s0/it{it}/weights").read_bytes()
        assert replica == (work / f"{table_run}/it{it}/weights").read_bytes()
    other = (work / "results/tune/fr-en/medium/kbmira/seed=2/s0/it2/weights").read_bytes()
    assert other != (work / f"{table_run}/it2/weights").read_bytes()
