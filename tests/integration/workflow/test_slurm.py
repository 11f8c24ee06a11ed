"""Cluster execution (issue 27): `--profile profiles/slurm` on a real SLURM cluster.

* The profile as shipped: no conda, no placeholder account or partition (SBATCH_ACCOUNT /
  SBATCH_PARTITION when set), squeue for the status (no accounting daemon needed), CPUs from the
  rules' threads, every group bounded per node, every per-iteration rule in a group, each rule's
  runtime and memory set; profiles/default (merged into every run) sets none of the profile's keys.
* On a single-node cluster that `.ci/slurm-local.sh` stands up here (Debian's slurm-wlm and munge), only
  when asked with SMTLIB_TEST_SLURM=1 (it installs packages and starts daemons; `.ci/run` sets it), and
  skipped where it cannot run (not root, no apt-get, no executor plugin): the replay target runs through
  the profile to completion, every job through sbatch (squeue saw each one complete, its SLURM log is
  there), and its results equal a local run's byte for byte; meanwhile a job that SLURM kills at its
  1-minute time limit fails its run with SLURM's state in the message within minutes, and so does a job
  that can never start (more CPUs than the node has: PENDING with reason PartitionConfig), which the
  workflow's watch (smtlib.slurm_watch) cancels with the reason. Every daemon the
  script started is stopped at the end, also when the test fails.
"""

from __future__ import annotations

import filecmp
import os
import re
import subprocess
import sys
import threading
import time

import pytest
import yaml

from tests.support.workflow_runner import BIN, REPO, snakemake, write_config

PROFILE = REPO / "profiles" / "slurm"
SCRIPT = REPO / ".ci" / "slurm-local.sh"
# the plugin's polling, shortened for a test (its defaults: 40 s before the first check, then 10 s more
# per check without news); successful jobs' SLURM logs kept as the evidence that they ran through sbatch
FAST = ["--slurm-init-seconds-before-status-checks", "2", "--seconds-between-status-checks", "2",
        "--slurm-keep-successful-logs"]
REPLAY = {"replay": {"methods": ["kbmira"], "iterations": 2}}  # the smallest real target with a group
TARGET = "results/replay/table.tsv"


