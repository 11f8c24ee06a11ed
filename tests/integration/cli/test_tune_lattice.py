"""``smtlib tune lbmert|lbmira|mira``: lattice inputs, aggregated paths, online MIRA's shards and mixing."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from tests.support.decoder_toy import random_source, start_weights, write_toy_model
from smtlib.weights import read_weights, write_weights
from tests.support.cli_runner import run_cli


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    d = tmp_path_factory.mktemp("tune-lattice")
    spec = write_toy_model(d / "model", "medium", seed=4)
    rng = np.random.default_rng(7)
    lines = random_source(rng, 10, (2, 8))
    (d / "dev.fr").write_text("\n".join(lines) + "\n", encoding="utf-8")
    weights = start_weights(spec)
    write_weights(d / "w0.txt", weights)
    return d, lines


def _decode(cli, d, weights, tag):
    r = cli("decode", "--model", d / "model", "--weights", weights, "--input", d / "dev.fr", "--kbest",
            d / f"{tag}.kbest.gz", "--k", "20", "--output", d / f"{tag}.best", "--lattice", d / f"{tag}.lat.gz",
            "--lattice-beam", "0", "--quiet")
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def refs(setup):
    """References: for every sentence the 8th-best hypothesis under the initial weights (reachable, not the 1-best)."""
    d, lines = setup
    _decode(run_cli, d, d / "w0.txt", "it0")
    kb = gzip.decompress((d / "it0.kbest.gz").read_bytes()).decode().splitlines()
    by_sent: dict[int, list[str]] = {}
    for line in kb:
        sid, hyp = line.split(" ||| ")[:2]
        by_sent.setdefault(int(sid), []).append(hyp)
    ref = [by_sent[s][min(7, len(by_sent[s]) - 1)] for s in range(len(lines))]
    (d / "dev.en").write_text("\n".join(ref) + "\n", encoding="utf-8")
    return d / "dev.en"


def test_list_shows_the_new_tuners(cli):
    r = cli("tune", "--list")
    assert r.returncode == 0
    for name in ("lbmert", "lbmira", "mira"):
        assert name in r.stdout.split()


@pytest.mark.parametrize("method", ["lbmert", "lbmira"])
def test_lattice_tuner_two_iterations(setup, refs, cli, method):
    d, _ = setup
    # lattice BLEU counts the lattice's own words: the tokenizer must be none (13a is every command's default)
    extra = ["--tokenize", "none", *(["--set", "random_restarts=2"] if method == "lbmert" else ["--set", "epochs=5"])]
    r = cli("tune", method, "--lattice", d / "it0.lat.gz", "--refs", refs, "--init", d / "w0.txt",
            "--out", d / f"{method}.w1.txt", "--paths-out", d / f"{method}.paths1.gz", "--seed", "3",
            "--info", d / f"{method}.info1.json", *extra)
    assert r.returncode == 0, r.stderr
    info = json.loads((d / f"{method}.info1.json").read_text())
    assert info["objective"] >= info["objective_init"]
    assert info["paths_new"] > 0
    w1 = read_weights(d / f"{method}.w1.txt")
    assert set(read_weights(d / "w0.txt")) <= set(w1)
    # the next iteration reads this iteration's lattices plus the aggregated paths
    _decode(cli, d, d / f"{method}.w1.txt", f"{method}.it1")
    r = cli("tune", method, "--lattice", d / f"{method}.it1.lat.gz", "--kbest", d / f"{method}.paths1.gz",
            "--refs", refs, "--init", d / f"{method}.w1.txt", "--out", d / f"{method}.w2.txt",
            "--paths-out", d / f"{method}.paths2.gz", "--seed", "3", "--info", d / f"{method}.info2.json", *extra)
    assert r.returncode == 0, r.stderr
    info2 = json.loads((d / f"{method}.info2.json").read_text())
    assert info2["paths_in"] == info["paths_new"]
    n1 = len(gzip.decompress((d / f"{method}.paths1.gz").read_bytes()).decode().splitlines())
    n2 = len(gzip.decompress((d / f"{method}.paths2.gz").read_bytes()).decode().splitlines())
    assert n2 == n1 + info2["paths_new"]


def test_lbmert_jobs_give_byte_identical_outputs(setup, refs, cli):
    d, _ = setup
    outs = []
    for jobs in (1, 2):
        tag = f"lbmert.jobs{jobs}"
        r = cli("tune", "lbmert", "--lattice", d / "it0.lat.gz", "--refs", refs, "--init", d / "w0.txt",
                "--out", d / f"{tag}.w", "--paths-out", d / f"{tag}.paths.gz", "--info", d / f"{tag}.json",
                "--seed", "2", "--tokenize", "none", "--set", "random_restarts=3", "--jobs", str(jobs), "--quiet")
        assert r.returncode == 0, r.stderr
        outs.append([(d / f"{tag}.{x}").read_bytes() for x in ("w", "json")]
                    + [gzip.decompress((d / f"{tag}.paths.gz").read_bytes())])
    assert outs[0] == outs[1]
    assert json.loads(outs[0][1])["paths_new"] > 0
    r = cli("tune", "lbmert", "--lattice", d / "it0.lat.gz", "--refs", refs, "--init", d / "w0.txt",
            "--out", d / "x.w", "--jobs", "0", "--tokenize", "none")
    assert r.returncode == 2 and "--jobs" in r.stderr


def test_lattice_tuner_needs_lattices(setup, refs, cli):
    d, _ = setup
    r = cli("tune", "lbmira", "--refs", refs, "--init", d / "w0.txt", "--out", d / "x.txt")
    assert r.returncode == 2 and "--lattice" in r.stderr


def test_mira_shards_and_mix_equal_the_one_process_run_and_repeat_bit_identically(setup, refs, cli):
    d, _ = setup
    common = ["--model", d / "model", "--source", d / "dev.fr", "--refs", refs, "--seed", "5",
              "--set", "shards=3", "--stack-size", "20", "--tokenize", "none"]
    outs = []
    for k in range(2):
        r = cli("tune", "mira", *common, "--init", d / "w0.txt", "--out", d / f"mira.all{k}.txt",
                "--mixed-out", d / f"mira.mixed{k}.txt", "--state-out", d / f"mira.state{k}.json")
        assert r.returncode == 0, r.stderr
        outs.append((d / f"mira.all{k}.txt").read_bytes())
    assert outs[0] == outs[1]
    shard_files = []
    for shard in range(3):
        r = cli("tune", "mira", *common, "--init", d / "w0.txt", "--shard", str(shard), "--out", d / f"shard{shard}.json")
        assert r.returncode == 0, r.stderr
        shard_files.append(d / f"shard{shard}.json")
    r = cli("tune", "mira", "--mix", *shard_files, "--out", d / "mira.mix.txt", "--mixed-out", d / "mira.mixm.txt",
            "--state-out", d / "mira.mstate.json")
    assert r.returncode == 0, r.stderr
    assert (d / "mira.mix.txt").read_bytes().split(b"\n", 1)[1] == outs[0].split(b"\n", 1)[1]
    assert read_weights(d / "mira.mix.txt") != read_weights(d / "w0.txt")
    # mixing: the mixture is the mean of the shards' final weights
    results = [json.loads(p.read_text()) for p in shard_files]
    mixed = read_weights(d / "mira.mixm.txt")
    for i, name in enumerate(results[0]["names"]):
        assert mixed[name] == pytest.approx(np.mean([r["weights"][i] for r in results]), rel=1e-12, abs=1e-15)
    # a second epoch continues every shard's pseudo-document from the state
    r = cli("tune", "mira", *common, "--init", d / "mira.mixm.txt", "--shard", "0", "--state", d / "mira.mstate.json",
            "--out", d / "e2shard0.json")
    assert r.returncode == 0, r.stderr
    state = json.loads((d / "mira.mstate.json").read_text())
    assert state["bg"]["0"] == results[0]["bg"]


def test_mira_takes_the_decoders_search_options(setup, refs, cli):
    """The workflow gives every decoding command the same search options (rules/common.smk decoder_options):
    ``smtlib tune mira`` must take ``--search cube --pop-limit N`` and decode with them."""
    d, _ = setup
    common = ["--model", d / "model", "--source", d / "dev.fr", "--refs", refs, "--seed", "5", "--set", "shards=1",
              "--stack-size", "20", "--tokenize", "none", "--init", d / "w0.txt", "--shard", "0"]
    results = {}
    for tag, search in (("stack", []), ("cube1", ["--search", "cube", "--pop-limit", "1"]),
                        ("cube1b", ["--search", "cube", "--pop-limit", "1"])):
        r = cli("tune", "mira", *common, *search, "--out", d / f"search.{tag}.json")
        assert r.returncode == 0, r.stderr
        results[tag] = json.loads((d / f"search.{tag}.json").read_text())["weights"]
    assert results["cube1"] == results["cube1b"]
    assert results["cube1"] != results["stack"]  # one pop per stack: a different search, different updates
    r = cli("tune", "mira", *common, "--search", "cube", "--pop-limit", "0", "--out", d / "search.bad.json")
    assert r.returncode == 2 and "--pop-limit" in r.stderr
    assert not (d / "search.bad.json").exists()


def test_references_longer_than_the_lattices_are_chosen_by_their_ids_and_the_source_needs_refs_prefix(setup, refs, cli):
    """One reference line more than the lattice set: its ids choose the lines, so the same weights and
    lattice BLEU, on 10 sentences of 11 reference lines (--refs-prefix accepted, no effect). mira's
    source is a file whose line i is sentence i: longer references are an error naming both counts
    unless --refs-prefix, and shorter ones an error either way."""
    d, lines = setup
    n = len(lines)
    longer = d / "dev.longer.en"
    longer.write_text(refs.read_text(encoding="utf-8") + "one line too many\n", encoding="utf-8")
    common = ["--lattice", d / "it0.lat.gz", "--init", d / "w0.txt", "--tokenize", "none", "--set", "epochs=2"]
    exact = cli("tune", "lbmira", *common, "--refs", refs, "--out", d / "exact.w.txt")
    assert exact.returncode == 0, exact.stderr
    assert f"on {n} sentences of {n} reference lines" in exact.stderr
    for extra in ([], ["--refs-prefix"]):
        r = cli("tune", "lbmira", *common, "--refs", longer, *extra, "--out", d / "long.w.txt")
        assert r.returncode == 0, r.stderr
        assert r.stderr.splitlines()[-1] == exact.stderr.splitlines()[-1].replace(
            f"of {n} reference lines", f"of {n + 1} reference lines")
        assert read_weights(d / "long.w.txt") == read_weights(d / "exact.w.txt")
    mira = ["--model", d / "model", "--source", d / "dev.fr", "--seed", "5", "--set", "shards=1", "--stack-size", "5",
            "--tokenize", "none", "--init", d / "w0.txt", "--shard", "0"]
    r = cli("tune", "mira", *mira, "--refs", longer, "--out", d / "long.json")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert f"dev.fr:{n + 1}: has {n} lines but the references have {n + 1}" in r.stderr and "--refs-prefix" in r.stderr
    r = cli("tune", "mira", *mira, "--refs", longer, "--refs-prefix", "--out", d / "long.json")
    assert r.returncode == 0 and f"scoring {n} sentences of {n + 1} reference lines" in r.stderr, r.stderr
    short = d / "dev.short.en"
    short.write_text("\n".join(refs.read_text(encoding="utf-8").splitlines()[:-1]) + "\n", encoding="utf-8")
    r = cli("tune", "mira", *mira, "--refs", short, "--refs-prefix", "--out", d / "short.json")
    assert r.returncode == 2 and "dev.short.en" in r.stderr and "dev.fr" in r.stderr, r.stderr


def test_lattice_tuners_check_the_init_names_against_the_lattices(setup, refs, cli):
    """Issue 28: the lattice tuners read --init without the names check every other command applies."""
    d, _ = setup
    weights = read_weights(d / "w0.txt")
    bad = d / "typo.w.txt"
    bad.write_text("".join(f"{n.replace('LM0_0', 'LMM0_0')} {v}\n" for n, v in weights.items()), encoding="utf-8")
    line = [n for n in weights].index("LM0_0") + 1
    r = cli("tune", "lbmira", "--lattice", d / "it0.lat.gz", "--refs", refs, "--init", bad, "--tokenize", "none",
            "--out", d / "typo.out.txt")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert f"typo.w.txt:{line}: weight 'LMM0_0' is not a feature of the lattice set" in r.stderr
    assert "did you mean 'LM0_0'?" in r.stderr and not (d / "typo.out.txt").exists()
