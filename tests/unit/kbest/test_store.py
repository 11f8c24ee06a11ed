"""Binary incremental pools (smtlib kbest add / tune --pool) and slicing a full-dev decode (kbest slice).

The reference for a pool is ``read_pool`` over the same text lists followed by ``compute_stats``:
every array must be equal bit for bit, and every tuner must give the same weights on both.
"""

from __future__ import annotations

import dataclasses
import gzip
import json

import numpy as np
import pytest
import scipy.sparse as sp

from smtlib.bleu.references import read_references
from smtlib.bleu.stats import BleuSettings
from smtlib.errors import InputError, TuningError
from smtlib.kbest.pool import read_pool
from smtlib.kbest.store import add_kbest, is_pool_file, load_pool, read_stored
from smtlib.tuners.registry import get_tuner_class, list_tuners

# Four iterations of a 6-sentence dev set. Sentence 3 never gets a hypothesis, sentence 5 only from
# iteration 3 on; empty hypotheses; repeats within and across files; same text with other features
# and the same features with other text; -0.0 next to 0.0; sparse names that appear late, an
# explicit sparse zero; extra fields after the total (in one file: a pool's files share their dense
# features, and a file's lines their number of fields, as read_pool requires).
ITERATIONS = [
    """0 ||| a b c ||| LM0= -1 TM0= -0.5 -0.25 ||| -1.5
0 ||| a b d ||| LM0= -2 TM0= -0.5 -0.25 WT_a~b= 1 ||| -2.5
0 ||| a b c ||| LM0= -1 TM0= -0.5 -0.25 ||| -1.5
1 |||  ||| LM0= -3 TM0= 0 0 ||| -3
2 ||| x y ||| LM0= -0.5 TM0= -1 -1 WT_x~y= 1 WT_y~z= 2 ||| -2
4 ||| p ||| LM0= -1.5 TM0= -2 -0 ||| -3.5
""",
    """0 ||| a b c ||| LM0= -1 TM0= -0.5 -0.25 ||| -1.5
0 ||| a b c ||| LM0= -1.5 TM0= -0.5 -0.25 ||| -2
0 ||| a b e ||| LM0= -1 TM0= -0.5 -0.25 ||| -1.5
1 |||  ||| LM0= -3 TM0= 0 0 ||| -3
1 ||| q ||| LM0= -3 TM0= 0 0 WT_q~r= 0 ||| -3
2 ||| x y ||| LM0= -0.5 TM0= -1 -1 WT_x~y= 1 WT_y~z= 2 ||| -2
2 ||| x y ||| LM0= -0.5 TM0= -1 -1 WT_x~y= 1 ||| -2
4 ||| p ||| LM0= -1.5 TM0= -2 0 ||| -3.5
""",
    """0 ||| a b d ||| LM0= -2 TM0= -0.5 -0.25 WT_a~b= 1 ||| -2.5 ||| 0-0
0 ||| a b c ||| LM0= -1 TM0= -0.5 -0.25 ||| -1.5 ||| 0-0
1 ||| q ||| LM0= -3 TM0= 0 0 WT_q~r= 0 WT_new~one= 3 ||| -3 ||| 0-0
1 ||| q ||| LM0= -3 TM0= 0 0 WT_q~r= 0 ||| -3 ||| 0-0
4 ||| p q ||| LM0= -1 TM0= -2 -1 ||| -4 ||| 0-0
5 ||| z ||| LM0= -1 TM0= -1 -1 ||| -3 ||| 0-0
5 ||| z ||| LM0= -1 TM0= -1 -1 ||| -3 ||| 0-0
""",
    """0 ||| a b c ||| LM0= -1 TM0= -0.5 -0.25 ||| -1.5
0 ||| a b f ||| LM0= -1 TM0= -0.5 -0.25 WT_a~f= 1 ||| -1
2 ||| x y z ||| LM0= -0.25 TM0= -1 -1 WT_y~z= 2 ||| -1.5
4 ||| p ||| LM0= -1.5 TM0= -2 -0 ||| -3.5
5 |||  ||| LM0= -4 TM0= -1 -1 ||| -5
""",
]
REFS = ["a b c", "q r", "x y z", "nothing here", "p q r", "z z"]


