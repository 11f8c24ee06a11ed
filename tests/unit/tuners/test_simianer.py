"""Simianer, Riezler & Dyer (2012) on the training set: rule templates (§3), shards and jackknifed
folds (§5.1), the mixing / selection step between epochs (Algorithms 2-4), epoch choice and the
approximate randomization test."""

from __future__ import annotations

import gzip
import itertools
import json
import re

import numpy as np
import sacrebleu
import pytest

from smtlib.bleu.corpus import bleu_from_stats
from smtlib.bleu.randomization import approximate_randomization
from smtlib.tuners.sgd import select_columns
from smtlib.tuners.sgd_mixing import choose_epoch, mix_epoch
from smtlib.weights import is_dense_name
from smtlib.errors import InputError
from smtlib.system.jackknife import FoldFiles, fold_of, shard_ids, write_fold
from smtlib.system.sparse import rule_feature_table, rule_features

DENSE_ENDING = re.compile(r"_\d+$")


# -- rule templates (§3) ---------------------------------------------------------------------------
def test_rule_templates_as_the_paper_defines_them():
    f = rule_features("das kleine kind", "the little child", ("id", "ng", "shape"))
    assert f == {
        "ri_das%20kleine%20kind~the%20little%20child": 1,
        "rn_das~kleine": 1,
        "rn_kleine~kind": 1,
        "rs_s3t3": 1,
    }


def test_rule_templates_groups_are_separable_and_counted():
    assert rule_features("a b a b", "x", ("ng",)) == {"rn_a~b": 2, "rn_b~a": 1}
    assert rule_features("haus", "house", ("ng",)) == {}  # one word: no source bigram
    assert rule_features("haus", "the house", ("shape",)) == {"rs_s1t2": 1}
    # the order of the groups does not change the names or their order
    assert list(rule_features("a b", "c", ("shape", "id"))) == list(rule_features("a b", "c", ("id", "shape")))
    with pytest.raises(ValueError):
        rule_features("a", "b", ("gap",))


def test_rule_template_names_are_single_sparse_tokens():
    f = rule_features("l' 2 # x=y", "it 's 10", ("id", "ng", "shape"))
    for name in f:
        assert "_" in name and not any(ch.isspace() for ch in name)
        assert "#" not in name and "=" not in name
        assert not DENSE_ENDING.search(name)
        assert not is_dense_name(name)


def test_rule_feature_table_rewrites_the_sixth_field(tmp_path):
    src = tmp_path / "pt.gz"
    with gzip.open(src, "wt", encoding="utf-8") as fh:
        fh.write("a b ||| x ||| 0.5 0.5 0.5 0.5 ||| 0-0 1-0 ||| 2 2 1\n")
        fh.write("c ||| y z ||| 0.5 0.5 0.5 0.5 ||| 0-0 ||| 2 2 1 ||| cb_le1 1\n")
    out = tmp_path / "out.gz"
    figures = rule_feature_table(src, out, ("ng", "shape"))
    lines = gzip.open(out, "rt", encoding="utf-8").read().splitlines()
    assert lines[0] == "a b ||| x ||| 0.5 0.5 0.5 0.5 ||| 0-0 1-0 ||| 2 2 1 ||| rn_a~b 1 rs_s2t1 1"
    assert lines[1] == "c ||| y z ||| 0.5 0.5 0.5 0.5 ||| 0-0 ||| 2 2 1 ||| rs_s1t2 1"  # old field replaced
    assert figures == {"ng": 1, "shape": 2, "lines": 2}
    bad = tmp_path / "bad"
    bad.write_text("a ||| b ||| 1\n")
    with pytest.raises(InputError, match=r"bad:1: "):
        rule_feature_table(bad, tmp_path / "x.gz", ("id",))


# -- shards and folds (§5.1, jackknifing) -----------------------------------------------------------
def test_shards_are_random_even_disjoint_and_seeded():
    shards = shard_ids(3001, 3, seed=7)
    assert sorted(len(s) for s in shards) == [1000, 1000, 1001]
    joined = np.concatenate(shards)
    assert sorted(joined.tolist()) == list(range(3001))
    assert all(np.all(np.diff(s) > 0) for s in shards)
    again = shard_ids(3001, 3, seed=7)
    assert all(np.array_equal(a, b) for a, b in zip(shards, again))
    other = shard_ids(3001, 3, seed=8)
    assert not np.array_equal(shards[0], other[0])
    assert not np.array_equal(shards[0], np.arange(len(shards[0])))  # not contiguous blocks
    with pytest.raises(InputError):
        shard_ids(2, 3, seed=1)
    assert [fold_of(z, 2) for z in range(5)] == [0, 1, 0, 1, 0]


