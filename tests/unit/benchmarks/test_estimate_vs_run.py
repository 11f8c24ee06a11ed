"""``benchmarks/estimate_vs_run.py`` on a synthetic workflow directory and a synthetic ``snakemake -n``:
the projection per (rule, method, feature set) worked out by hand."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from tests.support.repo import REPO

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
DRY_RUN = """Building DAG of jobs...
[Fri Nov 27 10:00:00 2026]
rule tune_lattice:
    input: x
    wildcards: pair=fr-en, fs=medium, method=lbmert, setting=default, sample=1, it=2
[Fri Nov 27 10:00:00 2026]
rule tune_lattice:
    wildcards: pair=fr-en, fs=small, method=lbmert, setting=default, sample=0, it=2
[Fri Nov 27 10:00:00 2026]
rule decode_dev:
    wildcards: pair=fr-en, fs=big, method=kbmira, setting=default, sample=0, it=3
[Fri Nov 27 10:00:00 2026]
localrule table:
    wildcards: table=table4
"""


@pytest.fixture(scope="module")
def evr():
    spec = importlib.util.spec_from_file_location("estimate_vs_run", REPO / "benchmarks" / "estimate_vs_run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def bench(root, relative, cpu, wall=None):
    """A benchmark file; without ``wall``, a job of 15 s read at its end (Snakemake's 30th quick
    reading), so that its CPU time needs no extrapolation (a job on several threads)."""
    path = root / "results" / "benchmarks" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{15 if wall is None else wall}\t0:00:01\t100\t0\t0\t0\t0\t0\t1\t{cpu}\n",
                    encoding="utf-8")


def argv_for(tmp_path, dry_run: str, estimate: str) -> list[str]:
    """estimate_vs_run's arguments over ``tmp_path``: a fake snakemake printing ``dry_run`` and an
    estimate file of ``estimate``'s rows (after its header)."""
    fake = tmp_path / "snakemake"
    fake.write_text(f"#!/bin/sh\ncat <<'END'\n{dry_run}END\n", encoding="utf-8")
    fake.chmod(0o755)
    path = tmp_path / "estimate.tsv"
    path.write_text("rule\tcore_hours\n" + estimate, encoding="utf-8")
    return ["estimate_vs_run.py", "--workdir", str(tmp_path), "--snakemake", str(fake), "--estimate", str(path)]


def test_projection_per_method_and_feature_set(evr, tmp_path, capsys, monkeypatch):
    run = "tune/fr-en/{fs}/{m}/{setting}/s0/it{it}/{what}.tsv"
    bench(tmp_path, run.format(fs="medium", m="lbmert", setting="default", it=1, what="tune"), 300)
    bench(tmp_path, run.format(fs="medium", m="lbmert", setting="default", it=2, what="tune"), 330)
    # a loop-check run of another setting: not the table's, left out
    bench(tmp_path, run.format(fs="medium", m="lbmert", setting="x=1", it=1, what="tune"), 9999)
    bench(tmp_path, run.format(fs="medium", m="kbmira", setting="default", it=2, what="decode"), 12)
    bench(tmp_path, "systems/fr-en/align.tsv", 36)
    monkeypatch.setattr(sys, "argv", argv_for(tmp_path, DRY_RUN, "tune_lattice\t0.5\ndecode_dev\t0.01\n"))
    evr.main()
    out = capsys.readouterr().out
    # lb-mert: medium 3 jobs x 315 s (its mean) + small 1 job x 315 s (no small job done: the same
    # method's mean on the other feature set, marked ~) = 1,260 s = 0.35 h, against 0.5
    assert "| tune_lattice | 2 / 4 | 0.17 | 0.35 ~ | 0.50 | 0.70 ! |" in out
    # kb-mira's decodes: big has none done; the method's medium mean, 12 s x 2 jobs = 24 s
    assert "| decode_dev | 1 / 2 | 0.00 | 0.01 ~ | 0.01 | 0.67 ! |" in out
    assert "| systems (not estimated) | 1 / 1 | 0.01 | 0.01 | 0.00 | - |" in out
    assert "| other |" not in out  # the table rule writes no benchmark file: no measured cost
    assert out.rstrip().endswith(f"metric: {(1260 + 24) / 3600 / 0.51:.3f}")