@pytest.fixture
def lists(tmp_path):
    paths = []
    for i, text in enumerate(ITERATIONS, 1):
        path = tmp_path / (f"it{i}.kbest" + (".gz" if i % 2 else ""))
        if i % 2:
            path.write_bytes(gzip.compress(text.encode()))
        else:
            path.write_text(text, encoding="utf-8")
        paths.append(path)
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    return paths, ref


def assert_same_pool(a, b):
    assert np.array_equal(a.offsets, b.offsets)
    assert list(a.texts) == list(b.texts)
    assert a.groups == b.groups and a.feature_names == b.feature_names
    assert a.dense.shape == b.dense.shape and np.array_equal(a.dense.view(np.uint64), b.dense.view(np.uint64))
    for name in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(a.sparse, name), getattr(b.sparse, name)), name
    assert a.sparse.shape == b.sparse.shape
    assert np.array_equal(a.totals, b.totals, equal_nan=True)
    assert list(a.extras) == list(b.extras)
    assert a.stats_settings == b.stats_settings
    assert np.array_equal(a.stats, b.stats)
    assert a.duplicates_dropped == b.duplicates_dropped


def text_pool(paths, refs, settings):
    pool = read_pool(paths, n_sentences=len(refs[0]))
    pool.compute_stats(refs, settings)
    return pool


def build_incrementally(paths, refs, settings, out_dir):
    previous, pools = None, []
    for i, path in enumerate(paths, 1):
        out = out_dir / f"it{i}.pool"
        add_kbest(previous, path, refs, settings, out)
        pools.append(out)
        previous = out
    return pools


def test_incremental_pool_equals_read_pool_at_every_iteration(lists, tmp_path):
    paths, ref = lists
    refs = read_references([ref])
    settings = BleuSettings(lowercase=True)
    pools = build_incrementally(paths, refs, settings, tmp_path)
    for i, pool_path in enumerate(pools, 1):
        assert is_pool_file(pool_path) and not is_pool_file(paths[0])
        assert_same_pool(load_pool(pool_path, refs, settings), text_pool(paths[:i], refs, settings))
    final = load_pool(pools[-1], refs, settings)
    # the cases the lists were written for are there
    assert final.sizes()[3] == 0 and final.sizes()[5] > 0
    assert "" in list(final.texts) and "WT_new~one" in final.sparse_names
    assert final.duplicates_dropped > 0
    # several lists in one call give the same pool
    add_kbest(None, paths, refs, settings, tmp_path / "all.pool")
    assert_same_pool(load_pool(tmp_path / "all.pool"), final)


@pytest.mark.parametrize("method", list_tuners())
def test_every_tuner_gives_the_same_weights_on_both_pools(lists, tmp_path, method):
    paths, ref = lists
    refs = read_references([ref])
    settings = BleuSettings()
    pools = build_incrementally(paths, refs, settings, tmp_path)
    cls = get_tuner_class(method)
    for i in (2, len(paths)):
        binary = load_pool(pools[i - 1], refs, settings)
        text = text_pool(paths[:i], refs, settings)
        if not cls.supports_sparse:  # MERT: the dense part of both pools
            binary, text = (dataclasses.replace(p, sparse=sp.csr_matrix((p.n_hypotheses, 0)), sparse_names=[])
                            for p in (binary, text))
        init = text.weight_vector({"LM0_0": 1.0, "TM0_0": 0.5, "TM0_1": 0.5})
        outcomes = []
        for pool in (binary, text):
            try:
                outcomes.append(cls(seed=3)(pool, init.copy()).weights.tobytes())
            except TuningError as exc:  # svm, rampion: λ = 1000 zeroes the weights on this tiny pool
                outcomes.append(str(exc))
        assert outcomes[0] == outcomes[1]