def _work(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    src = ["der hund", "die katze", "ein zebra", "der hund läuft"]
    tgt = ["the dog", "the cat", "a zebra", "the dog runs"]
    (work / "corpus.src").write_text("\n".join(src) + "\n")
    (work / "corpus.tgt").write_text("\n".join(tgt) + "\n")
    (work / "aligned.grow-diag-final-and").write_text("0-0 1-1\n0-0 1-1\n0-0 1-1\n0-0 1-1 2-2\n")
    (work / "prepare.json").write_text(json.dumps({"src_lang": "de", "tgt_lang": "en", "lowercase": True,
                                                   "tokenizer": ""}))
    return work


def _fold_files(fold):
    return FoldFiles(fold / "corpus.src", fold / "corpus.tgt", [fold / "aligned.gdfa"], fold / "prepare.json",
                     fold / "fold.json")


def test_fold_leaves_the_held_out_sentences_out_of_the_phrase_table(tmp_path):
    from smtlib.system.build import stage_phrases

    work = _work(tmp_path)
    fold = tmp_path / "fold"
    out = _fold_files(fold)
    info = write_fold(work / "corpus.src", work / "corpus.tgt", [work / "aligned.grow-diag-final-and"],
                      work / "prepare.json", np.array([2]), out)
    assert info == {"sentences": 4, "held_out": 1, "kept": 3,
                    "alignments": [str(work / "aligned.grow-diag-final-and")]}
    assert json.loads((fold / "fold.json").read_text()) == info
    assert (fold / "corpus.src").read_text().splitlines() == ["der hund", "die katze", "der hund läuft"]
    assert (fold / "aligned.gdfa").read_text().splitlines() == ["0-0 1-1", "0-0 1-1", "0-0 1-1 2-2"]
    prepare = json.loads((fold / "prepare.json").read_text())
    assert prepare["jackknife"]["held_out"] == 1 and prepare["src_lang"] == "de"
    # exactly the files given, nothing else (the workflow declares them)
    assert sorted(p.name for p in fold.iterdir()) == ["aligned.gdfa", "corpus.src", "corpus.tgt", "fold.json",
                                                      "prepare.json"]
    stage_phrases(out.corpus_src, out.corpus_tgt, out.aligned[0], phrase_table=fold / "pt.gz",
                  phrases_info=fold / "phrases.json", limit=0)
    table = gzip.open(fold / "pt.gz", "rt", encoding="utf-8").read()
    assert "zebra" not in table  # the held-out sentence's phrases are not memorized
    assert "der hund ||| the dog |||" in table
    for held, name in (([0, 1, 2, 3], "empty"), ([9], "beyond")):
        with pytest.raises(InputError):
            write_fold(work / "corpus.src", work / "corpus.tgt", [work / "aligned.grow-diag-final-and"],
                       work / "prepare.json", np.array(held), _fold_files(tmp_path / name))


def test_shards_and_fold_commands_write_exactly_the_files_given(tmp_path, cli):
    work = _work(tmp_path)
    shards = tmp_path / "shards"
    files = {ext: [shards / f"s{z}.{ext}" for z in range(2)] for ext in ("src", "ref", "ids")}
    r = cli("sgd", "shards", "--corpus-src", work / "corpus.src", "--corpus-tgt", work / "corpus.tgt",
            "--seed", "3", "--shard-src", *files["src"], "--shard-ref", *files["ref"], "--shard-ids", *files["ids"])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"shards": 2, "sizes": [2, 2]}
    assert sorted(shards.iterdir()) == sorted(p for paths in files.values() for p in paths)
    corpus = list(zip((work / "corpus.src").read_text().splitlines(), (work / "corpus.tgt").read_text().splitlines()))
    ids = [[int(i) for i in f.read_text().split()] for f in files["ids"]]
    assert sorted(i for shard in ids for i in shard) == [0, 1, 2, 3]
    for z, shard in enumerate(ids):
        assert list(zip(files["src"][z].read_text().splitlines(), files["ref"][z].read_text().splitlines())) == [
            corpus[i] for i in shard]
    fold = tmp_path / "fold"
    r = cli("sgd", "fold", "--corpus-src", work / "corpus.src", "--corpus-tgt", work / "corpus.tgt",
            "--aligned", work / "aligned.grow-diag-final-and", "--prepare-info", work / "prepare.json",
            "--held-out", files["ids"][1], "--fold-src", fold / "a.src", "--fold-tgt", fold / "a.tgt",
            "--fold-aligned", fold / "a.gdfa", "--fold-prepare-info", fold / "p.json", "--fold-info", fold / "f.json")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in fold.iterdir()) == ["a.gdfa", "a.src", "a.tgt", "f.json", "p.json"]
    assert (fold / "a.src").read_text().splitlines() == [corpus[i][0] for i in ids[0]]
    r = cli("sgd", "shards", "--corpus-src", work / "corpus.src", "--corpus-tgt", work / "corpus.tgt",
            "--shard-src", tmp_path / "x.src", "--shard-ref", tmp_path / "x.ref", tmp_path / "y.ref",
            "--shard-ids", tmp_path / "x.ids")
    assert r.returncode == 2 and "per shard" in r.stderr and not (tmp_path / "x.src").exists()