def test_the_unsampled_tails_are_extrapolated_unless_asked_as_recorded(evr, tmp_path, capsys, monkeypatch):
    # a 60 s job: Snakemake's last reading at 45 s saw 240 s of CPU; the tail at that rate is 80 s more
    bench(tmp_path, "tune/fr-en/medium/lbmert/default/s0/it2/tune.tsv", 240, wall=60)
    argv = argv_for(tmp_path, "Nothing to be done.\n", "tune_lattice\t0.1\n")
    monkeypatch.setattr(sys, "argv", argv)
    evr.main()
    out = capsys.readouterr().out
    assert "0.07 core-hours as Snakemake recorded them, 0.09 with the unsampled tails" in out
    assert out.rstrip().endswith(f"metric: {320 / 3600 / 0.1:.3f}")
    monkeypatch.setattr(sys, "argv", [*argv, "--as-recorded"])
    evr.main()
    assert capsys.readouterr().out.rstrip().endswith(f"metric: {240 / 3600 / 0.1:.3f}")


def test_an_earlier_run_directorys_costs_count_at_their_rules_mean(evr, tmp_path, capsys, monkeypatch):
    """A lost directory's costs.tsv: its jobs count as finished, each rule at its mean over all of them."""
    bench(tmp_path, "tune/fr-en/big/kbmira/default/s0/it2/decode.tsv", 18)  # 0.005 h
    argv = argv_for(tmp_path, DRY_RUN, "tune_lattice\t0.5\ndecode_dev\t0.01\n")
    earlier = tmp_path / "costs.tsv"
    earlier.write_text("rule\tjobs\tcpu_hours\twall_hours\tmax_rss_mb\tmax_wall_s\tmax_cpu_s\tcpu_hours_extrapolated\n"
                       "decode_dev\t3\t0.03\t0.1\t500\t30\t30\t0.035\n"
                       "tune_lattice\t1\t0.1\t0.1\t500\t30\t30\t0.12\n"
                       "total\t4\t0.12\t0.2\t500\t30\t30\t0.15\n", encoding="utf-8")
    monkeypatch.setattr(sys, "argv", [*argv, "--earlier-costs", str(earlier)])
    evr.main()
    out = capsys.readouterr().out
    # decode_dev: 4 jobs ran (0.005 + 0.035 h), the table plans 2 (this directory's and the dry run's):
    # 0.04 / 4 x 2 = 0.02; jobs beyond the table's are scaled out
    assert "| decode_dev | 4 / 2 | 0.04 | 0.02 | 0.01 | 2.00 ! |" in out
    # tune_lattice: only the earlier directory ran it, 0.12 h for 1 job; the dry run plans 2: 0.24
    assert "| tune_lattice | 1 / 2 | 0.12 | 0.24 | 0.50 | 0.48 ! |" in out
    assert out.rstrip().endswith(f"metric: {0.26 / 0.51:.3f}")


def test_a_method_not_yet_run_takes_its_cost_from_a_like_pair(evr, tmp_path, capsys, monkeypatch):
    """lb-mira not yet run in this pair: with --like, the other pair's lb-mira mean scaled by the rule's
    ratio between the pairs (lb-mert: 315 s here, 120 s there), not lb-mert's cost."""
    run = "tune/{pair}/{fs}/{m}/default/s0/it{it}/tune.tsv"
    bench(tmp_path, run.format(pair="fr-en", fs="medium", m="lbmert", it=1), 300)
    bench(tmp_path, run.format(pair="fr-en", fs="medium", m="lbmert", it=2), 330)
    bench(tmp_path, run.format(pair="en-fr", fs="medium", m="lbmert", it=1), 120)
    bench(tmp_path, run.format(pair="en-fr", fs="big", m="lbmira", it=1), 8)
    bench(tmp_path, run.format(pair="en-fr", fs="big", m="lbmira", it=2), 12)
    dry_run = "".join(f"rule tune_lattice:\n    wildcards: pair=fr-en, fs={fs}, method={m}, setting=default, "
                      f"sample=0, it=3\n" for fs, m in (("medium", "lbmira"), ("small", "lbmert")))
    argv = argv_for(tmp_path, dry_run, "tune_lattice\t0.5\n")
    monkeypatch.setattr(sys, "argv", argv)
    evr.main()
    # alone: lb-mira at the rule's mean, 315 s; lb-mert small at lb-mert medium's: 630 + 315 + 315 s
    assert "| tune_lattice | 2 / 4 | 0.17 | 0.35 ~ | 0.50 | 0.70 ! |" in capsys.readouterr().out
    monkeypatch.setattr(sys, "argv", [*argv, "--like", "en-fr"])
    evr.main()
    # like en-fr: lb-mira 10 s x 315 / 120 = 26.25 s: 630 + 26.25 + 315 = 971.25 s
    assert capsys.readouterr().out.rstrip().endswith(f"metric: {971.25 / 3600 / 0.5:.3f}")