def test_cli_add_then_tune_equals_tune_on_text_lists(lists, tmp_path, cli):
    paths, ref = lists
    init = tmp_path / "init.weights"
    init.write_text("LM0_0 1\nTM0_0 0.5\nTM0_1 0.5\n", encoding="utf-8")
    # the first list alone has no sentence 5: its pool covers 5 sentences of the 6 reference lines
    r = cli("kbest", "add", "--kbest", paths[0], "--refs", ref, "--lowercase", "--out", tmp_path / "p0")
    assert r.returncode == 0, r.stderr
    first = json.loads(cli("kbest", "stats", tmp_path / "p0", "--refs", ref, "--lowercase").stdout)
    ids = {int(line.split(" ||| ")[0]) for line in gzip.decompress(paths[0].read_bytes()).decode().splitlines()}
    assert (first["sentences"], first["reference_lines"]) == (len(ids), 6) and max(ids) < 5
    r = cli("kbest", "add", "--kbest", *paths[:3], "--refs", ref, "--lowercase", "--out", tmp_path / "p1")
    assert r.returncode == 0, r.stderr
    r = cli("kbest", "add", "--pool", tmp_path / "p1", "--kbest", paths[3], "--refs", ref, "--lowercase",
            "--out", tmp_path / "p4")
    assert r.returncode == 0 and r.stderr.count("new hypotheses") == 1, r.stderr
    outs = []
    for source in (["--pool", tmp_path / "p4"], ["--kbest", *paths]):
        out = tmp_path / f"w{len(outs)}"
        r = cli("tune", "kbmira", *source, "--refs", ref, "--init", init, "--out", out, "--seed", "5", "--lowercase")
        assert r.returncode == 0, r.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    # a pool is also accepted where k-best lists are (tune --kbest, kbest stats)
    r = cli("kbest", "stats", tmp_path / "p4", "--refs", ref, "--lowercase")
    t = cli("kbest", "stats", *paths, "--refs", ref, "--lowercase")
    assert r.returncode == 0 and r.stdout.replace('"files": 1', '"files": 4') == t.stdout


def test_other_references_or_settings_are_an_error(lists, tmp_path, cli):
    paths, ref = lists
    refs = read_references([ref])
    other = [REFS[:-1] + ["z y"]]
    add_kbest(None, paths[0], refs, BleuSettings(), tmp_path / "p1")
    for refs2, settings in ((other, BleuSettings()), (refs, BleuSettings(lowercase=True)), (refs + refs, BleuSettings())):
        with pytest.raises(InputError, match="p1"):
            add_kbest(tmp_path / "p1", paths[1], refs2, settings, tmp_path / "p2")
        with pytest.raises(InputError, match="p1"):
            load_pool(tmp_path / "p1", refs2, settings)
    assert not (tmp_path / "p2").exists()
    # through the command: exit 2, one line, no output
    r = cli("kbest", "add", "--pool", tmp_path / "p1", "--kbest", paths[2], "--refs", ref, "--lowercase",
            "--out", tmp_path / "p2")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "p1" in r.stderr, r.stderr
    assert not (tmp_path / "p2").exists()