# -- mixing and selection (Algorithms 2-4) ---------------------------------------------------------
def test_itermix_is_the_mean_of_the_shards():
    shards = [{"LM0_0": 1.0, "a_x": 2.0}, {"LM0_0": 3.0, "b_y": 4.0}]
    out, nxt, info = mix_epoch("itermixsgd", shards, None)
    assert out == {"LM0_0": 2.0, "a_x": 1.0, "b_y": 2.0} == nxt
    assert info["epoch"] == 1 and info["nonzero_features"] == 3


def test_iterselsgd_keeps_the_columns_of_largest_l2_norm_figure_2():
    # Simianer et al. (2012), Figure 2 (left): column norms 6, 4, 3, 2, 0
    matrix = np.array([[6, 4, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 2, 0]], dtype=float)
    assert select_columns(matrix, 2).tolist() == [0, 1]
    assert select_columns(matrix, 10).tolist() == [0, 1, 2, 3, 4]
    names = ["f_1", "f_2", "f_3", "f_4", "f_5"]
    shards = [dict(zip(names, row)) for row in matrix.tolist()]
    shards[0]["LM0_0"] = 0.0  # a dense feature with weight 0 is kept in the file
    out, nxt, info = mix_epoch("iterselsgd", shards, None, k=3)
    # the 3 columns of largest norm are f_1, f_2, f_3; LM0_0 (norm 0) is not selected but stays, at 0
    assert out == {"LM0_0": 0.0, "f_1": 2.0, "f_2": 4 / 3, "f_3": 1.0} == nxt
    assert info["k"] == 3


def test_iterselsgd_brute_force_selection():
    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(4, 30)) * (rng.random(30) < 0.5)
    for k in (1, 5, 12):
        norms = np.linalg.norm(matrix, axis=0)
        best = sorted(range(30), key=lambda d: (-norms[d], d))[:k]
        assert select_columns(matrix, k).tolist() == sorted(best)


def test_iterselsgd_default_k_is_the_papers_share_but_keeps_dense():
    shards = [{"LM0_0": 1.0, **{f"s_{chr(97 + i)}": float(i + 1) for i in range(20)}}] * 2
    out, _, info = mix_epoch("iterselsgd", shards, None)
    assert info["k"] == 1  # max(dense 1, ceil(21 * 100k/4.7M) = 1)
    out, _, info = mix_epoch("iterselsgd", shards, None, k_fraction=0.5)
    assert info["k"] == 11 and len([v for v in out.values() if v]) == 11