def read_profile(name: str, environ: dict[str, str] | None = None) -> dict:
    """A profile as Snakemake reads it (YTE-templated; ``environ`` replaces os.environ meanwhile)."""
    import yte

    saved = dict(os.environ)
    try:
        if environ is not None:
            os.environ.clear()
            os.environ.update(environ)
        with open(REPO / "profiles" / name / "config.yaml", encoding="utf-8") as f:
            return yte.process_yaml(f, require_use_yte=True)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def per_iteration_rules() -> set[str]:
    """Rules whose outputs are per iteration or epoch of a loop (`it{it}`, `ep{epoch}` in an output)."""
    names = set()
    for smk in sorted((REPO / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=rule \w+:)", smk.read_text(encoding="utf-8")):
            m = re.match(r"rule (\w+):", block)
            out = re.search(r"\n    output:\n(.*?)(?=\n    \w+:|\Z)", block, re.S)
            if m and out and re.search(r"it\{it\}|ep\{epoch\}", out.group(1)):
                names.add(m.group(1))
    return names


# ------------------------------------------------------------------ the profile as shipped
def test_slurm_profile_runs_as_shipped():
    p = read_profile("slurm", environ={})
    assert p["executor"] == "slurm"
    assert "software-deployment-method" not in p and "sdm" not in p  # conda only with --sdm conda
    assert p["slurm-status-command"] == "squeue"  # sacct hangs the run without slurmdbd
    resources = p["default-resources"]
    assert not {"slurm_account", "slurm_partition", "cpus_per_task"} & set(resources)  # cluster defaults, threads
    assert all("cpus_per_task" not in r for r in p["set-resources"].values())
    # every group is bounded per submission: CPUs and memory
    assert isinstance(p["cores"], int) and p["resources"]["mem_mb"] >= max(r["mem_mb"] for r in p["set-resources"].values())
    assert set(p["group-components"]) == set(p["groups"].values())
    assert p.get("retries", 0) == 0  # a job SLURM kills fails the run at once


def test_slurm_profile_takes_account_and_partition_from_the_environment():
    p = read_profile("slurm", environ={"SBATCH_ACCOUNT": "proj1", "SBATCH_PARTITION": "short"})
    assert p["default-resources"]["slurm_account"] == "proj1"
    assert p["default-resources"]["slurm_partition"] == "short"


def test_every_loop_rule_is_grouped_and_every_measured_rule_has_its_resources():
    p = read_profile("slurm", environ={})
    loop_rules = per_iteration_rules()
    # Simianer's epochs are 29 parallel shard passes of minutes each: separate jobs on purpose
    simianer = {"simianer_shard_pass", "simianer_mix", "simianer_devtest"}
    assert {"decode_dev", "tune", "decode_dev_lattice", "tune_lattice", "mira_shard", "mira_mix",
            "replay_tune"} | simianer <= loop_rules
    assert loop_rules - simianer <= set(p["groups"]), loop_rules - simianer - set(p["groups"])
    assert loop_rules <= set(p["set-resources"]), loop_rules - set(p["set-resources"])
    # a rule of the tuning loop runs in its run's one "loop" job
    assert {p["groups"][r] for r in ("decode_dev", "tune", "decode_dev_lattice", "tune_lattice", "mira_shard",
                                     "mira_mix", "select_best")} == {"loop"}
    # runtime and memory for every rule that has a benchmark file in docs/results/table4's costs
    table4 = REPO / "docs/results/table4"
    for costs in [table4 / "costs.tsv", *table4.glob("part*/costs.tsv")]:
        if not costs.exists():
            continue
        measured = {ln.split("\t")[0] for ln in costs.read_text().splitlines()[1:]} - {"total"}
        named = {r.rstrip("01") if r.startswith("train_phrases") else r for r in p["set-resources"]}
        assert measured <= named, measured - named
    assert all({"runtime", "mem_mb"} <= set(r) for r in p["set-resources"].values())


def test_default_profile_sets_no_key_of_the_cluster_profile():
    """profiles/default is the workflow profile: Snakemake merges it into a `--profile profiles/slurm` run and
    its keys win. It holds only the workflow's policy, so nothing of the cluster profile is overridden."""
    default = yaml.safe_load((REPO / "profiles/default/config.yaml").read_text(encoding="utf-8"))
    slurm = read_profile("slurm", environ={})
    assert not set(default) & set(slurm), set(default) & set(slurm)
    assert not {"cores", "resources", "set-threads", "latency-wait", "default-resources"} & set(default)


# ------------------------------------------------------------------ a real cluster
@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A single-node SLURM cluster for this module: the environment that points the clients at it."""
    if os.environ.get("SMTLIB_TEST_SLURM") != "1":
        pytest.skip("installs Debian's slurm-wlm and munge and starts their daemons: set SMTLIB_TEST_SLURM=1 to run it")
    pytest.importorskip("snakemake_executor_plugin_slurm", reason="pip install -e '.[cluster]'")
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("the local SLURM cluster needs root (slurmd)")
    state = tmp_path_factory.mktemp("slurm")
    started = time.time()
    try:
        r = subprocess.run(["bash", str(SCRIPT), "start", str(state)], capture_output=True, text=True, timeout=900)
        if r.returncode == 3:
            pytest.skip(f"no SLURM cluster here: {r.stderr.strip().splitlines()[-1]}")
        assert r.returncode == 0, r.stdout + r.stderr
        print(f"\n{r.stderr.strip()} (the script took {time.time() - started:.0f} s)")
        yield {"SLURM_CONF": str(state / "slurm.conf")}
    finally:
        r = subprocess.run(["bash", str(SCRIPT), "stop", str(state)], capture_output=True, text=True, timeout=120)
        print(r.stderr.strip())
        for name in ("munged", "slurmctld", "slurmd"):
            assert not (state / f"{name}.pid").exists(), f"{name} was not stopped"


def squeue_states(env: dict[str, str]) -> dict[str, str]:
    """SLURM job id -> state of every job the cluster still remembers (MinJobAge: an hour, .ci/slurm-local.sh)."""
    r = subprocess.run(["squeue", "--states=all", "-h", "-o", "%i %T"], capture_output=True, text=True,
                       env={**os.environ, **env}, timeout=30)
    assert r.returncode == 0, r.stderr
    return dict(line.split() for line in r.stdout.splitlines() if line.strip())


def files_under(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def start_run_killed_at_its_time_limit(work, env: dict[str, str]) -> subprocess.Popen:
    """A one-rule workflow whose job sleeps past its 1-minute time limit, run through the profile."""
    work.mkdir()
    (work / "Snakefile").write_text(
        'rule slow:\n    output:\n        "slow.txt",\n    resources:\n        runtime=1,\n'
        '    shell:\n        "sleep 600 && touch {output}"\n', encoding="utf-8")
    return subprocess.Popen([os.path.join(BIN, "snakemake"), "-s", str(work / "Snakefile"), "-d", str(work),
                             "--profile", str(PROFILE), *FAST, "slow.txt"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), **env})


class Finished:
    """A run's output and the moment it ended, collected by a thread while the test does other work
    (so that its wall time is its own, not the time until the test looks)."""

    def __init__(self, proc: subprocess.Popen, started: float):
        self.proc, self.started, self.output, self.wall = proc, started, "", None
        self.thread = threading.Thread(target=self._collect, daemon=True)
        self.thread.start()

    def _collect(self):
        self.output, _ = self.proc.communicate()
        self.wall = time.time() - self.started

    def wait(self, timeout: float) -> "Finished":
        self.thread.join(timeout)
        if self.thread.is_alive():
            self.proc.kill()
            self.thread.join(30)
        return self


@pytest.mark.slow
@pytest.mark.data
def test_workflow_through_slurm(slurm, tmp_path, data_dir):
    """Three runs side by side on one cluster (one test, so that `pytest -n` gives them to one worker):
    a job that SLURM kills at its 1-minute time limit fails its run with SLURM's state within minutes; a
    job that can never start fails its run with the reason within minutes;
    the replay target runs through the profile to completion and equals a local run."""
    killed = Finished(start_run_killed_at_its_time_limit(tmp_path / "killed", slurm), time.time())
    cfg = write_config(tmp_path / "replay.yaml", REPLAY)
    # a job that asks for more CPUs than any node has: PENDING (PartitionConfig) forever without the watch
    never = Finished(snakemake(tmp_path / "never", "--profile", str(PROFILE), *FAST,
                               "--set-resources=replay_data:cpus_per_task=64", TARGET, configfile=cfg, data_dir=data_dir,
                               popen=True, env={**slurm, "SMTLIB_SLURM_WATCH_SECONDS": "3"}), time.time())
    try:
        local, cluster = tmp_path / "local", tmp_path / "cluster"
        r = snakemake(local, "--cores", "2", TARGET, configfile=cfg, data_dir=data_dir)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        started = time.time()
        r = snakemake(cluster, "--profile", str(PROFILE), *FAST, TARGET, configfile=cfg, data_dir=data_dir,
                      env=slurm, timeout=900)
        wall = time.time() - started
    finally:
        killed.wait(600)
        never.wait(600)
    killed_out, killed_wall, never_out, never_wall = killed.output, killed.wall, never.output, never.wall
    states = squeue_states(slurm)

    # the job killed at its time limit: the run failed, naming SLURM's state, within minutes
    assert killed.proc.returncode != 0, killed_out[-3000:]
    (job,) = re.findall(r"has been submitted with SLURM jobid (\d+)", killed_out)
    assert f"SLURM-job '{job}' failed, SLURM status is: 'TIMEOUT'" in killed_out, killed_out[-3000:]
    assert states[job] == "TIMEOUT" and not (tmp_path / "killed/slow.txt").exists()
    assert killed_wall < 300, killed_wall

    # the job that can never start: cancelled by the workflow's watch, with the reason, within minutes
    assert never.proc.returncode != 0, never_out[-3000:]
    (never_job,) = re.findall(r"has been submitted with SLURM jobid (\d+)", never_out)
    assert f"SLURM job {never_job} (replay_data) can never start: squeue gives reason PartitionConfig" in never_out
    assert f"SLURM-job '{never_job}' failed, SLURM status is: 'CANCELLED'" in never_out, never_out[-3000:]
    assert states[never_job] == "CANCELLED" and never_wall < 300, never_wall

    # the replay: every job through sbatch, seen by squeue to complete, its SLURM log kept
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    submitted = re.findall(r"has been submitted with SLURM jobid (\d+)", out)
    # replay_data, replay_init, the replay group (pool, tune and rerank of every iteration), replay_table
    assert len(submitted) == 4, out[-5000:]
    assert all(states.get(j) == "COMPLETED" for j in submitted), (submitted, states)
    logs = sorted((cluster / ".snakemake/slurm_logs").rglob("*.log"))
    assert sorted(p.stem for p in logs) == sorted(submitted)
    assert any(p.parent.name.startswith("group_replay") for p in logs), logs
    # every result file but the benchmark files (timings) is the local run's, byte for byte
    results = [name for name in files_under(local / "results") if not name.startswith("benchmarks/")]
    assert results == [name for name in files_under(cluster / "results") if not name.startswith("benchmarks/")]
    assert any(name.endswith("weights") for name in results) and "replay/table.tsv" in results
    _, mismatch, errors = filecmp.cmpfiles(local / "results", cluster / "results", results, shallow=False)
    assert not mismatch and not errors, mismatch + errors
    print(f"\na 1-minute job killed by SLURM (job {job}): its run failed after {killed_wall:.0f} s with state TIMEOUT"
          f"\na job asking for 64 CPUs (job {never_job}): cancelled as never starting, its run failed after {never_wall:.0f} s"
          f"\nreplay through SLURM: {len(submitted)} sbatch jobs ({', '.join(submitted)}), all COMPLETED in squeue; "
          f"wall {wall:.0f} s; {len(results)} result files identical to the local run's")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-s", "-q"]))