def test_bad_pool_files_and_bad_lists(lists, tmp_path):
    paths, ref = lists
    refs = read_references([ref])
    add_kbest(None, paths[0], refs, BleuSettings(), tmp_path / "p1")
    data = (tmp_path / "p1").read_bytes()
    (tmp_path / "cut").write_bytes(data[: len(data) - 8])
    with pytest.raises(InputError, match="truncated"):
        read_stored(tmp_path / "cut")
    with pytest.raises(InputError, match="not a binary k-best pool"):
        read_stored(paths[1])
    bad = tmp_path / "bad.kbest"
    bad.write_text("0 ||| a ||| LM0= -1 TM0= 1 ||| 0\n", encoding="utf-8")  # TM0 with one value, not two
    with pytest.raises(InputError, match="TM0"):
        add_kbest(tmp_path / "p1", bad, refs, BleuSettings(), tmp_path / "p2")
    other = tmp_path / "other.kbest"
    other.write_text("0 ||| a ||| LM0= -1 TM0= 1 1 X0= 0 ||| 0\n", encoding="utf-8")  # a dense group the pool lacks
    with pytest.raises(InputError, match="same dense features"):
        add_kbest(tmp_path / "p1", other, refs, BleuSettings(), tmp_path / "p2")
    beyond = tmp_path / "beyond.kbest"
    beyond.write_text("6 ||| a ||| LM0= -1 ||| 0\n", encoding="utf-8")
    with pytest.raises(InputError, match="out of range"):
        add_kbest(tmp_path / "p1", beyond, refs, BleuSettings(), tmp_path / "p2")
    assert not (tmp_path / "p2").exists()


@pytest.mark.data
def test_incremental_pool_on_moses_lists(shared_data, tmp_path):
    base = shared_data / "moses-mert-nbest/regression/mert-moses-new"
    paths = sorted((base / "data").glob("run*.NBEST.out.gz"), key=lambda p: int(p.name[3:].split(".")[0]))
    refs = read_references([base / f"reference.{i}.gz" for i in range(3)])
    settings = BleuSettings()
    pools = build_incrementally(paths, refs, settings, tmp_path)
    for i in (1, 3, len(paths)):
        assert_same_pool(load_pool(pools[i - 1], refs, settings), text_pool(paths[:i], refs, settings))
    binary, text = load_pool(pools[-1]), text_pool(paths, refs, settings)
    init = np.ones(len(text.feature_names))
    for method in ("mert", "kbmira", "pro"):
        a = get_tuner_class(method)(seed=1)(binary, init.copy())
        b = get_tuner_class(method)(seed=1)(text, init.copy())
        assert a.weights.tobytes() == b.weights.tobytes()


# ------------------------------------------------------------------ slicing a full-dev decode
@pytest.fixture(scope="module")
def decoded(tmp_path_factory):
    """A toy Big model (sparse features), a 14-line input with an empty line, decoded in full."""
    from tests.support.decoder_toy import random_source, start_weights, write_toy_model
    from smtlib.weights import write_weights

    from tests.support.cli_runner import run_cli

    d = tmp_path_factory.mktemp("slice")
    spec = write_toy_model(d / "model", "big", seed=4)
    rng = np.random.default_rng(5)
    lines = random_source(rng, 13, (1, 9))
    lines.insert(6, "")
    (d / "full.src").write_text("\n".join(lines) + "\n", encoding="utf-8")
    weights = start_weights(spec, 0.3, word_penalty=-0.4)
    write_weights(d / "w.txt", weights)
    r = run_cli("decode", "--model", d / "model", "--weights", d / "w.txt", "--input", d / "full.src", "--k", "12",
                "--kbest", d / "full.kbest.gz", "--output", d / "full.1best", "--lattice", d / "full.lattice.gz",
                "--quiet")
    assert r.returncode == 0, r.stderr
    return d, lines


