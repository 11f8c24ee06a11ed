"""rules/simianer.smk (Simianer, Riezler & Dyer 2012, Table 2) through `snakemake -n`: the job counts
of the quick and the full configuration, counted independently from the configured dimensions, and
the sharded loop's base cases (zero start, jackknifed fold models, each algorithm's next start)."""

from __future__ import annotations

import pytest
import yaml

from tests.support.workflow_runner import REPO, job_counts, jobs_of, snakemake, write_config

QUICK = REPO / "config/simianer_quick.yaml"


def expected_jobs(sim: dict) -> dict[str, int]:
    """Jobs of the `simianer` target from a fresh directory, from the configuration alone."""
    runs = [(r["algorithm"], r["data"], g, sim["seed"]) for r in sim["runs"] for g in r["groups"]]
    replicas = sim.get("replicas") or {}
    runs += [(r["algorithm"], r["data"], g, seed) for seed in replicas.get("seeds", [])
             for r in replicas.get("runs", []) for g in r["groups"]]
    templated = {g["name"] for g in sim["groups"] if g["templates"]}
    splits = {seed for _, d, _, seed in runs if d == "train"}  # each with its shards, folds, fold models
    trained = {(g, seed) for _, d, g, seed in runs if d == "train"}  # fold models of a group per split
    folds = sim.get("folds") or sim["shards"]
    shard_jobs = sum(sim["epochs"] * (sim["shards"] if d == "train" else 1) for _, d, _, _ in runs)
    per_split = len(splits) * folds
    jobs = {
        "data_train": 1, "data_dev": 1, "data_test": 2,  # devtest and test
        "train_prepare": 1, "train_align": 1, "train_lm": 2, "train_phrases0": 1, "train_phrases1": 1,
        "train_assemble": 1, "simianer_shards": len(splits),
        "simianer_fold_work": per_split, "simianer_fold_phrases0": per_split,
        "simianer_fold_phrases1": per_split, "simianer_fold_assemble": per_split,
        "simianer_fold_lm": 2 * per_split if sim["fold_lms"] else 0,  # LM0 and LM1 of each fold
        # a templated group: one full model, plus one per fold of each split it is trained on
        "simianer_templates": len(templated) + folds * sum(1 for g, _ in trained if g in templated),
        "simianer_zero": len(runs),
        "simianer_shard_pass": shard_jobs,
        "simianer_mix": len(runs) * sim["epochs"], "simianer_devtest": len(runs) * sim["epochs"],
        "simianer_choose": len(runs), "simianer_test": len(runs),
        "simianer_table": 1, "simianer_findings": 1, "simianer_plot": 1, "simianer": 1,
    }
    if sim.get("batch_baseline"):  # the tables' protocol on dev with the full medium system
        tables = yaml.safe_load((REPO / "config/config.yaml").read_text())
        runs_b, its = tables["subsample"]["count"] + 1, tables["tuning"]["iterations"]
        jobs.update(data_subsample=runs_b, init_weights=1, decode_first=1, first_sample=runs_b, tune_first=runs_b,
                    decode_dev=runs_b * its, tune=runs_b * (its - 1), select_best=runs_b,
                    decode_test=runs_b * jobs["data_test"], run_summary=runs_b)
    return {rule: count for rule, count in jobs.items() if count}


