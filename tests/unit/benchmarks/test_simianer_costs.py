"""``benchmarks/simianer_costs.py``: the plan's estimate against the run's costs, rule by rule."""

from __future__ import annotations

import sys

from tests.support.repo import REPO

sys.path.insert(0, str(REPO / "benchmarks"))

import simianer_costs  # noqa: E402
from simianer_plan import CPU_S  # noqa: E402


def _costs(path, rows):
    header = "rule\tjobs\tcpu_hours\twall_hours\tmax_rss_mb\tmax_wall_s\tmax_cpu_s\tcpu_hours_extrapolated"
    lines = [header] + [f"{rule}\t{n}\t0\t0\t0\t0\t0\t{hours}" for rule, n, hours in rows]
    lines.append("total\t999\t0\t0\t0\t0\t0\t99")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_rule_is_projected_at_its_mean_over_every_directory_times_the_planned_jobs(tmp_path):
    # two directories: a lost one (3 passes, 0.03 h) and this one (5 passes, 0.02 h); the plan has 10,
    # 4 on dev and 6 on the training set, and the two phrase rules are one in costs.tsv
    measured = simianer_costs.read_costs([
        _costs(tmp_path / "a.tsv", [("simianer_shard_pass", 3, 0.03), ("simianer_fold_phrases", 2, 0.01)]),
        _costs(tmp_path / "b.tsv", [("simianer_shard_pass", 5, 0.02)]),
    ])
    assert measured == {"simianer_shard_pass": (8, 0.05), "simianer_fold_phrases": (2, 0.01)}
    plan = (["simianer_shard_pass[dev]"] * 4 + ["simianer_shard_pass[train]"] * 6
            + ["simianer_fold_phrases0", "simianer_fold_phrases1", "simianer_zero"])
    rows = {r["rule"]: r for r in simianer_costs.compare(plan, measured)}
    sp = rows["simianer_shard_pass"]
    assert sp["planned"] == 10 and sp["ran"] == 8
    assert abs(sp["mean_s"] - 0.05 * 3600 / 8) < 1e-9
    assert abs(sp["projected_h"] - 0.05 / 8 * 10) < 1e-12
    estimate = (4 * CPU_S["simianer_shard_pass[dev]"][0] + 6 * CPU_S["simianer_shard_pass[train]"][0]) / 3600
    assert abs(sp["estimate_h"] - estimate) < 1e-12
    assert rows["simianer_fold_phrases"]["planned"] == 2
    zero = rows["simianer_zero"]  # no benchmark file: the estimate on both sides
    assert zero["mean_s"] is None and zero["projected_h"] == zero["estimate_h"]
    table = "\n".join(simianer_costs.render(list(rows.values()), {}))
    assert "| simianer_shard_pass | 10 | 8 |" in table and "!" in table.split("simianer_shard_pass")[1].split("\n")[0]
    assert "(no benchmark file)" in table


def _job(rule, tdata=None):
    from simianer_plan import Job

    job = Job(rule, None)
    if tdata:
        job.wildcards = {"tdata": tdata}
    return job


def test_measured_costs_keep_the_estimate_s_split_between_variants():
    # the shard pass measured at twice its assumed mean: both variants twice their own estimate; a rule
    # without a benchmark file keeps its estimate
    keys = ["simianer_shard_pass[dev]", "simianer_shard_pass[train]", "simianer_zero"]
    dev, train, zero = (CPU_S[k][0] for k in keys)
    rows = simianer_costs.compare(keys[:2] + keys[2:], {"simianer_shard_pass": (2, 2 * (dev + train) / 3600)})
    got = simianer_costs.measured_costs(keys, rows)
    assert [round(c, 9) for c in got] == [round(2 * dev, 9), round(2 * train, 9), zero]


def test_the_times_are_the_schedules_of_the_plan_at_the_given_costs():
    # a -> b, and c alone: the critical path is a + b, one core does all three one after the other,
    # two cores run c beside the chain
    from simianer_plan import link

    jobs = [_job("x"), _job("y"), _job("z")]
    jobs[0].outputs, jobs[1].inputs = ["f"], ["f"]
    link(jobs)
    rows = dict(simianer_costs.times(jobs, [3600.0, 7200.0, 1800.0], nodes=2, cores=1, latencies=[360.0]))
    assert rows["total CPU"] == 3.5
    assert rows["one 1-core machine (list-scheduled)"] == 3.5
    assert rows["critical path, unlimited nodes"] == 3.0
    assert rows["2 nodes of 1 cores"] == 3.0
    assert rows["unlimited nodes, 360 s of latency per cluster job"] == 3.2  # two cluster jobs on the chain
    table = "\n".join(simianer_costs.render_times(list(rows.items()), [(k, 2 * v) for k, v in rows.items()]))
    assert "| critical path, unlimited nodes | 3.00 | 6.00 | 2.00 |" in table
