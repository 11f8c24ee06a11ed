"""The Snakemake workflow, through the `snakemake` command (never its Python API).

* `snakemake --lint` is clean; the schema and the config checks reject a misspelled method, feature
  set, tokenizer or pair with a clear message.
* Dry runs: the default target's job count equals the product of the configured dimensions
  (counted independently here); the tuning loop's input functions (prev_weights, kbest_pool) and
  their base cases, read back from the dry run's job listing.
* The replay experiment end to end on Moses's recorded n-best lists, and a killed replay run
  restarted to the same table (outputs atomic, incomplete jobs rerun).
* The tiny configuration end to end on ../shared/data (slow): the table's shape, real BLEU scores,
  the significance marks, the orderings next to the paper's and the findings file; and Tables 5 and
  6's pairs (en-fr, ja-en) at the same size.

Every run works in its own temporary directory (``snakemake -s Snakefile -d TMP``) so that the tests
never touch the repository's results/.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time

import pytest
import yaml

from tests.support.workflow_runner import BIN, REPO, SNAKEFILE, job_counts, jobs_of, snakemake, write_config

# ------------------------------------------------------------------ static checks
def test_lint_is_clean(tmp_path, data_dir):
    r = snakemake(tmp_path, "--lint", data_dir=data_dir, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Congratulations, your workflow is in a good condition!" in r.stdout + r.stderr


def test_snakefmt_check_passes():
    """snakefmt (pinned: 0.11.2) leaves the Snakefile and rules/ unchanged."""
    exe = os.path.join(BIN, "snakefmt")
    if not os.path.exists(exe):
        pytest.skip("snakefmt is not installed (pip install snakefmt==0.11.2)")
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    if "0.11.2" not in version:
        pytest.skip(f"snakefmt 0.11.2 is the pinned version, found {version.strip()}")
    r = subprocess.run([exe, "--check", str(SNAKEFILE), str(REPO / "rules")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_config_rejects_a_misspelled_method_feature_set_or_tokenizer(tmp_path):
    """Checked against their owners (the tuner registry, smtlib/system/feature_sets.py, sacrebleu), not copies."""
    cfg = write_config(tmp_path / "bad.yaml", {"methods": ["kbmira", "kbmria"], "feature_sets": ["small", "medum"],
                                               "bleu": {"tokenize": "13b", "lowercase": True}})
    r = snakemake(tmp_path, "-n", configfile=cfg, timeout=120)
    assert r.returncode != 0
    assert "'kbmria' is not a registered tuner (did you mean 'kbmira'?)" in r.stdout + r.stderr
    assert "'medum' is not a feature set (did you mean 'medium'?)" in r.stdout + r.stderr
    assert "'13b' is not a sacrebleu tokenizer (did you mean '13a'?)" in r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr


def test_schema_rejects_a_misspelled_pair_and_unknown_keys(tmp_path):
    r = snakemake(tmp_path, "-n", configfile=write_config(tmp_path / "a.yaml", {"pairs": ["fr-em"]}), timeout=120)
    assert r.returncode != 0 and "'fr-em' is not one of" in r.stdout + r.stderr
    r = snakemake(tmp_path, "-n", configfile=write_config(tmp_path / "b.yaml", {"iteratoins": 3}), timeout=120)
    assert r.returncode != 0 and "'iteratoins' was unexpected" in r.stdout + r.stderr


def test_missing_data_dir_is_a_clear_error(tmp_path):
    r = snakemake(tmp_path, "-n", data_dir=tmp_path / "nowhere", timeout=120)
    assert r.returncode != 0
    assert "data_dir" in r.stdout + r.stderr and "is not a directory" in r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr


def test_a_restore_directory_without_records_is_a_clear_error(tmp_path):
    """A misspelled restore_runs directory would tune every run it was meant to restore: an error."""
    (tmp_path / "empty").mkdir()
    records = tmp_path / "records/small/kbmira/default"
    records.mkdir(parents=True)
    (records / "s0.json").write_text("{}")
    for directory in (tmp_path / "nowhere", tmp_path / "empty"):
        # one directory, or one of a list of them
        for value in (str(directory), [str(tmp_path / "records"), str(directory)]):
            cfg = write_config(tmp_path / "r.yaml", {"restore_runs": {"fr-en": value}})
            r = snakemake(tmp_path, "-n", configfile=cfg, timeout=120)
            assert r.returncode != 0
            assert f"restore_runs: '{directory}' (fr-en) is not a directory of run records" in r.stdout + r.stderr


def test_offline_without_a_local_copy_fails_the_data_step_with_one_line(tmp_path):
    cfg = write_config(tmp_path / "c.yaml", {"download": False})
    r = snakemake(tmp_path, "--cores", "1", "results/data/fr-en/dev.src", configfile=cfg, timeout=300)
    assert r.returncode != 0
    log = (tmp_path / "logs/data/fr-en/dev.log").read_text()
    assert log.strip().count("\n") == 0 and "no local copy of multi30k/tok/val.lc.norm.tok.fr.gz" in log
    assert not (tmp_path / "results/data/fr-en/dev.src").exists()


def test_another_spelling_of_data_dir_reruns_nothing(tmp_path, data_dir):
    """The data's location is not a parameter of the science (issue 28): the files are checksummed, so
    the same directory spelled relatively, absolutely or through a symbolic link reruns nothing."""
    cfg = write_config(tmp_path / "c.yaml", {"limits": {"train": 50, "dev": 20, "test": 20}})
    target = "results/data/fr-en/dev.src"
    relative = os.path.relpath(data_dir, tmp_path)  # snakemake -d: paths are read from the work directory
    r = snakemake(tmp_path, "--cores", "1", target, configfile=cfg, data_dir=relative, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    link = tmp_path / "data-link"
    link.symlink_to(data_dir.resolve())
    for spelling in (data_dir.resolve(), link):
        r = snakemake(tmp_path, "-n", target, configfile=cfg, data_dir=spelling, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "Nothing to be done" in r.stdout + r.stderr, r.stdout
    # nor is the order of the keys in a config file (a sorted dump of the same settings reran every job)
    shuffled = tmp_path / "shuffled.yaml"
    shuffled.write_text("limits: {test: 20, dev: 20, train: 50}\n", encoding="utf-8")
    r = snakemake(tmp_path, "-n", target, configfile=shuffled, data_dir=relative, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Nothing to be done" in r.stdout + r.stderr, r.stdout


def test_a_resumed_run_reruns_what_an_interrupted_one_left_stale(tmp_path, data_dir):
    """A changed setting reruns a job and everything after it; when the run stops in between (Ctrl-C,
    a lost machine) the resumed run must still rerun what came after, since its outputs were made from
    the old inputs. profiles/default leaves out the `mtime` rerun trigger, so this rests on the `input`
    trigger seeing the new dev set's content: a stale sub-sample here would mean stale pools and weights
    in every run after it, averaged by the tables without a word."""
    target = "results/data/fr-en/dev/s1.ref"
    old = write_config(tmp_path / "old.yaml", {"limits": {"train": 50, "dev": 20, "test": 20}})
    r = snakemake(tmp_path, "--cores", "1", target, configfile=old, data_dir=data_dir, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    stale = (tmp_path / target).read_text()
    # the new dev size reaches the dev set, then the run stops before the sub-sample is redone
    new = write_config(tmp_path / "new.yaml", {"limits": {"train": 50, "dev": 30, "test": 20}})
    r = snakemake(tmp_path, "--cores", "1", "results/data/fr-en/dev.ref", configfile=new, data_dir=data_dir,
                  timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    r = snakemake(tmp_path, "--cores", "1", target, configfile=new, data_dir=data_dir, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Nothing to be done" not in r.stdout + r.stderr
    fresh = (tmp_path / target).read_text()
    dev = (tmp_path / "results/data/fr-en/dev.ref").read_text().splitlines()
    assert len(dev) == 30 and fresh != stale and set(fresh.splitlines()) <= set(dev)


# ------------------------------------------------------------------ dry runs
def expected_default_jobs(config: dict) -> dict[str, int]:
    """Jobs of the default target, counted from the configuration (independently of rules/common.smk)."""
    from smtlib.data.corpora import PAIRS

    n_it = config["tuning"]["iterations"]
    samples = config["subsample"]["count"] + 1
    table_methods = list(dict.fromkeys(config["methods"] + config["extended_methods"]))
    na = config["not_applicable"]
    runs = []  # (pair, fs, method, setting, sample)
    for pair in config["pairs"]:
        for fs in config["feature_sets"]:
            for m in table_methods:
                if fs not in na.get(m, []):
                    runs += [(pair, fs, m, "default", s) for s in range(samples)]
    sw = config["sweep"]
    for g in sw["grid"]:
        runs += [(sw["pair"], sw["feature_set"], g["method"], f"{g['param']}={v:g}", s)
                 for v in g["values"] for s in sw["samples"]]
    systems = {(r[0], r[1]) for r in runs}
    pairs = {r[0] for r in runs}
    replay = config["replay"]
    tests = sum(len(PAIRS[r[0]].tests) for r in runs)
    # what each run's method reads: a k-best pool, lattices (lbmert, lbmira) or the decoder (mira)
    from smtlib.tuners.registry import get_tuner_class, input_kind as kind

    def shards(method):
        return int(config["method_settings"].get(method, {}).get("shards", get_tuner_class(method).defaults["shards"]))

    runs_of = {k: [r for r in runs if kind(r[2]) == k] for k in ("kbest", "lattice", "online")}
    shared = runs_of["kbest"] + runs_of["online"]  # the runs whose iteration 1 is the shared first decode
    return {
        "data_train": len(pairs), "data_dev": len(pairs),
        "data_test": sum(len(PAIRS[p].tests) for p in pairs),
        "data_subsample": len({(r[0], r[4]) for r in runs}),
        "train_prepare": len(pairs), "train_align": len(pairs), "train_phrases0": len(pairs),
        "train_phrases1": len({p for p, fs in systems if fs != "small"}),
        "train_lm": len(pairs) + len({p for p, fs in systems if fs != "small"}),
        "train_assemble": len({s for s in systems if s[1] != "overfit"}),
        "train_assemble_overfit": len({s for s in systems if s[1] == "overfit"}), "init_weights": len(systems),
        # iteration 1 of the k-best and online runs: one shared decode per system, each sub-sample's
        # share of it; lattice runs decode their own lattices from iteration 1 on
        "decode_first": len({(r[0], r[1]) for r in shared}),
        "first_sample": len({(r[0], r[1], r[4]) for r in shared}),
        "tune_first": len(runs_of["kbest"]),
        "decode_dev": len(shared) * n_it, "tune": len(runs_of["kbest"]) * (n_it - 1),
        "decode_dev_lattice": len(runs_of["lattice"]) * (n_it + 1), "tune_lattice": len(runs_of["lattice"]) * n_it,
        "mira_shard": sum(shards(r[2]) for r in runs_of["online"]) * n_it, "mira_mix": len(runs_of["online"]) * n_it,
        "select_best": len(runs),
        "decode_test": tests, "run_summary": len(runs),
        # the tables' starting point: each table pair's systems decode their test sets with the initial weights
        "decode_test_initial": sum(len(PAIRS[t["pair"]].tests) * len(config["feature_sets"])
                                   for t in {t["pair"]: t for t in config["tables"] if t["pair"] in pairs}.values()),
        "score_test": tests * (len(config.get("evaluation", {}).get("metrics", ["bleu"])) - 1),
        "table": len(config["tables"]), "table_extended": len(config["tables"]),
        "table_vs_paper": sum(t["name"] in ("table4", "table5", "table6") for t in config["tables"]),
        "table_page": sum(t["name"] in ("table4", "table5", "table6") for t in config["tables"]),
        "curves": len(config["pairs"]), "curves_extended": len(config["pairs"]), "figure1": 1 if sw["grid"] else 0,
        "replay_data": 1, "replay_init": 1, "replay_pool": replay["iterations"],
        "replay_tune": len(replay["methods"]) * replay["iterations"],
        "replay_rerank": len(replay["methods"]) * replay["iterations"], "replay_table": 1,
        "pro_mert": 1,
        "all": 1,
    }


@pytest.mark.slow
def test_dry_run_of_the_default_target_lists_every_job(tmp_path, data_dir):
    """Every dimension of the default config, with 3 iterations instead of 15: the per-iteration
    jobs scale by the same formula, and a DAG a fifth the size keeps the test to a minute or two."""
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    config["tuning"]["iterations"] = 3
    cfg = write_config(tmp_path / "three_iterations.yaml", config)
    r = snakemake(tmp_path, "-n", "--quiet", "rules", configfile=cfg, data_dir=data_dir, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    counts = job_counts(r.stdout + r.stderr)
    expected = {k: v for k, v in expected_default_jobs(config).items() if v}
    assert counts.pop("total") == sum(expected.values())
    assert counts == expected
    # the full experiment: 3 pairs x (19 methods x 3 feature sets - both MERTs on Big) x 5 runs + 12 sweep runs
    assert expected["select_best"] == 3 * (19 * 3 - 2) * 5 + 12


def test_dry_run_shows_the_loop_and_its_base_cases(tmp_path, data_dir):
    run = "results/tune/fr-en/small/kbmira/default/s1"
    first = "results/tune/fr-en/small/first"
    r = snakemake(tmp_path, "-n", f"{run}/it3/weights", "results/tune/fr-en/small/mert/default/s1/it2/weights",
                  configfile=REPO / "config/tiny.yaml", data_dir=data_dir, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    # iteration 1: the full dev set decoded once with the initial weights, sub-sample 1 cut from it
    decodes = jobs_of(out, "decode_first")
    assert len(decodes) == 1 and "results/systems/fr-en/small/init.weights" in decodes[0]["input"]
    assert "results/data/fr-en/dev.src" in decodes[0]["input"]
    samples = jobs_of(out, "first_sample")
    assert len(samples) == 1 and "results/data/fr-en/dev/s1.ids" in samples[0]["input"]
    assert f"{first}/s1/dev.pool" in samples[0]["output"]
    # every method's iteration 1 tunes on that shared pool (MERT's and kb-MIRA's alike)
    firsts = jobs_of(out, "tune_first")
    assert len(firsts) == 2 and all(j["input"].split(", ")[0] == f"{first}/s1/dev.pool" for j in firsts)
    assert all("results/systems/fr-en/small/init.weights" in j["input"] for j in firsts)
    # iterations 2, 3: the run decodes with the weights of it-1 and extends the pool of it-1 (kbest_pool)
    tunes = {j["wildcards"]: j for j in jobs_of(out, "tune") if "kbmira" in j["wildcards"]}
    assert len(tunes) == 2
    for it in (2, 3):
        job = next(j for w, j in tunes.items() if f"it={it}" in w)
        inputs = job["input"].split(", ")
        assert inputs[0] == (f"{first}/s1/dev.pool" if it == 2 else f"{run}/it{it - 1}/dev.pool")
        assert f"{run}/it{it}/dev.kbest.gz" in inputs and f"{run}/it{it - 1}/weights" in inputs
        assert "results/data/fr-en/dev/s1.ref" in inputs
    decodes = [j for j in jobs_of(out, "decode_dev") if "kbmira" in j["wildcards"]]
    assert sorted(j["wildcards"].split("it=")[1] for j in decodes) == ["2", "3"]


def test_dry_run_of_a_sweep_point_passes_its_setting(tmp_path, data_dir):
    run = "results/tune/fr-en/small/kbmira/C=0.1/s0"
    r = snakemake(tmp_path, "-n", "-p", f"{run}/it1/weights", configfile=REPO / "config/tiny.yaml",
                  data_dir=data_dir, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert re.search(r"smtlib tune kbmira .*--seed 1001 --set C=0\.1 --tokenize none --lowercase", out)


def metric_sweep_config(quick: dict) -> dict:
    """config/tiny.yaml as a sweep over tuning metrics (issue 25): its k-best methods (lb-mira tunes
    toward BLEU only), each tuned toward BLEU, chrF and TER, every test set scored with all three."""
    return {**quick, "methods": ["mert", "kbmira"], "tuning": {**quick["tuning"], "metric": ["bleu", "chrf", "ter"]},
            "evaluation": {"metrics": ["bleu", "chrf", "ter"]}}


def test_dry_run_of_a_metric_sweep(tmp_path, data_dir):
    """tuning.metric as a list: every table run once per metric, BLEU's at the paths it always had and
    the others' at {setting}@METRIC with `--metric` given to the pool and the tuner; each test output
    scored with every evaluation metric; the metric matrix gathers every run with its tuning metric."""
    quick = yaml.safe_load((REPO / "config/tiny.yaml").read_text(encoding="utf-8"))
    config = metric_sweep_config(quick)
    cfg = write_config(tmp_path / "sweep.yaml", config)
    r = snakemake(tmp_path / "wf", "-n", "--quiet", "rules", configfile=cfg, data_dir=data_dir, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    counts = job_counts(out)
    table_runs = 3 * 2 * 2  # (mert, kbmira, pro) x (small, medium) x 2 sub-samples
    sweep_runs = 2  # Figure 1's kb-mira sweep stays BLEU's
    # the runs tuned toward chrF or TER keep the weights best in it (select_best_metric), by the dev
    # score of each iteration's 1-best in it: the shared first decode's (per system and sub-sample) and
    # their own decodes' (iterations 2 and 3)
    assert counts["select_best_metric"] == 2 * table_runs
    assert counts["select_best"] + counts["select_best_metric"] == 3 * table_runs + sweep_runs
    assert counts["score_first_dev"] == 2 * 2 * 2  # (small, medium) x 2 sub-samples x (chrF, TER)
    assert counts["score_dev"] == 2 * table_runs * 2
    assert counts["decode_test"] == 2 * (3 * table_runs + sweep_runs)  # test2016, test2017
    assert counts["score_test"] == 2 * counts["decode_test"]  # chrF and TER; BLEU is decode_test's
    assert counts["metric_matrix"] == 1 and counts["table"] == 1
    assert counts["decode_test_initial"] == 2 * 2  # the tables' starting point: (small, medium) x 2 test sets
    # the matrix's plan, plus the dev scores that keep the weights, the extended methods' learning curves
    # and the table's HTML page
    assert counts["total"] == 503 + 8 + 48 + 1 + 1 and counts["curves_extended"] == 1
    r = snakemake(tmp_path / "wf", "-n", "-p", "results/metric_matrix.tsv", configfile=cfg, data_dir=data_dir,
                  timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    tunes = [line for line in out.splitlines() if "smtlib kbest add --pool" in line]
    for metric in ("chrf", "ter"):
        run = f"results/tune/fr-en/small/kbmira/default@{metric}/s1"
        (line,) = [t for t in tunes if f"{run}/it2/dev.kbest.gz" in t]
        # both commands of the step get the metric: the pool keeps its statistics, the tuner optimizes it
        assert line.count(f"--tokenize none --lowercase --metric {metric}") == 2, line
        assert "--pool results/tune/fr-en/small/first/s1/dev.pool" in line  # iteration 1's pool is shared
    (bleu,) = [t for t in tunes if "results/tune/fr-en/small/kbmira/default/s1/it2/dev.kbest.gz" in t]
    assert "--metric" not in bleu
    best = [line for line in out.splitlines() if "smtlib report best" in line]
    run = "results/tune/fr-en/small/kbmira/default@ter/s1"
    (ter,) = [line for line in best if f"--out-weights {run}/best.weights" in line]
    assert (f"--metric ter --dev-score results/tune/fr-en/small/first/s1/dev.ter.json {run}/it2/dev.ter.json "
            f"{run}/it3/dev.ter.json --weights") in ter
    (bleu,) = [line for line in best if "--out-weights results/tune/fr-en/small/kbmira/default/s1/best.weights" in line]
    assert "--metric" not in bleu and "--dev-score" not in bleu
    summary = next(line for line in out.splitlines()
                   if "smtlib report summary" in line and "small/kbmira/default@ter/s0/" in line)
    for t in ("test2016", "test2017"):
        for m in ("bleu", "chrf", "ter"):
            assert f"{t}=results/tune/fr-en/small/kbmira/default@ter/s0/test.{t}.{m}.json" in summary
    assert re.search(r"smtlib score --metric ter --refs results/data/fr-en/test\.test2017\.ref "
                     r"--hyps results/tune/fr-en/medium/pro/default@chrf/s1/test\.test2017\.1best", out)
    matrix = next(line for line in out.splitlines() if "smtlib report metric-matrix" in line)
    assert matrix.count("--run") == 1 and matrix.count("summary.json") == 3 * table_runs
    assert "chrf=results/tune/fr-en/medium/mert/default@chrf/s0/summary.json" in matrix
    assert "bleu=results/tune/fr-en/medium/mert/default/s0/summary.json" in matrix


def test_metric_matrix_config_plans_issue_25s_matrix(tmp_path, data_dir):
    """config/metric_matrix.yaml (issue 25's matrix, fr-en Medium, kb-mert and kb-mira x BLEU, chrF,
    TER, full dev set, Table 4's 15 iterations and k=100): its plan, and Table 4's commands for its
    system and BLEU runs (the same files, reused where Table 4 ran)."""
    r = snakemake(tmp_path / "wf", "-n", "-p", "results/metric_matrix.tsv",
                  configfile=REPO / "config/metric_matrix.yaml", data_dir=data_dir, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    counts = job_counts(out)
    assert counts["select_best"] == 2 and counts["select_best_metric"] == 4  # 2 methods x 3 metrics
    assert counts["decode_dev"] == 6 * 15 and counts["tune"] == 6 * 14 and counts["tune_first"] == 6
    assert counts["score_dev"] == 4 * 15 and counts["score_first_dev"] == 2  # chrF, TER of the shared decode
    assert counts["score_test"] == 6 * 2 * 2 and counts["data_subsample"] == 1
    assert counts["total"] == 306
    assert "--k 100 " in out and "--sparse" in out  # fr-en's phrase table as Table 4 builds it (Big's field)
    matrix = next(line for line in out.splitlines() if "smtlib report metric-matrix" in line)
    for method in ("mert", "kbmira"):
        for metric, setting in (("bleu", "default"), ("chrf", "default@chrf"), ("ter", "default@ter")):
            assert f"{metric}=results/tune/fr-en/medium/{method}/{setting}/s0/summary.json" in matrix


def test_config_rejects_a_metric_a_method_cannot_take(tmp_path):
    """Before any job: a table method that tunes toward BLEU only (lb-mira, from the tuner registry),
    an unknown metric (from smtlib.bleu.metrics) and evaluation metrics without BLEU."""
    quick = yaml.safe_load((REPO / "config/tiny.yaml").read_text(encoding="utf-8"))
    cfg = write_config(tmp_path / "bad.yaml", {**quick, "tuning": {**quick["tuning"], "metric": ["bleu", "chrf", "chrff"]},
                                               "evaluation": {"metrics": ["chrf", "tr"]}})
    r = snakemake(tmp_path, "-n", configfile=cfg, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "Traceback" not in out
    assert "config: tuning.metric 'chrf' for the tables' methods: lbmira tunes toward BLEU only" in out
    assert "config: tuning.metric 'chrff': unknown metric 'chrff'" in out
    assert "'tr' is not a metric (did you mean 'ter'?)" in out
    assert "evaluation.metrics ['chrf', 'tr'] lacks bleu" in out


def test_dry_run_applies_the_pairs_method_settings(tmp_path, data_dir):
    """Table 6's PRO (Cherry & Foster §4): 100 iterations and 50 sampled pairs on ja-en only."""
    cfg = write_config(tmp_path / "pairs.yaml", {"pair_method_settings": {"ja-en": {"pro": {"max_iter": 100, "gamma": 50}}}})
    targets = ["results/tune/ja-en/small/pro/default/s0/it1/weights", "results/tune/fr-en/small/pro/default/s0/it1/weights"]
    r = snakemake(tmp_path, "-n", "-p", *targets, configfile=cfg, data_dir=data_dir, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    commands = [line for line in out.splitlines() if "smtlib tune pro" in line]
    assert len(commands) == 2
    (ja,) = [c for c in commands if "ja-en" in c]
    (fr,) = [c for c in commands if "fr-en" in c]
    assert "--set max_iter=100 --set gamma=50" in ja
    assert "--set max_iter=30" in fr and "gamma" not in fr


def test_tables_of_unconfigured_pairs_are_dropped(tmp_path, data_dir):
    """Setting `pairs` alone selects a sub-experiment: tables of other pairs are dropped with one line each."""
    quick = yaml.safe_load((REPO / "config/tiny.yaml").read_text(encoding="utf-8"))
    tables = [{"name": "table4", "pair": "fr-en"}, {"name": "table5", "pair": "en-fr"}]
    cfg = write_config(tmp_path / "pairs.yaml", {**quick, "pairs": ["fr-en"], "tables": tables})
    r = snakemake(tmp_path / "wf", "-n", "--quiet", "rules", configfile=cfg, data_dir=data_dir, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "config: table5 dropped (its pair en-fr is not in pairs ['fr-en'])" in out
    counts = job_counts(out)
    assert counts["table"] == 1 and counts["table_vs_paper"] == 1


def test_moses_backend_decodes_the_export_with_moses(tmp_path, data_dir):
    # no Moses needed: a dry run only checks that decoder.moses is executable
    fake = tmp_path / "bin" / "moses"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    fake.chmod(0o755)
    quick = yaml.safe_load((REPO / "config/tiny.yaml").read_text(encoding="utf-8"))
    cfg = write_config(tmp_path / "moses.yaml",
                       {**quick, "decoder": {**quick["decoder"], "backend": "moses", "moses": str(fake)}})
    run = "results/tune/fr-en/small/kbmira/default/s1"
    r = snakemake(tmp_path / "wf", "-n", "-p", f"{run}/it1/weights", configfile=cfg, data_dir=data_dir, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    ini = "results/systems/fr-en/small/moses/moses.ini"
    assert len(jobs_of(out, "export_moses")) == 1
    assert ini in jobs_of(out, "decode_first")[0]["input"].split(", ")  # iteration 1: the shared first decode
    assert re.search(rf"smtlib decode .*--stack-size 20 .*--backend moses --moses-bin {re.escape(str(fake))} "
                     rf"--moses-ini {re.escape(ini)}", out)
    # the default backend: our decoder, no export
    r = snakemake(tmp_path / "wf", "-n", "-p", f"{run}/it1/weights", configfile=REPO / "config/tiny.yaml",
                  data_dir=data_dir, timeout=300)
    assert r.returncode == 0 and "export_moses" not in r.stdout and "--backend" not in r.stdout
    fake.chmod(0o644)
    r = snakemake(tmp_path / "wf", "-n", f"{run}/it1/weights", configfile=cfg, data_dir=data_dir, timeout=300)
    assert r.returncode != 0 and "decoder.moses" in r.stdout + r.stderr


# ------------------------------------------------------------------ end to end
REPLAY = {"replay": {"methods": ["mert", "kbmira"], "iterations": 3}}


def read_replay(path):
    return [ln.split("\t") for ln in path.read_text().splitlines() if not ln.startswith("#")]


@pytest.fixture(scope="module")
def replay_run(tmp_path_factory, data_dir):
    """The replay target, run once uninterrupted."""
    work = tmp_path_factory.mktemp("replay")
    cfg = write_config(work / "replay.yaml", REPLAY)
    r = snakemake(work, "--cores", "2", "results/replay/table.tsv", configfile=cfg, data_dir=data_dir)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    return work


@pytest.mark.slow
def test_replay_end_to_end_next_to_moses(replay_run):
    rows = read_replay(replay_run / "results/replay/table.tsv")
    assert rows[0] == ["method", "final_bleu", "best_bleu", "best_iteration", "it1", "it2", "it3"]
    assert [r[0] for r in rows[1:]] == ["mert", "kbmira", "moses-mert (recorded)"]
    assert rows[3][4:] == ["37.90", "43.12", "43.56"]  # Moses's recorded best BLEU per iteration
    mert = [float(x) for x in rows[1][4:]]
    assert all(0.0 < x <= 100.0 for r in rows[1:] for x in map(float, r[1:3] + r[4:]))
    # our k-best MERT on the same pools lands within 1.5 BLEU of Moses's MERT at every iteration
    assert all(abs(a - b) < 1.5 for a, b in zip(mert, [37.90, 43.12, 43.56]))
    # the base case: iteration 1 tuned from the moses.ini weights
    init = (replay_run / "results/replay/init.weights").read_text().split()
    assert init[:2] == ["d_0", "0.4"]
    # the pool of iteration 3 holds the three recorded runs, de-duplicated
    bleu = json.loads((replay_run / "results/replay/mert/it3/bleu.json").read_text())
    assert bleu["score"] == pytest.approx(mert[2], abs=0.005) and bleu["signature"].startswith("nrefs:3|case:mixed")


@pytest.mark.slow
def test_killed_replay_restarts_to_the_same_results(replay_run, tmp_path, data_dir):
    cfg = write_config(tmp_path / "replay.yaml", REPLAY)
    proc = snakemake(tmp_path, "--cores", "2", "results/replay/table.tsv", configfile=cfg, data_dir=data_dir,
                     popen=True)
    # kill the whole run (snakemake and its running jobs) as soon as the first tuning step is done
    deadline = time.time() + 300
    first = tmp_path / "results/replay/mert/it1/weights"
    while not first.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (tmp_path / "results/replay/table.tsv").exists()
    # SIGKILL leaves Snakemake's lock behind (SIGINT/SIGTERM would not): unlock, as a user would
    r = snakemake(tmp_path, "--unlock", configfile=cfg, data_dir=data_dir)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    r = snakemake(tmp_path, "--cores", "2", "results/replay/table.tsv", configfile=cfg, data_dir=data_dir)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert read_replay(tmp_path / "results/replay/table.tsv") == read_replay(replay_run / "results/replay/table.tsv")
    for method in REPLAY["replay"]["methods"]:
        for it in range(1, 4):
            a = (tmp_path / f"results/replay/{method}/it{it}/weights").read_bytes()
            assert a == (replay_run / f"results/replay/{method}/it{it}/weights").read_bytes()


@pytest.mark.slow
def test_tiny_config_end_to_end_table4(tmp_path, data_dir, tiny_table4_run):
    # conftest.py's shared run made results/table4.html and the curves; the report, the metric sweep and
    # the restore below change the run, so they work on a copy
    work = tiny_table4_run.copy_to(tmp_path / "run")
    lines = [ln.split("\t") for ln in (work / "results/table4.tsv").read_text().splitlines()]
    assert lines[0] == ["method", "Small Tune", "Small Test", "Small SD", "Small Sig",
                        "Medium Tune", "Medium Test", "Medium SD", "Medium Sig"]
    assert [row[0] for row in lines[1:]] == ["kb-mert", "kb-mira", "lb-mira"]  # the rows of config/tiny.yaml's methods
    for row in lines[1:]:
        tune, test, sd = (float(x) for x in row[1:4])
        assert 5.0 < tune < 100.0 and 5.0 < test < 100.0 and 0.0 <= sd < 20.0
    # every cell marked against its column's best (two runs per cell: the test is over the runs)
    for col in (4, 8):
        marks = [row[col] for row in lines[1:]]
        assert marks.count("best") == 1 and set(marks) <= {"best", "*", "="}, marks
    # the numbers are the BLEU of the runs' own outputs: recompute one cell with sacrebleu
    import sacrebleu

    tests = []
    for s in (0, 1):
        run = work / f"results/tune/fr-en/small/kbmira/default/s{s}"
        per_set = []
        for t in ("test2016", "test2017"):
            hyps = (run / f"test.{t}.1best").read_text(encoding="utf-8").splitlines()
            refs = (work / f"results/data/fr-en/test.{t}.ref").read_text(encoding="utf-8").splitlines()
            assert len(hyps) == len(refs) == 30
            per_set.append(sacrebleu.corpus_bleu(hyps, [refs], tokenize="none", lowercase=True).score)
        tests.append(sum(per_set) / 2)
    assert float(lines[2][2]) == pytest.approx(sum(tests) / 2, abs=0.006)
    companion = (work / "results/table4.md").read_text()
    assert "nrefs:1|case:lc|eff:no|tok:none|smooth:exp" in companion and '"iterations": 2' in companion
    assert "## Significance: each cell against its column's best" in companion
    # the starting point: the initial weights' Test per feature set, each cell beside it
    assert "## The starting point: initial weights" in companion
    assert re.search(r"\| small \| \d+\.\d\d \| [+-]\d+\.\d\d \|", companion), companion
    assert "|ar:10000|ties:count|bs:1000|seed:1" in companion
    tested = json.loads((work / "results/table4_tests.json").read_text())
    assert len(tested["cells"]) == 6 and all(c["runs"] == 2 and c["s_opt"] is not None for c in tested["cells"])
    assert len(tested["pairs"]) == 6  # every pair of each column
    # the orderings of the paper's columns, and the paper's findings evaluated
    vs = [ln.split("\t") for ln in (work / "results/table4_vs_paper.tsv").read_text().splitlines()
          if not ln.startswith("#")]
    assert vs[0][:3] == ["feature_set", "ahead", "behind"] and len(vs) == 1 + 6
    assert all(row[9] in ("yes", "no", "tie", "-") and row[11] in ("yes", "no") for row in vs[1:])
    findings = (work / "results/table4_findings.md").read_text()
    claims = [ln for ln in findings.splitlines() if re.match(r"^\| \d+ \|", ln)]
    verdicts = {"holds", "does not hold", "inconclusive", "not run"}
    assert len([ln for ln in claims if any(f"**{v}**" in ln for v in verdicts)]) == 12
    assert "| 12 | PRO is the least stable" in findings and "pro big not in our table" in findings  # not in quick
    curve = (work / "results/tune/fr-en/small/kbmira/default/s0/curve.tsv").read_text().splitlines()
    assert len(curve) == 1 + 3  # weights 0, 1, 2
    # every job of the table's chain measured, down to the small ones (their costs published per rule)
    from smtlib.report.publish import rule_costs

    costs = {c["rule"]: c for c in rule_costs(work, "fr-en", ["table4"])}
    for rule in ("decode_dev", "tune", "tune_lattice", "select_best", "run_summary", "table",
                 "table_vs_paper"):
        assert costs.get(rule, {}).get("jobs", 0) >= 1 and costs[rule]["max_rss_mb"] > 0, (rule, costs.get(rule))
    # the HTML report of what was built (`snakemake --report`), called as the README says, without the
    # run's --configfile: it describes the run (its recorded settings), with the figure asked for
    r = snakemake(work, "--report", str(work / "report.html"), "results/table4.html",
                  "results/figures/curves_fr-en.png", data_dir=data_dir, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "report: the settings of the run in results/ (" in r.stdout + r.stderr
    assert "Missing metadata" not in r.stdout + r.stderr, (r.stdout + r.stderr)[-3000:]
    html = (work / "report.html").read_text(encoding="utf-8", errors="replace")
    assert "table4.tsv" in html and "table4.md" in html  # each table with its companion (signature, settings)
    assert "table4_findings.md" in html and "table4_vs_paper.tsv" in html and "curves_fr-en.png" in html
    page = (work / "results/table4.html").read_text(encoding="utf-8")  # the table's page, shown in the report
    assert "table4.html" in html and page.count("<table>") == 2 and "<td>kb-mira</td>" in page
    home = " ".join(html.replace("\\n", " ").split())  # the home text is embedded as a JSON string
    assert "tiny.yaml over it" in home and "2 iterations, k = 20" in home
    # a report call naming another config than the run's is refused
    r = snakemake(work, "--report", str(work / "other.html"), "results/table4_vs_paper.tsv",
                  configfile=REPO / "config/quick.yaml", data_dir=data_dir, timeout=300)
    assert r.returncode != 0 and "give the run's --configfile" in r.stdout + r.stderr
    assert "## Test score of every evaluation metric" not in companion  # evaluation.metrics: [bleu]
    tuned = {p: p.read_bytes() for p in (work / "results/tune/fr-en").glob("*/*/default/s*/summary.json")
             if p.parts[-4] != "cmira"}  # the table's runs (the shared run has Tan et al.'s too)
    table = (work / "results/table4.tsv").read_bytes()
    metric_sweep_on_the_tiny_run(work, data_dir)
    restore_on_the_tiny_run(work, data_dir, tuned, table)
    extended_table_on_the_tiny_run(work, data_dir)


def extended_table_on_the_tiny_run(work, data_dir):
    """The extended table with the shared run's c-MIRA runs as its extra row: each cell also marked
    against kb-mira's (config extended_against), and its title naming the rows beyond the paper's."""
    tiny = yaml.safe_load((REPO / "config/tiny.yaml").read_text(encoding="utf-8"))
    cfg = write_config(work / "extended.yaml", {**tiny, "extended_methods": ["cmira"]})
    r = snakemake(work, "--cores", "2", "results/table4_extended.tsv", configfile=cfg, data_dir=data_dir,
                  timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    lines = [ln.split("\t") for ln in (work / "results/table4_extended.tsv").read_text().splitlines()]
    assert lines[0][1:6] == ["Small Tune", "Small Test", "Small SD", "Small Sig", "Small vs kb-mira"]
    assert [row[0] for row in lines[1:]] == ["kb-mert", "kb-mira", "lb-mira", "cmira"]
    for row in lines[1:]:
        for col in (5, 10):
            assert row[col] == "ref" if row[0] == "kb-mira" else row[col] in {">", "<", "="}, row
    companion = (work / "results/table4_extended.md").read_text()
    assert "# table4 extended: fr-en, the paper's methods and cmira" in companion
    assert "## Significance: each cell against kb-mira" in companion


@pytest.mark.slow
@pytest.mark.parametrize("pair, table, test_sets, pro_iterations", [
    ("en-fr", "table5", ["test2016", "test2017"], 30),
    ("ja-en", "table6", ["test"], 100),
])
def test_tiny_other_pairs_end_to_end(tmp_path, data_dir, pair, table, test_sets, pro_iterations):
    """Tables 5 and 6's pairs end to end at the tiny size (en-fr: French as the target; ja-en, the
    paper's zh-en: its own data, system, single test set and PRO settings), so that a rule that only
    fr-en exercises cannot break another pair unseen."""
    quick = yaml.safe_load((REPO / "config/tiny.yaml").read_text(encoding="utf-8"))
    config = {**quick, "pairs": [pair], "tables": [{"name": table, "pair": pair}],
              "feature_sets": ["small"], "methods": ["kbmira", "pro"], "extended_methods": [],
              "subsample": {**quick["subsample"], "count": 0}}
    cfg = write_config(tmp_path / "pair.yaml", config)
    r = snakemake(tmp_path, "--cores", "2", f"results/{table}.tsv", configfile=cfg, data_dir=data_dir, timeout=1800)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    lines = [ln.split("\t") for ln in (tmp_path / f"results/{table}.tsv").read_text().splitlines()]
    assert lines[0][:3] == ["method", "Small Tune", "Small Test"] and [row[0] for row in lines[1:]] == ["kb-mira", "pro"]
    assert all(0.0 < float(row[1]) < 100.0 and 0.0 < float(row[2]) < 100.0 for row in lines[1:])
    run = tmp_path / f"results/tune/{pair}/small/pro/default/s0"
    assert sorted(p.name for p in run.glob("test.*.1best")) == [f"test.{t}.1best" for t in test_sets]
    # PRO's classifier iterations: Table 6's 100 on ja-en (pair_method_settings), tiny.yaml's 30 elsewhere
    tune_log = (tmp_path / f"logs/tune/{pair}/small/pro/default/s0/it2/tune.log").read_text(encoding="utf-8")
    assert re.search(rf"iteration \d+/{pro_iterations} ", tune_log), tune_log


def restore_on_the_tiny_run(work, data_dir, tuned, table):
    """The tiny run's runs lost (their directories deleted) and restored from their published records
    (config restore_runs): no tuning job runs, only each run's restore, test decodes and summary; every
    summary is the tuned run's byte for byte (its test BLEU reproduced exactly), and so is the table."""
    from smtlib.report.publish import benchmark_rule, run_record

    assert len(tuned) == 12  # 3 methods x Small, Medium x 2 dev samples
    # kb-mira's records in a directory of their own, searched first (restore_runs: a list)
    records, kbmira_records = work / "published/runs", work / "published_kbmira/runs"
    for summary in tuned:
        run = summary.parent
        name = run.relative_to(work / "results/tune/fr-en")
        where = kbmira_records if name.parts[1] == "kbmira" else records
        (where / name.parent).mkdir(parents=True, exist_ok=True)
        (where / f"{name}.json").write_text(json.dumps(run_record(run), indent=1, sort_keys=True))
        subprocess.run(["rm", "-r", str(run)], check=True)
    quick = yaml.safe_load((REPO / "config/tiny.yaml").read_text(encoding="utf-8"))
    cfg = write_config(work / "restore.yaml", {**quick, "restore_runs": {"fr-en": [str(kbmira_records), str(records)]}})
    r = snakemake(work, "-n", "results/table4.tsv", "--quiet", "rules", configfile=cfg, data_dir=data_dir, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    counts = job_counts(r.stdout + r.stderr)
    assert counts["restore_run"] == counts["run_summary"] == 12 and counts["decode_test"] == 24, counts
    assert not {"decode_dev", "decode_dev_lattice", "tune", "tune_lattice", "select_best"} & set(counts), counts
    r = snakemake(work, "--cores", "2", "results/table4.tsv", configfile=cfg, data_dir=data_dir, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    for summary, before in tuned.items():
        assert summary.read_bytes() == before, summary
        # the restore is costed like every job of the table step (smtlib report publish's costs.tsv)
        name = summary.parent.relative_to(work / "results/tune").as_posix()
        assert (work / "results/benchmarks/tune" / name / "restore.tsv").is_file(), name
        assert benchmark_rule(f"tune/{name}/restore.tsv") == "restore_run"
    assert (work / "results/table4.tsv").read_bytes() == table
    restore_outputs_on_the_tiny_run(work, data_dir, tuned, table, quick)


def restore_outputs_on_the_tiny_run(work, data_dir, tuned, table, quick):
    """The same runs restored from records published with their test outputs (and the initial
    weights' outputs): no decode at all, only restores and scoring; the same summaries and table."""
    from smtlib.report.publish import publish_outputs, run_record

    records = work / "published_outputs/runs"
    for summary in tuned:
        run = summary.parent
        name = run.relative_to(work / "results/tune/fr-en")
        (records / name.parent).mkdir(parents=True, exist_ok=True)
        (records / f"{name}.json").write_text(json.dumps(run_record(run), indent=1, sort_keys=True))
        assert len(publish_outputs(run, records / name.parent, f"{name.name}.")) == 2
        subprocess.run(["rm", "-r", str(run)], check=True)
    for initial in sorted((work / "results/systems/fr-en").glob("*/initial")):
        assert len(publish_outputs(initial, records.parent / "initial" / initial.parent.name, "")) == 2
        subprocess.run(["rm", "-r", str(initial)], check=True)
    cfg = write_config(work / "restore_outputs.yaml", {**quick, "restore_runs": {"fr-en": str(records)}})
    r = snakemake(work, "-n", "results/table4.tsv", "--quiet", "rules", configfile=cfg, data_dir=data_dir, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    counts = job_counts(r.stdout + r.stderr)
    assert counts["restore_run"] == counts["run_summary"] == counts["restore_test_output"] // 2 == 12, counts
    assert counts["restore_test_initial"] == 4 and not {"decode_test", "decode_test_initial"} & set(counts), counts
    r = snakemake(work, "--cores", "2", "results/table4.tsv", configfile=cfg, data_dir=data_dir, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    for summary, before in tuned.items():
        assert summary.read_bytes() == before, summary
    assert (work / "results/table4.tsv").read_bytes() == table


def metric_sweep_on_the_tiny_run(work, data_dir):
    """Issue 25's sweep added to a finished quick run: Small's kb-mert and kb-mira tuned toward BLEU and
    chrF, scored with BLEU, chrF and TER. BLEU's runs are reused (not one of their loop jobs reruns);
    the scores are sacrebleu's on the runs' outputs; the matrix has a row per method and metric."""
    import sacrebleu

    quick = yaml.safe_load((REPO / "config/tiny.yaml").read_text(encoding="utf-8"))
    config = {**quick, "feature_sets": ["small"], "methods": ["mert", "kbmira"], "extended_methods": [],
              "tuning": {**quick["tuning"], "metric": ["bleu", "chrf"]}, "evaluation": {"metrics": ["bleu", "chrf", "ter"]}}
    cfg = write_config(work / "metric_sweep.yaml", config)
    r = snakemake(work, "-n", "results/metric_matrix.tsv", "--quiet", "rules", configfile=cfg, data_dir=data_dir,
                  timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    counts = job_counts(r.stdout + r.stderr)
    # chrF's runs only: (mert, kbmira) x (s0, s1), each keeping its best iteration by dev chrF
    assert counts["select_best_metric"] == counts["tune_first"] == 4 and "select_best" not in counts
    assert counts["score_test"] == 8 * 2 * 2  # every run's two test sets in chrF and TER
    r = snakemake(work, "--cores", "2", "results/metric_matrix.tsv", configfile=cfg, data_dir=data_dir, timeout=1800)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    lines = (work / "results/metric_matrix.tsv").read_text().splitlines()
    assert lines[0].split("\t") == ["pair", "feature_set", "method", "tuning_metric", "runs", "bleu", "chrf", "ter"]
    rows = [ln.split("\t") for ln in lines[1:5]]
    assert [r[2:5] for r in rows] == [["mert", "bleu", "2"], ["kbmira", "bleu", "2"], ["mert", "chrf", "2"],
                                      ["kbmira", "chrf", "2"]]
    assert all(0 < float(x) < 100 for r in rows for x in r[5:7]) and all(float(r[7]) > 0 for r in rows)
    assert sum(ln.startswith("# signature ") for ln in lines[5:]) >= 3
    run = work / "results/tune/fr-en/small/kbmira/default@chrf/s1"
    hyps = (run / "test.test2017.1best").read_text(encoding="utf-8").splitlines()
    refs = (work / "results/data/fr-en/test.test2017.ref").read_text(encoding="utf-8").splitlines()
    chrf = json.loads((run / "test.test2017.chrf.json").read_text())
    assert chrf["score"] == pytest.approx(sacrebleu.CHRF(lowercase=True).corpus_score(hyps, [refs]).score, abs=1e-6)
    ter = json.loads((run / "test.test2017.ter.json").read_text())
    assert ter["score"] == pytest.approx(sacrebleu.TER().corpus_score(hyps, [refs]).score, abs=1e-6)
    assert "pool_chrf_out" in json.loads((run / "it2/tune.json").read_text())  # the step tuned toward chrF
    summary = json.loads((run / "summary.json").read_text())
    assert summary["setting"] == "default@chrf" and set(summary["metrics"]) == {"chrf", "ter"}
    assert summary["tuning"]["metric"] == "chrf" and summary["tuning"]["better"] == "higher"


def test_command_backend_around_our_own_decoder_tunes_to_the_same_weights(tmp_path, data_dir, tiny_table4_run):
    """decoder: {backend: command} whose command runs smtlib decode ({model} is the system's model) gives
    the weights of our decoder run directly: the decoder command's n-best list, read and written back in
    our format, is the same pool to the tuner."""
    from tests.unit.workflow.conftest import load_config
    from smtlib.workflow.options import decoder_options

    quick = yaml.safe_load((REPO / "config/tiny.yaml").read_text(encoding="utf-8"))
    target = "results/tune/fr-en/small/kbmira/default/s1/it2/weights"  # a run of the shared tiny Table 4
    work = tiny_table4_run.copy_to(tmp_path / "wf")
    ours = (work / target).read_text(encoding="utf-8")
    search = decoder_options(load_config("tiny.yaml")["decoder"])
    command = ("smtlib decode --model {model} --weights {weights} --input {input} --kbest {nbest} --k {k} --quiet "
               + search)
    cfg = write_config(tmp_path / "command.yaml", {
        **quick, "methods": ["mert", "kbmira"],
        "decoder": {**quick["decoder"], "backend": "command", "command": command}})
    # the same directory: the system is reused, the decodes (and what follows them) run again
    r = snakemake(work, "--cores", "2", "-p", target, "--forcerun", "decode_first", "decode_dev",
                  configfile=cfg, data_dir=data_dir, timeout=1200)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert re.search(r"smtlib decode .*--backend command --decoder 'smtlib decode --model results/systems/fr-en/small/"
                     r"model.yaml --weights \{weights\}", out)
    assert "export_moses" not in out  # no {ini}: no Moses export
    weights = lambda text: [line for line in text.splitlines() if not line.startswith("#")]  # noqa: E731
    assert weights((work / target).read_text(encoding="utf-8")) == weights(ours)
    # the lattice tuners and online MIRA need our decoder: refused with one line
    bad = write_config(tmp_path / "bad.yaml", {**quick, "decoder": {**quick["decoder"], "backend": "command",
                                                                     "command": command}})
    r = snakemake(work, "-n", target, configfile=bad, data_dir=data_dir, timeout=300)
    assert r.returncode != 0 and "methods lbmira need our decoder" in r.stdout + r.stderr