def test_slicing_equals_decoding_the_subsample(decoded, cli):
    d, lines = decoded
    ids = [0, 2, 3, 6, 7, 11, 13]
    (d / "s1.ids").write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")
    (d / "s1.src").write_text("".join(lines[i] + "\n" for i in ids), encoding="utf-8")
    r = cli("decode", "--model", d / "model", "--weights", d / "w.txt", "--input", d / "s1.src", "--k", "12",
            "--kbest", d / "direct.kbest.gz", "--output", d / "direct.1best", "--lattice", d / "direct.lattice.gz",
            "--quiet")
    assert r.returncode == 0, r.stderr
    r = cli("kbest", "slice", "--ids", d / "s1.ids", "--kbest", d / "full.kbest.gz", d / "cut.kbest.gz",
            "--lines", d / "full.1best", d / "cut.1best", "--lattice", d / "full.lattice.gz", d / "cut.lattice.gz")
    assert r.returncode == 0, r.stderr
    for kind in ("kbest.gz", "1best", "lattice.gz"):
        assert (d / f"cut.{kind}").read_bytes() == (d / f"direct.{kind}").read_bytes(), kind
    kb = gzip.decompress((d / "cut.kbest.gz").read_bytes()).decode()
    assert "WT" in kb or "cbin" in kb  # the sparse features came through
    assert {int(line.split(" ||| ")[0]) for line in kb.splitlines()} == set(range(len(ids)))


def test_slicing_errors(decoded, cli, tmp_path):
    from smtlib.data.slicing import read_ids, slice_kbest, slice_lattices, slice_lines

    d, lines = decoded
    for text, message in (("1\n1\n", "listed twice"), ("1\nx\n", "not a non-negative")):
        (tmp_path / "ids").write_text(text, encoding="utf-8")
        with pytest.raises(InputError, match=message):
            read_ids(tmp_path / "ids")
    for function, name in ((slice_kbest, "full.kbest.gz"), (slice_lines, "full.1best"), (slice_lattices, "full.lattice.gz")):
        with pytest.raises(InputError, match=r"ids:2: sentence id 14 is beyond"):
            function(d / name, [0, 14], tmp_path / "out", ids_path="ids")
    assert not (tmp_path / "out").exists()
    (tmp_path / "ids").write_text("0\n14\n", encoding="utf-8")
    r = cli("kbest", "slice", "--ids", tmp_path / "ids", "--kbest", d / "full.kbest.gz", tmp_path / "out.gz")
    assert r.returncode == 2 and "beyond" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "out.gz").exists()


def test_a_header_whose_offsets_have_not_settled_is_never_written(lists, tmp_path, monkeypatch):
    """The arrays' offsets are in the header, whose length depends on their digits: write_stored
    repeats until they settle. A pool of 117,866 hypotheses once took more passes than the writer
    allowed, and the file's header named offsets 64 bytes away from its arrays (read back as garbage).
    With too few passes allowed it must refuse, never write such a file; with enough it round-trips."""
    import smtlib.kbest.store as store

    paths, ref = lists
    add_kbest(None, paths[0], read_references([ref]), BleuSettings(), tmp_path / "p1")
    pool = read_stored(tmp_path / "p1")
    monkeypatch.setattr(store, "_HEADER_PASSES", 1)  # the first pass always moves the offsets from 0
    with pytest.raises(RuntimeError, match="did not settle"):
        store.write_stored(pool, tmp_path / "p2")
    assert not (tmp_path / "p2").exists()
    monkeypatch.undo()
    store.write_stored(pool, tmp_path / "p2")
    again = read_stored(tmp_path / "p2")
    assert all(np.array_equal(again.arrays[k], pool.arrays[k]) for k in pool.arrays)
    # a file whose header points beside its arrays (as that pool's did) is refused, not read as garbage
    raw = bytearray((tmp_path / "p2").read_bytes())
    length = int.from_bytes(raw[len(store.MAGIC) : len(store.MAGIC) + 8], "little")
    header = json.loads(raw[len(store.MAGIC) + 8 : len(store.MAGIC) + 8 + length])
    start = header["arrays"]["offsets"]["offset"]
    raw[start : start + 8] = (7).to_bytes(8, "little")
    (tmp_path / "p3").write_bytes(bytes(raw))
    with pytest.raises(InputError, match="damaged .array offsets is not a row pointer"):
        read_stored(tmp_path / "p3")
