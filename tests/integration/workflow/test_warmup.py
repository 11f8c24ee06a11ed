"""``smtlib warmup`` (smtlib/warmup.py): numba's kernels compiled once, before a workflow's first jobs.

* The warm-up's commands are the workflow's own and run (one feature set, one tuner of each kind);
  a failing step names itself.
* The stamp: missing means cold (``--check`` exits 1), present means the warm-up is skipped; it
  changes with the sources.
* The workflow's ``onstart`` runs it (and ``SMTLIB_WARMUP=0`` does not).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from smtlib import warmup
from smtlib.errors import InputError
from tests.support.workflow_runner import snakemake


def test_the_warm_up_runs_the_workflows_commands_for_each_kind_of_tuner(tmp_path):
    lines = []
    warmup.warm_up(tmp_path, log=lines.append, feature_sets=["small"], methods=["kbmira", "lbmira", "mira"])
    assert (tmp_path / "small" / "kbmira.it2.weights").exists()  # a second k-best iteration
    assert (tmp_path / "small" / "lbmira.it2.weights").exists()  # lattices with the paths of it1
    assert (tmp_path / "small" / "mira.it2.weights").exists()  # online shards and their mix, twice
    assert any("small system compiled" in line for line in lines)


def test_dense_only_tuners_are_left_out_on_the_big_system(tmp_path):
    """MERT takes no sparse features (the workflow's not_applicable); the warm-up must not stop there."""
    warmup.warm_up(tmp_path, log=lambda line: None, feature_sets=["big"], methods=["mert", "kbmira"])
    assert (tmp_path / "big" / "kbmira.it1.weights").exists()
    assert not (tmp_path / "big" / "mert.it1.weights").exists()


def test_a_failing_step_names_its_command(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(warmup, "CORPUS_PAIRS", 0)  # an empty training corpus: `train prepare` refuses it
    with pytest.raises(InputError, match=r"warm-up step `smtlib train prepare .*` failed \(2\)"):
        warmup.ensure_warm(log=lambda line: None)
    assert not warmup.stamp_path().exists()


def test_the_stamp_makes_the_warm_up_a_no_op(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    check = subprocess.run([sys.executable, "-m", "smtlib", "warmup", "--check"], capture_output=True, text=True,
                           env=env)
    assert (check.returncode, check.stdout.strip()) == (1, "cold")
    warmup.stamp_path().write_text("warmed\n", encoding="utf-8")
    monkeypatch.setattr(warmup, "warm_up", lambda *a, **k: pytest.fail("warmed up although the stamp exists"))
    lines = []
    assert warmup.ensure_warm(log=lines.append) is False
    assert "warm-up skipped" in lines[0]
    check = subprocess.run([sys.executable, "-m", "smtlib", "warmup", "--check"], capture_output=True, text=True,
                           env=env)
    assert (check.returncode, check.stdout.strip()) == (0, "warm")


def test_the_stamp_follows_the_sources(tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "kernel.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(warmup, "PACKAGE", package)
    before = warmup.source_key()
    assert warmup.source_key() == before
    (package / "kernel.py").write_text("x = 22\n", encoding="utf-8")
    assert warmup.source_key() != before


@pytest.mark.data
def test_the_workflow_warms_up_before_its_first_job(tmp_path, data_dir, monkeypatch):
    """onstart calls `smtlib warmup` (here warm already: the stamp is made first, so nothing compiles)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    warmup.stamp_path().write_text("warmed\n", encoding="utf-8")
    target = "results/data/fr-en/dev.src"
    monkeypatch.setenv("SMTLIB_WARMUP", "1")
    r = snakemake(tmp_path / "on", "--cores", "1", target, data_dir=data_dir, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "warm-up skipped" in r.stdout + r.stderr
    monkeypatch.setenv("SMTLIB_WARMUP", "0")
    r = snakemake(tmp_path / "off", "--cores", "1", target, data_dir=data_dir, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "warm-up" not in r.stdout + r.stderr