def _dry_run(tmp_path, data_dir, *targets, configfile=QUICK):
    r = snakemake(tmp_path, "-n", *targets, configfile=configfile, data_dir=data_dir, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    return out


def _config(path):
    base = yaml.safe_load((REPO / "config/config.yaml").read_text())["simianer"]
    return {**base, **(yaml.safe_load(path.read_text()).get("simianer", {}) if path else {})}


def test_quick_dry_run_counts_every_job(tmp_path, data_dir):
    counts = job_counts(_dry_run(tmp_path, data_dir, "simianer"))
    expected = expected_jobs(_config(QUICK))
    assert counts.pop("total") == sum(expected.values())
    assert counts == expected


@pytest.mark.slow
def test_full_dry_run_counts_every_job(tmp_path, data_dir):
    """The full configuration with 3 epochs instead of the paper's 10: the per-epoch jobs scale by the
    same formula, and a DAG a third the size keeps the test short."""
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    assert config["simianer"]["epochs"] == 10
    config["simianer"]["epochs"] = 3
    cfg = write_config(tmp_path / "three_epochs.yaml", config)
    out = _dry_run(tmp_path, data_dir, "simianer", "--quiet", "rules", configfile=cfg)
    counts = job_counts(out)
    expected = expected_jobs(_config(cfg))
    assert counts.pop("total") == sum(expected.values())
    assert counts == expected
    # Table 2's 18 rows and the replicas of two training-set rows on two more splits
    assert expected["simianer_shard_pass"] == 3 * (5 + 29 * (5 + 5 + 3) + 29 * 2 * 2)
    assert expected["simianer_fold_phrases0"] == 3 * 29


def test_the_loop_starts_at_zero_and_mixes_between_epochs(tmp_path, data_dir):
    out = _dry_run(tmp_path, data_dir, "simianer")
    root = "results/simianer/de-en"
    split = f"{root}/split1"
    decodes = {j["wildcards"]: j for j in jobs_of(out, "simianer_shard_pass")}

    def decode(group, run, epoch, shard):
        return decodes[f"pair=de-en, fgroup={group}, algo={run.split('-')[0]}, tdata={run.split('-')[1]}, "
                       f"split=1, epoch={epoch}, shard={shard}"]["input"].split(", ")

    # epoch 1 starts from the zero vector of every run
    assert decode("default", "itermixsgd-train", 1, 2)[1] == f"{root}/default/itermixsgd-train/split1/ep0/next.weights"
    # Algorithm 3/4: epoch 2 starts every shard from the mixed vector; Algorithm 1 from its own weights
    assert decode("default", "itermixsgd-train", 2, 2)[1] == f"{root}/default/itermixsgd-train/split1/ep1/next.weights"
    assert decode("id-ng-shape", "iterselsgd-train", 2, 0)[1] == f"{root}/id-ng-shape/iterselsgd-train/split1/ep1/next.weights"
    assert decode("default", "sgd-dev", 2, 0)[1] == f"{root}/default/sgd-dev/split1/ep1/shard0.weights"
    # jackknifing: training shard z is decoded with fold z's model; dev with the full-corpus model
    assert decode("default", "itermixsgd-train", 1, 1)[0] == f"{split}/folds/f1/medium/model.yaml"
    assert decode("id-ng-shape", "itermixsgd-train", 1, 2)[0] == f"{root}/models/split1/f2/id-ng-shape/model.yaml"
    assert decode("default", "itermixsgd-train", 1, 1)[2] == f"{split}/shards/shard1.src"
    assert decode("default", "sgd-dev", 1, 0)[0] == "results/systems/de-en/medium/model.yaml"
    assert decode("default", "sgd-dev", 1, 0)[2] == "results/data/de-en/dev.src"
    # fold f1 leaves shard 1 out (folds = shards)
    folds = {j["wildcards"]: j for j in jobs_of(out, "simianer_fold_work")}
    assert f"{split}/shards/shard1.ids" in folds["pair=de-en, split=1, fold=1"]["input"]
    assert f"{split}/shards/shard0.ids" not in folds["pair=de-en, split=1, fold=1"]["input"]
    # selection only for Algorithm 4; the mix of epoch 2 reads epoch 1's state
    mixes = {j["wildcards"]: j for j in jobs_of(out, "simianer_mix")}
    mix2 = mixes["pair=de-en, fgroup=id-ng-shape, algo=iterselsgd, tdata=train, split=1, epoch=2"]
    assert f"{root}/id-ng-shape/iterselsgd-train/split1/ep1/mix.json" in mix2["input"]
    assert mix2["input"].count("ep2/shard") == 3


def test_fold_models_use_the_folds_own_lms_unless_shared(tmp_path, data_dir):
    out = _dry_run(tmp_path, data_dir, "simianer")
    root = "results/simianer/de-en/split1"
    assemble = {j["wildcards"]: j for j in jobs_of(out, "simianer_fold_assemble")}["pair=de-en, split=1, fold=1"]
    assert f"{root}/folds/f1/lm/lm.0.arpa.gz" in assemble["input"] and f"{root}/folds/f1/lm/lm.1.json" in assemble["input"]
    lms = {j["wildcards"]: j for j in jobs_of(out, "simianer_fold_lm")}
    assert lms["pair=de-en, split=1, fold=1, index=0"]["input"] == f"{root}/folds/f1/work/corpus.tgt"
    config = yaml.safe_load(QUICK.read_text())
    config["simianer"]["fold_lms"] = False
    out = _dry_run(tmp_path / "shared", data_dir, "simianer", configfile=write_config(tmp_path / "c.yaml", config))
    assert "simianer_fold_lm" not in job_counts(out)


def test_grouped_folds_leave_out_every_shard_of_the_fold(tmp_path, data_dir):
    config = yaml.safe_load(QUICK.read_text())
    config["simianer"].update(shards=4, folds=2)
    out = _dry_run(tmp_path, data_dir, "simianer", configfile=write_config(tmp_path / "c.yaml", config))
    counts = job_counts(out)
    assert counts["simianer_fold_phrases0"] == 2 and counts["simianer_shard_pass"] == 2 * (2 + 4 + 4 + 4)
    fold1 = next(j for j in jobs_of(out, "simianer_fold_work") if j["wildcards"] == "pair=de-en, split=1, fold=1")
    assert "shard1.ids" in fold1["input"] and "shard3.ids" in fold1["input"] and "shard0.ids" not in fold1["input"]


def test_algorithm_1_on_training_shards_is_rejected(tmp_path, data_dir):
    config = yaml.safe_load(QUICK.read_text())
    config["simianer"]["runs"] = [{"algorithm": "sgd", "data": "train", "groups": ["default"]}]
    r = snakemake(tmp_path, "-n", "simianer", configfile=write_config(tmp_path / "c.yaml", config),
                  data_dir=data_dir, timeout=300)
    assert r.returncode != 0 and "Algorithm 1 (sgd) tunes on dev" in r.stdout + r.stderr


def test_replicas_train_on_their_own_splits(tmp_path, data_dir):
    config = yaml.safe_load(QUICK.read_text())
    config["simianer"]["replicas"] = {"seeds": [7], "runs": [{"algorithm": "itermixsgd", "data": "train",
                                                              "groups": ["default"]}]}
    configfile = write_config(tmp_path / "c.yaml", config)
    out = _dry_run(tmp_path, data_dir, "simianer", "-p", configfile=configfile)
    counts = job_counts(out)
    expected = expected_jobs({**_config(None), **config["simianer"]})
    assert counts.pop("total") == sum(expected.values()) and counts == expected
    shards = {j["wildcards"]: j for j in jobs_of(out, "simianer_shards")}
    assert set(shards) == {"pair=de-en, split=1", "pair=de-en, split=7"}
    assert "--seed 7 --shard-src results/simianer/de-en/split7/shards/shard0.src" in out
    passes = {j["wildcards"]: j for j in jobs_of(out, "simianer_shard_pass")}
    replica = passes["pair=de-en, fgroup=default, algo=itermixsgd, tdata=train, split=7, epoch=1, shard=1"]
    assert replica["input"].split(", ")[0] == "results/simianer/de-en/split7/folds/f1/medium/model.yaml"
    table = next(line for line in out.splitlines() if "smtlib sgd table" in line)
    assert ("itermixsgd:train:default=results/simianer/de-en/default/itermixsgd-train/split1 " in table
            and "itermixsgd:train:default=results/simianer/de-en/default/itermixsgd-train/split7" in table)
    assert "--tokenize none --lowercase" in table


@pytest.mark.parametrize("replica, message", [
    ({"algorithm": "itermixsgd", "data": "train", "groups": ["ng"]}, "is not a run of simianer.runs"),
    ({"algorithm": "itermixsgd", "data": "train", "groups": ["default"], "seed": 1}, None),
])
def test_replicas_must_repeat_a_configured_run(tmp_path, data_dir, replica, message):
    config = yaml.safe_load(QUICK.read_text())
    if message is None:  # the table's own split seed cannot be a replica's
        config["simianer"]["replicas"] = {"seeds": [1], "runs": [{k: v for k, v in replica.items() if k != "seed"}]}
        message = "repeats the table's split seed 1"
    else:
        config["simianer"]["replicas"] = {"seeds": [2], "runs": [replica]}
    r = snakemake(tmp_path, "-n", "simianer", configfile=write_config(tmp_path / "c.yaml", config),
                  data_dir=data_dir, timeout=300)
    assert r.returncode != 0 and message in r.stdout + r.stderr


def test_a_run_with_a_published_record_is_restored_instead_of_run(tmp_path, data_dir):
    """simianer.restore_runs: the run with a record is restored from it (its loop, epochs and test decode
    not planned), every other run is run; a directory without a record is refused."""
    records = tmp_path / "records"
    record = records / "id-ng-shape/iterselsgd-train/split1"
    record.mkdir(parents=True)
    for name in ("chosen.json", "test.bleu.json", "test.out.gz"):  # the dry run only needs them to exist
        (record / name).write_text("")
    config = yaml.safe_load(QUICK.read_text())
    config["simianer"]["restore_runs"] = str(records)
    out = _dry_run(tmp_path, data_dir, "simianer", "-p", configfile=write_config(tmp_path / "c.yaml", config))
    counts = job_counts(out)
    expected = expected_jobs(_config(QUICK))
    sim = config["simianer"]
    for rule, fewer in {"simianer_shard_pass": sim["epochs"] * sim["shards"], "simianer_mix": sim["epochs"],
                        "simianer_devtest": sim["epochs"], "simianer_zero": 1, "simianer_choose": 1,
                        "simianer_test": 1}.items():
        expected[rule] -= fewer
    assert counts.pop("total") == sum(expected.values()) + 1 and counts == {**expected, "simianer_restore": 1}
    (restore,) = jobs_of(out, "simianer_restore")
    assert restore["output"].startswith("results/simianer/de-en/id-ng-shape/iterselsgd-train/split1/chosen.json")
    assert f"--record {records}/id-ng-shape/iterselsgd-train/split1 " in out and "--tokenize none --lowercase" in out

    (record / "test.out.gz").unlink()  # an incomplete record is an error, not a run tuned again
    r = snakemake(tmp_path, "-n", "simianer", configfile=write_config(tmp_path / "c.yaml", config),
                  data_dir=data_dir, timeout=300)
    assert r.returncode != 0 and "has no test.out.gz" in r.stdout + r.stderr

    config["simianer"]["restore_runs"] = str(tmp_path / "misspelled")
    r = snakemake(tmp_path, "-n", "simianer", configfile=write_config(tmp_path / "c.yaml", config),
                  data_dir=data_dir, timeout=300)
    assert r.returncode != 0 and "holds no run record" in r.stdout + r.stderr