def test_mixsgd_returns_the_average_over_epochs_and_shards():
    epoch1 = [{"LM0_0": 1.0, "a_x": 1.0}, {"LM0_0": 3.0}]
    out1, nxt1, state1 = mix_epoch("mixsgd", epoch1, None)
    assert out1 == {"LM0_0": 2.0, "a_x": 0.5} and nxt1 == {}
    epoch2 = [{"LM0_0": 5.0, "a_x": 1.0}, {"LM0_0": 3.0, "b_y": 2.0}]
    out2, _, state2 = mix_epoch("mixsgd", epoch2, json.loads(json.dumps(state1)))
    # (1/Z) sum_z (1/T) sum_t w_{z,t}
    assert out2 == pytest.approx({"LM0_0": (1 + 3 + 5 + 3) / 4, "a_x": (1 + 1) / 4, "b_y": 2 / 4})
    assert state2["epoch"] == 2
    with pytest.raises(InputError):
        mix_epoch("sgd", epoch1, None)  # Algorithm 1 has one shard


def test_choose_epoch_prefers_the_earlier_on_ties():
    assert choose_epoch([20.0, 21.5, 21.5, 19.0]) == 2
    with pytest.raises(InputError):
        choose_epoch([])


# -- approximate randomization ----------------------------------------------------------------------
def _stats(rng, n):
    hyp = rng.integers(5, 12, size=n)
    matches = np.stack([np.minimum(hyp - k, rng.integers(0, 10, size=n)).clip(0) for k in range(4)], axis=1)
    totals = np.stack([(hyp - k).clip(0) for k in range(4)], axis=1)
    ref = hyp + rng.integers(-2, 3, size=n)
    return np.column_stack([hyp, ref, matches, totals]).astype(float)


def test_approximate_randomization_against_the_exact_permutation_test():
    rng = np.random.default_rng(0)
    a, b = _stats(rng, 10), _stats(rng, 10)
    observed = 100 * (bleu_from_stats(a.sum(0)) - bleu_from_stats(b.sum(0)))
    count = 0
    for swap in itertools.product([False, True], repeat=10):  # all 2^10 assignments
        s = np.array(swap)
        x = np.where(s[:, None], b, a).sum(0)
        y = np.where(s[:, None], a, b).sum(0)
        count += abs(100 * (bleu_from_stats(x) - bleu_from_stats(y))) >= abs(observed) - 1e-12
    exact = count / 2**10
    diff, p = approximate_randomization(a, b, trials=4000, seed=1)
    assert diff == pytest.approx(observed)
    assert p == pytest.approx(exact, abs=0.03)
    assert approximate_randomization(a, b, trials=500, seed=5) == approximate_randomization(a, b, trials=500, seed=5)


def test_approximate_randomization_identical_and_different_systems():
    rng = np.random.default_rng(1)
    a = _stats(rng, 200)
    assert approximate_randomization(a, a, trials=200, seed=0) == (0.0, 1.0)
    worse = a.copy()
    worse[:, 2:6] = np.floor(worse[:, 2:6] * 0.6)
    diff, p = approximate_randomization(a, worse, trials=200, seed=0)
    assert diff > 0 and p < 0.01
    with pytest.raises(InputError):
        approximate_randomization(a, a[:10])


# -- the CLI steps between epochs ------------------------------------------------------------------
def test_mix_and_choose_commands(tmp_path, cli):
    from smtlib.weights import read_weights

    for e, shards in enumerate([[{"LM0_0": 1.0, "ri_a~b": 2.0}, {"LM0_0": 3.0}],
                                [{"LM0_0": 2.0, "ri_a~b": 0.0}, {"LM0_0": 2.0, "rs_s1t1": 4.0}]], 1):
        ep = tmp_path / f"ep{e}"
        ep.mkdir()
        paths = []
        for z, w in enumerate(shards):
            path = ep / f"shard{z}.weights"
            path.write_text("".join(f"{k} {v}\n" for k, v in w.items()))
            paths.append(str(path))
        state = ["--state", str(tmp_path / f"ep{e - 1}" / "mix.json")] if e > 1 else []
        r = cli("sgd", "mix", "--algorithm", "iterselsgd", "--k", "2", "--shard-weights", *paths, *state,
                "--out", ep / "weights", "--next", ep / "next.weights", "--state-out", ep / "mix.json")
        assert r.returncode == 0, r.stderr
        (ep / "devtest.bleu.json").write_text(json.dumps({"score": [20.0, 25.0][e - 1]}))
    assert dict(read_weights(tmp_path / "ep1" / "weights")) == {"LM0_0": 2.0, "ri_a~b": 1.0}
    # epoch 2: columns LM0_0 (norm 2.83) and rs_s1t1 (4) kept, ri_a~b (0) dropped
    assert dict(read_weights(tmp_path / "ep2" / "weights")) == {"LM0_0": 2.0, "rs_s1t1": 2.0}
    assert json.loads((tmp_path / "ep2" / "mix.json").read_text())["epoch"] == 2
    r = cli("sgd", "choose", "--epochs", tmp_path / "ep1", tmp_path / "ep2", "--out", tmp_path / "chosen.weights",
            "--info", tmp_path / "chosen.json")
    assert r.returncode == 0, r.stderr
    info = json.loads((tmp_path / "chosen.json").read_text())
    assert info["chosen_epoch"] == 2 and [e["nonzero_features"] for e in info["epochs"]] == [2, 2]
    assert dict(read_weights(tmp_path / "chosen.weights")) == {"LM0_0": 2.0, "rs_s1t1": 2.0}
    r = cli("sgd", "mix", "--algorithm", "sgd", "--shard-weights", *paths, "--out", tmp_path / "x",
            "--next", tmp_path / "y", "--state-out", tmp_path / "z")
    assert r.returncode == 2 and "one shard" in r.stderr and not (tmp_path / "x").exists()


