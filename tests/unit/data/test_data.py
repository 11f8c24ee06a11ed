"""smtlib.data and `smtlib data`: checksummed corpus location, fetch, sub-sampling (§4.3), initial weights (§4.2)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from smtlib.data import corpora
from smtlib.data.corpora import DataFile, content_digest, locate
from smtlib.data.fetch import fetch_pair, part_names
from smtlib.data.init_weights import family, initial_weights
from smtlib.data.subsample import kept_ids, subsample_files
from smtlib.errors import InputError


# ------------------------------------------------------------------ sub-sampling
def test_subsample_zero_is_the_whole_dev_set():
    assert kept_ids(7, 0).tolist() == list(range(7))


def test_subsample_is_fixed_by_seed_and_index_alone():
    a = kept_ids(1000, 2, prob=0.9, seed=1)
    assert np.array_equal(a, kept_ids(1000, 2, prob=0.9, seed=1))
    # the generator of sub-sample s is seeded with (seed, s): drawing s=1 first changes nothing
    kept_ids(1000, 1, prob=0.9, seed=1)
    assert np.array_equal(a, kept_ids(1000, 2, prob=0.9, seed=1))
    assert not np.array_equal(a, kept_ids(1000, 3, prob=0.9, seed=1))
    assert not np.array_equal(a, kept_ids(1000, 2, prob=0.9, seed=2))
    expected = np.flatnonzero(np.random.default_rng([1, 2]).random(1000) < 0.9)
    assert np.array_equal(a, expected)


def test_subsample_keeps_about_ninety_percent():
    sizes = [len(kept_ids(1014, s, prob=0.9, seed=1)) for s in range(1, 5)]
    # binomial(1014, 0.9): sd = 9.6; 5 sd either side
    assert all(864 <= n <= 961 for n in sizes), sizes
    assert len(set(sizes)) > 1


@pytest.mark.parametrize("kwargs", [{"prob": 0.0}, {"prob": 1.5}, {"index": -1}])
def test_subsample_rejects_bad_arguments(kwargs):
    args = {"index": 1, **kwargs}
    index = args.pop("index")
    with pytest.raises(InputError):
        kept_ids(10, index, **args)


def test_subsample_files_keep_lines_aligned(tmp_path):
    src = tmp_path / "dev.src"
    ref = tmp_path / "dev.ref"
    src.write_text("".join(f"s{i}\n" for i in range(50)), encoding="utf-8")
    ref.write_text("".join(f"r{i}\n" for i in range(50)), encoding="utf-8")
    n = subsample_files(src, [ref], tmp_path / "o.src", [tmp_path / "o.ref"], tmp_path / "o.ids", index=1, seed=3)
    ids = [int(x) for x in (tmp_path / "o.ids").read_text().split()]
    assert n == len(ids) and ids == kept_ids(50, 1, seed=3).tolist()
    assert (tmp_path / "o.src").read_text().split() == [f"s{i}" for i in ids]
    assert (tmp_path / "o.ref").read_text().split() == [f"r{i}" for i in ids]


def test_subsample_files_reject_mismatched_references(tmp_path):
    (tmp_path / "a").write_text("x\ny\n", encoding="utf-8")
    (tmp_path / "b").write_text("x\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"b:2: has 1 lines but the source .*a has 2"):
        subsample_files(tmp_path / "a", [tmp_path / "b"], tmp_path / "c", [tmp_path / "d"], tmp_path / "e", index=1)
    assert not (tmp_path / "c").exists()


# ------------------------------------------------------------------ initial weights
def test_initial_weights_follow_section_4_2():
    w = initial_weights([("TranslationModel0", 4), ("LM0", 1), ("WordPenalty0", 1), ("Distortion0", 1),
                         ("TranslationModel1", 4), ("LM1", 1), ("LexicalReordering0", 6)])
    assert len(w) == 18
    assert all(w[f"TranslationModel{t}_{k}"] == 1.0 for t in (0, 1) for k in range(4))
    assert w["LM0_0"] == w["LM1_0"] == w["Distortion0_0"] == 1.0
    assert w["WordPenalty0_0"] == 0.0
    assert all(w[f"LexicalReordering0_{k}"] == 0.0 for k in range(6))
    assert family("TranslationModel12") == "TranslationModel" and family("LM") == "LM"


def test_init_weights_cli_reads_a_model(tmp_path, cli):
    (tmp_path / "model.yaml").write_text(
        "format: smtlib-phrase-model/1\nsource_lang: fr\ntarget_lang: en\nfeature_set: small\nlowercase: true\n"
        "tokenized_input: true\nmax_phrase_length: 7\ndense_features:\n- [TranslationModel0, 4]\n- [LM0, 1]\n"
        "- [WordPenalty0, 1]\n- [Distortion0, 1]\n", encoding="utf-8")
    r = cli("data", "init-weights", "--model", tmp_path, "--out", tmp_path / "w")
    assert r.returncode == 0, r.stderr
    lines = [ln.split() for ln in (tmp_path / "w").read_text().splitlines() if not ln.startswith("#")]
    assert dict(lines) == {"TranslationModel0_0": "1", "TranslationModel0_1": "1", "TranslationModel0_2": "1",
                           "TranslationModel0_3": "1", "LM0_0": "1", "WordPenalty0_0": "0", "Distortion0_0": "1"}
    r = cli("data", "init-weights", "--model", tmp_path / "nope", "--out", tmp_path / "w2")
    assert r.returncode == 2 and "model.yaml" in r.stderr and not (tmp_path / "w2").exists()


# ------------------------------------------------------------------ checksums and locating files
def test_content_digest_is_the_same_for_plain_and_gzip(tmp_path):
    data = b"a b c\nd e\n"
    (tmp_path / "p").write_bytes(data)
    with gzip.open(tmp_path / "g.gz", "wb") as fh:
        fh.write(data)
    assert content_digest(tmp_path / "p") == content_digest(tmp_path / "g.gz")
    assert content_digest(tmp_path / "p")[1] == 2


@pytest.fixture
def fake_entry(tmp_path, monkeypatch):
    """A registry entry for a small file of our own, published at an unreachable URL."""
    data = b"one\ntwo\n"
    import hashlib

    entry = DataFile("corpus/x.txt.gz", "http://127.0.0.1:9/x.txt", hashlib.sha256(data).hexdigest(), 2)
    monkeypatch.setitem(corpora.FILES, "fake/x", entry)
    return entry, data


def test_locate_prefers_the_local_copy_and_checks_it(tmp_path, fake_entry):
    entry, data = fake_entry
    local = tmp_path / "data" / entry.path
    local.parent.mkdir(parents=True)
    with gzip.open(local, "wb") as fh:
        fh.write(data)
    assert locate("fake/x", data_dir=tmp_path / "data", cache=tmp_path / "cache", download=False) == local
    with gzip.open(local, "wb") as fh:
        fh.write(b"one\nTWO\n")
    with pytest.raises(InputError, match="checksum mismatch"):
        locate("fake/x", data_dir=tmp_path / "data", cache=tmp_path / "cache", download=False)


def test_locate_offline_without_a_copy_is_one_clear_error(tmp_path, fake_entry):
    with pytest.raises(InputError) as err:
        locate("fake/x", data_dir=None, cache=tmp_path / "cache", download=True, timeout=5)
    message = str(err.value)
    assert "no local copy of corpus/x.txt.gz" in message and "data_dir" in message
    assert not any((tmp_path / "cache").rglob("*x.txt*"))  # no partial download left behind
    with pytest.raises(InputError, match="downloads are disabled"):
        locate("fake/x", cache=tmp_path / "cache", download=False)
    with pytest.raises(InputError, match="not a directory"):
        locate("fake/x", data_dir=tmp_path / "missing", cache=tmp_path / "cache", download=False)


def test_fetch_cli_offline_exits_2_with_one_line(tmp_path, cli):
    r = cli("data", "fetch", "--pair", "fr-en", "--parts", "dev", "--out", tmp_path / "o",
            "--cache", tmp_path / "cache", "--no-download")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "no local copy of multi30k/tok/val.lc.norm.tok.fr.gz" in r.stderr
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())
    r = cli("data", "fetch", "--pair", "xx-yy", "--out", tmp_path / "o")
    assert r.returncode == 2 and "unknown language pair 'xx-yy'" in r.stderr


def test_registry_is_consistent():
    for name, pair in corpora.PAIRS.items():
        assert name == f"{pair.src}-{pair.tgt}"
        keys = [*pair.train, *pair.dev, *(k for t in pair.tests.values() for k in t)]
        assert all(k in corpora.FILES for k in keys)
        assert corpora.FILES[pair.dev[0]].lines == corpora.FILES[pair.dev[1]].lines
    assert part_names("fr-en") == ["train", "dev", "test.test2016", "test.test2017"]


# ------------------------------------------------------------------ with ../shared/data
@pytest.mark.data
def test_every_registered_file_matches_the_shared_copy(shared_data):
    for key, entry in corpora.FILES.items():
        path = shared_data / entry.path
        if not path.is_file():
            pytest.fail(f"{key}: {entry.path} missing from {shared_data}")
        assert content_digest(path) == (entry.sha256, entry.lines), key


@pytest.mark.data
def test_fetch_pair_writes_aligned_prefixes_and_manifests(shared_data, tmp_path):
    manifests = fetch_pair("fr-en", tmp_path, data_dir=shared_data, cache=tmp_path / "cache", download=False,
                           limits={"dev": 25, "test": 10}, parts=["dev", "test.test2017"])
    assert set(manifests) == {"dev", "test.test2017"}
    assert len((tmp_path / "dev.src").read_text(encoding="utf-8").splitlines()) == 25
    assert len((tmp_path / "test.test2017.ref").read_text(encoding="utf-8").splitlines()) == 10
    src = gzip.open(shared_data / "multi30k/tok/val.lc.norm.tok.fr.gz", "rt", encoding="utf-8").read().splitlines()
    assert (tmp_path / "dev.src").read_text(encoding="utf-8").splitlines() == src[:25]
    m = json.loads((tmp_path / "dev.manifest.json").read_text())
    assert m["files"]["dev.ref"]["lines"] == 25 and m["files"]["dev.ref"]["lines_upstream"] == 1014
    assert not (tmp_path / "train.src").exists()
    with pytest.raises(InputError, match="unknown part"):
        fetch_pair("fr-en", tmp_path, data_dir=shared_data, parts=["test.nope"])


@pytest.mark.data
def test_copy_cli_copies_the_replay_data(shared_data, tmp_path, cli):
    r = cli("data", "copy", "replay/reference.0", "replay/truth/results.dat", "--out-dir", tmp_path,
            "--data-dir", shared_data, "--no-download")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reference.0.gz", "truth_results.dat.gz"]
    assert content_digest(tmp_path / "reference.0.gz")[0] == corpora.FILES["replay/reference.0"].sha256


@pytest.mark.data
def test_copy_cli_writes_the_files_it_is_given(shared_data, tmp_path, cli):
    """``--out FILE...``: one file per key, in order (what the workflow declares); a count mismatch is
    one clear error."""
    outs = [tmp_path / "a" / "ref.gz", tmp_path / "b" / "truth.gz"]
    r = cli("data", "copy", "replay/reference.0", "replay/truth/results.dat", "--out", *outs,
            "--data-dir", shared_data, "--no-download")
    assert r.returncode == 0, r.stderr
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.gz")) == ["a/ref.gz", "b/truth.gz"]
    assert content_digest(outs[0])[0] == corpora.FILES["replay/reference.0"].sha256
    r = cli("data", "copy", "replay/reference.0", "--out", *outs, "--data-dir", shared_data, "--no-download")
    assert r.returncode == 2 and "2 file(s) for 1 key(s)" in r.stderr
