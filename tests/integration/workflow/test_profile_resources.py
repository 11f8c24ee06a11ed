"""The SLURM profile's per-rule time and memory cover what the published Table 4 run measured.

profiles/slurm/config.yaml sizes each rule's job from docs/results/table4/costs.tsv (the run's
benchmark files, republished as the run goes on), the costs kept from earlier run directories of the
same table (docs/results/table4/part*/costs.tsv: a machine lost mid-run) and every other published
table's or figure's (docs/results/*/costs.tsv: Figure 1's sweep, Tables 5 and 6 as they run); each
rule's largest peak counts. A cluster kills a job that outgrows its request, so
when a later iteration's larger pools raise a rule's peak memory or CPU time, this test fails until the
profile is raised with it.
"""

import csv

import pytest
import yaml

from tests.support.repo import REPO

PROFILE = REPO / "profiles" / "slurm" / "config.yaml"
PUBLISHED = REPO / "docs" / "results"
COSTS = sorted([*PUBLISHED.glob("*/costs.tsv"), *PUBLISHED.glob("*/part*/costs.tsv")])

# margins below the profile's own rule (2x memory, 3x time): the least that still leaves room for a
# loaded node; a job at its measured peak must not sit at the limit
MEMORY_MARGIN = 1.5
TIME_MARGIN = 2.0


def _costs():
    """Rule -> its largest peak memory and CPU seconds over every published costs file."""
    peaks = {}
    for path in COSTS:
        with open(path, encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                if row["rule"] == "total":
                    continue
                peak = peaks.setdefault(row["rule"], {"max_rss_mb": 0.0, "max_cpu_s": 0.0})
                peak["max_rss_mb"] = max(peak["max_rss_mb"], float(row["max_rss_mb"]))
                peak["max_cpu_s"] = max(peak["max_cpu_s"], float(row.get("max_cpu_s") or 0))
    return peaks


def _profile_entry(resources, rule):
    """The profile's entry of a rule of costs.tsv (train_phrases runs as train_phrases0 and 1)."""
    return [resources[name] for name in resources if name == rule or name.rstrip("01") == rule]


@pytest.mark.parametrize("rule", sorted(_costs()))
def test_the_profile_covers_the_measured_peak(rule):
    measured = _costs()[rule]
    profile = yaml.safe_load(PROFILE.read_text())
    entries = _profile_entry(profile["set-resources"], rule)
    assert entries, f"{rule} ran in the Table 4 run but profiles/slurm sets no resources for it"
    for entry in entries:
        peak_mb = float(measured["max_rss_mb"])
        assert entry["mem_mb"] >= MEMORY_MARGIN * peak_mb, (rule, entry, peak_mb)
        assert entry["mem_mb"] <= profile["resources"]["mem_mb"], "a job cannot ask more than a group may"
        cpu_s = float(measured.get("max_cpu_s") or 0)
        assert entry["runtime"] * 60 >= TIME_MARGIN * cpu_s, (rule, entry, cpu_s)


def test_costs_carry_the_cpu_column():
    """Without max_cpu_s the time check above checks nothing: the published costs must have it."""
    assert COSTS
    for path in COSTS:
        with open(path, encoding="utf-8") as fh:
            assert "max_cpu_s" in fh.readline().rstrip("\n").split("\t"), path