TABLE_REFS = ["a man rides a red bike down the street ."] * 30 + ["two dogs play in the green grass ."] * 30


def _table_run(directory, hyps, *, lowercase=False):
    """A run directory of `smtlib sgd table`: test.out, its sacrebleu BLEU, one chosen epoch."""
    directory.mkdir()
    (directory / "test.out").write_text("\n".join(hyps) + "\n")
    bleu = sacrebleu.corpus_bleu(hyps, [TABLE_REFS], tokenize="none", lowercase=lowercase).score
    (directory / "test.bleu.json").write_text(json.dumps({"score": bleu}))
    (directory / "chosen.json").write_text(json.dumps({"chosen_epoch": 1, "epochs": [
        {"epoch": 1, "devtest_bleu": 20.0, "nonzero_features": 18, "features_in_shards": 18}]}))
    return directory


def test_table_command_rows_and_significance(tmp_path, cli):
    refs = TABLE_REFS
    (tmp_path / "test.ref").write_text("\n".join(refs) + "\n")
    good, bad = refs, ["a man ."] * 60
    runs = []
    for name, algo, data, hyps in (("r1", "sgd", "dev", good), ("r3", "itermixsgd", "train", bad),
                                   ("r4", "itermixsgd", "train", good)):
        d = _table_run(tmp_path / name, hyps)
        group = "id" if name == "r4" else "default"
        runs.append(f"{algo}:{data}:{group}={d}")
    r = cli("sgd", "table", "--run", *runs, "--test-refs", tmp_path / "test.ref", "--trials", "200",
            "--out", tmp_path / "t.tsv")
    assert r.returncode == 0, r.stderr
    header, *rows = [line.split("\t") for line in (tmp_path / "t.tsv").read_text().splitlines()]
    table = [dict(zip(header, row)) for row in rows]
    assert [row["features"] for row in table] == ["default", "default", "id"]
    # same group: Algorithm 1 (perfect) against Algorithm 3 (bad), both ways significant
    assert table[0]["significant_vs"] == "3" and table[1]["significant_vs"] == "1"
    assert table[2]["significant_vs"] == "-"  # alone in its group
    # Algorithm 3: the id group is the best of its groups, default is significantly worse (dagger)
    assert table[2]["vs_best_group"] == "best" and table[1]["vs_best_group"].startswith("dagger")