def test_a_group_nothing_measured_is_named_and_left_out_not_dropped(evr, tmp_path, capsys, monkeypatch):
    """ja-en before its first lattice run, like fr-en, whose lb-mert ran elsewhere: lb-mert's steps
    count as planned, are named, and the total says it leaves them out."""
    run = "tune/{pair}/{fs}/{m}/default/s0/it{it}/{what}.tsv"
    bench(tmp_path, run.format(pair="fr-en", fs="big", m="lbmira", it=1, what="tune"), 10)
    bench(tmp_path, run.format(pair="ja-en", fs="small", m="mira", it=2, what="decode"), 5)
    dry_run = "".join(f"rule {rule}:\n    wildcards: pair=ja-en, fs=small, method={m}, setting=default, "
                      f"sample=0, it=3\n" for rule, m in (("tune_lattice", "lbmert"), ("tune_lattice", "lbmira"),
                                                          ("mira_mix", "mira")))
    monkeypatch.setattr(sys, "argv", [*argv_for(tmp_path, dry_run, "tune_lattice\t0.5\ndecode_dev\t0.01\n"),
                                      "--pair", "ja-en", "--like", "fr-en"])
    evr.main()
    out = capsys.readouterr().out
    # lb-mira from fr-en (10 s; no shared cell: the median ratio of the tuning cells shared, none: 1)
    assert "| tune_lattice | 0 / 2 | 0.00 | 0.00 ~ + ? | 0.50 | 0.01 ! |" in out
    assert "| **total** | | | **0.00** + ? | **0.51** | 0.01 + ? |" in out
    assert "Not costed" in out and "tune_lattice lbmert/small (1 jobs)" in out
    assert "mira_mix" not in out  # no benchmark file in any pair: left out, as before


def test_like_pairs_prefer_one_that_shares_a_cell_of_the_rule(evr, tmp_path, capsys, monkeypatch):
    """Two like pairs: kb-mira's decodes come from the pair whose decodes are measured beside this
    pair's (en-fr), not from the first named (fr-en), whose scale would be the median over other rules."""
    run = "tune/{pair}/{fs}/{m}/default/s0/it{it}/{what}.tsv"
    bench(tmp_path, run.format(pair="ja-en", fs="small", m="mira", it=2, what="decode"), 4)
    bench(tmp_path, run.format(pair="en-fr", fs="small", m="mira", it=2, what="decode"), 8)
    bench(tmp_path, run.format(pair="en-fr", fs="small", m="kbmira", it=2, what="decode"), 10)
    bench(tmp_path, run.format(pair="fr-en", fs="small", m="kbmira", it=2, what="decode"), 99)
    dry_run = ("rule decode_dev:\n    wildcards: pair=ja-en, fs=small, method=kbmira, setting=default, "
               "sample=0, it=3\n")
    argv = argv_for(tmp_path, dry_run, "decode_dev\t0.01\n")
    monkeypatch.setattr(sys, "argv", [*argv, "--pair", "ja-en", "--like", "fr-en", "en-fr"])
    evr.main()
    # mira's 4 s here + kb-mira at en-fr's 10 s x (4 / 8) = 9 s
    assert capsys.readouterr().out.rstrip().endswith(f"metric: {9 / 3600 / 0.01:.3f}")