def test_table_replicas_give_mean_s_sel_and_s_opt(tmp_path, cli):
    (tmp_path / "test.ref").write_text("\n".join(TABLE_REFS) + "\n")
    outputs = [TABLE_REFS[:50] + ["a man ."] * 10, TABLE_REFS[:40] + ["a man ."] * 20, TABLE_REFS[:55] + ["two ."] * 5]
    dirs = [_table_run(tmp_path / f"s{i}", hyps) for i, hyps in enumerate(outputs)]
    r = cli("sgd", "table", "--run", *(f"itermixsgd:train:default={d}" for d in dirs), "--test-refs",
            tmp_path / "test.ref", "--trials", "100", "--boot-samples", "200", "--tokenize", "none",
            "--out", tmp_path / "t.tsv")
    assert r.returncode == 0, r.stderr
    header, *rows = [line.split("\t") for line in (tmp_path / "t.tsv").read_text().splitlines()]
    assert len(rows) == 1  # one row per run name; its numbers are the first directory's
    row = dict(zip(header, rows[0]))
    scores = [sacrebleu.corpus_bleu(h, [TABLE_REFS], tokenize="none").score for h in outputs]
    assert row["replicas"] == "3" and row["test_bleu"] == f"{scores[0]:.2f}"
    assert row["test_mean"] == f"{np.mean(scores):.2f}" and row["test_s_opt"] == f"{np.std(scores, ddof=1):.2f}"
    assert float(row["test_s_sel"]) > 0


def test_table_refuses_bleu_settings_other_than_the_runs(tmp_path, cli):
    """The significance tests must be about the BLEU the table shows: a run scored lowercased is refused
    when the table is asked for cased BLEU."""
    (tmp_path / "test.ref").write_text("\n".join(TABLE_REFS) + "\n")
    d = _table_run(tmp_path / "r", [line.upper() for line in TABLE_REFS[:30]] + TABLE_REFS[30:], lowercase=True)
    args = ("sgd", "table", "--run", f"sgd:dev:default={d}", "--test-refs", tmp_path / "test.ref",
            "--trials", "10", "--tokenize", "none", "--out", tmp_path / "t.tsv")
    r = cli(*args)
    assert r.returncode == 2 and "give the BLEU settings the run was scored with" in r.stderr
    assert not (tmp_path / "t.tsv").exists()
    assert cli(*args, "--lowercase").returncode == 0


def test_table_baseline_rows_come_from_the_tables_runs(tmp_path, cli):
    """The paper's MIRA row: runs of the tables' workflow (summary.json, best.weights, test.SET.1best),
    their kept iteration as the chosen epoch, replicas summarized, p-values against the same group."""
    (tmp_path / "test.ref").write_text("\n".join(TABLE_REFS) + "\n")
    sgd = _table_run(tmp_path / "sgd", TABLE_REFS[:45] + ["a man ."] * 15)
    baselines = []
    for i, hyps in enumerate((TABLE_REFS[:50] + ["a man ."] * 10, TABLE_REFS[:52] + ["two ."] * 8)):
        d = tmp_path / f"kb{i}"
        d.mkdir()
        (d / "test.test2017.1best").write_text("\n".join(hyps) + "\n")
        bleu = sacrebleu.corpus_bleu(hyps, [TABLE_REFS], tokenize="none").score
        (d / "summary.json").write_text(json.dumps({"best_iteration": 7 + i, "tests": {"test2016": 30.5, "test2017": bleu}}))
        (d / "best.weights").write_text("LM0 0.5\nWordPenalty -0.2\nTM0_0 0\n")
        baselines.append(f"kbmira:dev:default={d}")
    r = cli("sgd", "table", "--run", f"sgd:dev:default={sgd}", "--baseline", *baselines, "--test-refs",
            tmp_path / "test.ref", "--trials", "100", "--boot-samples", "50", "--tokenize", "none", "--out", tmp_path / "t.tsv")
    assert r.returncode == 0, r.stderr
    header, *rows = [line.split("\t") for line in (tmp_path / "t.tsv").read_text().splitlines()]
    sgd_row, kb_row = (dict(zip(header, row)) for row in rows)
    assert kb_row["algorithm"] == "kbmira" and kb_row["chosen_epoch"] == "7" and kb_row["n_features"] == "2"
    assert kb_row["devtest_bleu"] == "30.50" and kb_row["replicas"] == "2"
    assert "kbmira-dev" in json.loads(sgd_row["p_values"]) and "sgd-dev" in json.loads(kb_row["p_values"])
    r = cli("sgd", "table", "--run", f"sgd:dev:default={sgd}", "--baseline", baselines[0], "--test-name", "test",
            "--test-refs", tmp_path / "test.ref", "--tokenize", "none", "--out", tmp_path / "t2.tsv")
    assert r.returncode == 2 and "has no test set 'test'" in r.stderr
