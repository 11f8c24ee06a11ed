"""``smtlib train``: bad input, the stages, a whole build on a toy corpus, and (with the shared data)
a small Multi30k system."""

from __future__ import annotations

import gzip
import json
import pathlib

import numpy as np
import pytest

from smtlib.system.modeldir import prepare_input, read_model_spec
from smtlib.weights import read_weights, write_weights


def _toy_corpus(tmp: pathlib.Path, n: int = 60, seed: int = 0) -> tuple[pathlib.Path, pathlib.Path]:
    """A synthetic pair: word-for-word translation with adjective-noun swaps (French-like order)."""
    rng = np.random.default_rng(seed)
    nouns = [("chat", "cat"), ("chien", "dog"), ("maison", "house"), ("voiture", "car"), ("homme", "man")]
    adjs = [("noir", "black"), ("grand", "big"), ("rouge", "red")]
    verbs = [("voit", "sees"), ("aime", "likes")]
    src, tgt = [], []
    for _ in range(n):
        (n1, e1), (n2, e2) = (nouns[k] for k in rng.integers(0, len(nouns), 2))
        (a, ea), (v, ev) = adjs[rng.integers(len(adjs))], verbs[rng.integers(len(verbs))]
        src.append(f"le {n1} {a} {v} le {n2} .")
        tgt.append(f"the {ea} {e1} {ev} the {e2} .")
    s, t = tmp / "train.fr", tmp / "train.en"
    s.write_text("\n".join(src) + "\n", encoding="utf-8")
    t.write_text("\n".join(tgt) + "\n", encoding="utf-8")
    return s, t


def test_help_documents_every_stage(cli):
    done = cli("train", "--help")
    assert done.returncode == 0
    for stage in ("build", "prepare", "align", "phrases", "reordering", "lm", "assemble", "export-moses"):
        assert stage in done.stdout
        sub = cli("train", stage, "--help")
        assert sub.returncode == 0 and "--" in sub.stdout, stage
    assert "--feature-set" in cli("train", "build", "--help").stdout


def test_mismatched_line_counts(cli, tmp_path):
    (tmp_path / "a").write_text("un\ndeux\n")
    (tmp_path / "b").write_text("one\n")
    done = cli("train", "prepare", "--src", tmp_path / "a", "--tgt", tmp_path / "b", "--src-lang", "fr",
               "--tgt-lang", "en", "--work", tmp_path / "w")
    assert done.returncode == 2
    assert "has 2 lines" in done.stderr and "has 1" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "w" / "corpus.src").exists()


def test_empty_corpus(cli, tmp_path):
    (tmp_path / "a").write_text("")
    (tmp_path / "b").write_text("")
    done = cli("train", "build", "--src", tmp_path / "a", "--tgt", tmp_path / "b", "--src-lang", "fr",
               "--tgt-lang", "en", "--out", tmp_path / "m")
    assert done.returncode == 2 and "empty" in done.stderr
    (tmp_path / "a").write_text("\n\n")
    (tmp_path / "b").write_text("x\n\n")
    done = cli("train", "prepare", "--src", tmp_path / "a", "--tgt", tmp_path / "b", "--src-lang", "fr",
               "--tgt-lang", "en", "--work", tmp_path / "w")
    assert done.returncode == 2 and "no sentence pair left" in done.stderr


def test_non_utf8(cli, tmp_path):
    (tmp_path / "a").write_bytes(b"caf\xe9\n")
    (tmp_path / "b").write_text("coffee\n")
    done = cli("train", "prepare", "--src", tmp_path / "a", "--tgt", tmp_path / "b", "--src-lang", "fr",
               "--tgt-lang", "en", "--work", tmp_path / "w")
    assert done.returncode == 2 and "UTF-8" in done.stderr and ":1:" in done.stderr


def test_stages_out_of_order(cli, tmp_path):
    done = cli("train", "assemble", "--work", tmp_path, "--feature-set", "small", "--out", tmp_path / "m")
    assert done.returncode == 2 and "prepare" in done.stderr
    done = cli("train", "phrases", "--work", tmp_path)
    assert done.returncode == 2


def test_prepare_tokenizes_raw_text_and_reports_counts(cli, tmp_path):
    (tmp_path / "a").write_text("Le chat, noir.\n\nUn chien l'aime.\n" + "x " * 100 + "\n", encoding="utf-8")
    (tmp_path / "b").write_text("The black cat.\nx\nA dog likes it.\ny\n", encoding="utf-8")
    done = cli("train", "prepare", "--src", tmp_path / "a", "--tgt", tmp_path / "b", "--src-lang", "fr",
               "--tgt-lang", "en", "--work", tmp_path / "w")
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert (info["read"], info["dropped_empty"], info["dropped_too_long"], info["kept"]) == (4, 1, 1, 2)
    assert info["tokenizer"] == "sacremoses"
    assert (tmp_path / "w" / "corpus.src").read_text(encoding="utf-8").splitlines() == [
        "le chat , noir .", "un chien l&apos; aime .",
    ]


def test_tokenizing_does_not_escape_twice():
    from smtlib.system.corpus import looks_tokenized, tokenize_line

    assert tokenize_line("Parliament&apos;s bill &amp; the \"law\".", "en") == (
        "Parliament &apos;s bill &amp; the &quot; law &quot; ."
    )
    assert looks_tokenized(["le chat , noir .", "qu&apos; un chien ."], "fr")
    assert not looks_tokenized(["Le chat, noir.", "Un chien."], "fr")


@pytest.fixture(scope="module")
def toy_models(tmp_path_factory):
    from smtlib.cli import main

    tmp = tmp_path_factory.mktemp("toy")
    src, tgt = _toy_corpus(tmp)
    out = {}
    for fs in ("small", "big"):
        code = main(["train", "build", "--src", str(src), "--tgt", str(tgt), "--src-lang", "fr", "--tgt-lang", "en",
                     "--feature-set", fs, "--out", str(tmp / fs), "--seed", "3"])
        assert code == 0
        out[fs] = tmp / fs
    return tmp, src, tgt, out


def test_toy_build_small(toy_models):
    _, _, _, models = toy_models
    spec = read_model_spec(models["small"])
    assert spec.dense_weight_names() == [
        "TranslationModel0_0", "TranslationModel0_1", "TranslationModel0_2", "TranslationModel0_3", "LM0_0",
        "WordPenalty0_0", "Distortion0_0",
    ]
    assert spec.reordering == [] and spec.sparse_templates == [] and spec.tokenized_input
    assert list(read_weights(models["small"] / "default.weights")) == spec.dense_weight_names()
    lines = gzip.open(models["small"] / "phrase-table.0.gz", "rt", encoding="utf-8").read().splitlines()
    assert all(len(line.split(" ||| ")) == 5 for line in lines)
    table = {tuple(line.split(" ||| ")[:2]): line.split(" ||| ") for line in lines}
    # "chat" is always translated "cat": the best target of "chat" by p(e|f) is "cat".
    best = max((float(v[2].split()[2]), e) for (f, e), v in table.items() if f == "chat")
    assert best[1] == "cat"


def test_toy_build_big(toy_models):
    _, _, _, models = toy_models
    spec = read_model_spec(models["big"])
    assert len(spec.dense_weight_names()) == 18
    assert [c.name for c in spec.phrase_tables] == ["TranslationModel0", "TranslationModel1"]
    assert [(c.name, c.order) for c in spec.language_models] == [("LM0", 4), ("LM1", 2)]
    assert spec.sparse_templates == ["tgt-unal", "count-bin", "word-pair", "length-bin"]
    assert all(c.description for c in spec.phrase_tables + spec.language_models + spec.reordering)
    pt = gzip.open(models["big"] / "phrase-table.0.gz", "rt", encoding="utf-8").read().splitlines()
    rt = gzip.open(models["big"] / "reordering-table.0.gz", "rt", encoding="utf-8").read().splitlines()
    assert all(len(line.split(" ||| ")) == 6 for line in pt)
    assert [line.split(" ||| ")[:2] for line in pt] == [line.split(" ||| ")[:2] for line in rt]
    assert all(len(line.split(" ||| ")[2].split()) == 6 for line in rt)
    # "le N A voit" -> "the A N sees": the word before "sees" (the noun) is not aligned to the word
    # before "voit" (the adjective) nor after it, so the previous orientation of (voit, sees) is
    # discontinuous; the next one is monotone ("le" -> "the").
    row = {tuple(line.split(" ||| ")[:2]): [float(x) for x in line.split(" ||| ")[2].split()] for line in rt}
    m_prev, s_prev, d_prev, m_next, s_next, d_next = row[("voit", "sees")]
    assert d_prev > max(m_prev, s_prev) and m_next > max(s_next, d_next)
    assert prepare_input(spec, "Le  chat") == "le chat"


def test_toy_build_is_reproducible_and_stages_match(toy_models, cli):
    tmp, src, tgt, models = toy_models
    work = tmp / "stages"
    steps = [
        ["prepare", "--src", src, "--tgt", tgt, "--src-lang", "fr", "--tgt-lang", "en", "--work", work],
        ["align", "--work", work, "--seed", "3", "--threads", "1"],
        ["phrases", "--work", work, "--index", "0", "--sparse"],
        ["reordering", "--work", work, "--index", "0"],
        ["phrases", "--work", work, "--index", "1", "--symmetrization", "union"],
        ["lm", "--work", work, "--index", "0", "--order", "4", "--check", tgt],
        ["lm", "--work", work, "--index", "1", "--order", "2"],
        ["assemble", "--work", work, "--feature-set", "big", "--out", tmp / "big-staged"],
    ]
    for step in steps:
        done = cli("train", *step)
        assert done.returncode == 0, (step, done.stderr)
        if step[0] == "lm" and "--check" in step:
            check = json.loads(done.stdout)["check"]
            assert check["relative_difference"] < 1e-5
    for name in ("phrase-table.0.gz", "phrase-table.1.gz", "reordering-table.0.gz", "lm.0.arpa.gz", "lm.1.arpa.gz"):
        assert (tmp / "big-staged" / name).read_bytes() == (models["big"] / name).read_bytes(), name
    assert read_model_spec(tmp / "big-staged") == read_model_spec(models["big"])
    assert (tmp / "big-staged" / "compiled.bin").is_file()  # assemble writes the compiled model
    # the over-fitting set is its table entry: Big with exact count bins, as --count-bins exact says
    for args, out in ((["--feature-set", "overfit"], "overfit"), (["--feature-set", "big", "--count-bins", "exact"], "exact")):
        done = cli("train", "assemble", "--work", work, *args, "--out", tmp / out)
        assert done.returncode == 0, done.stderr
    overfit = read_model_spec(tmp / "overfit")
    assert overfit.feature_set == "overfit" and "count-bin-exact" in overfit.sparse_templates
    assert overfit.dense_features == read_model_spec(models["big"]).dense_features
    assert (tmp / "overfit" / "phrase-table.0.gz").read_bytes() == (tmp / "exact" / "phrase-table.0.gz").read_bytes()
    assert b"cb_eq" in gzip.decompress((tmp / "overfit" / "phrase-table.0.gz").read_bytes())
    done = cli("train", "assemble", "--work", work, "--feature-set", "medium", "--count-bins", "exact", "--out", tmp / "x")
    assert done.returncode == 2 and "sparse features" in done.stderr
    # the reordering stage writes its own JSON; the phrase table's stays as 'phrases' wrote it
    assert json.loads((work / "phrases.0.json").read_text())["reordering"] is False
    assert json.loads((work / "reordering.0.json").read_text())["symmetrization"] == "grow-diag-final-and"


def test_stages_with_explicit_files_only(toy_models, cli):
    """Every stage given its files one by one, each in a directory of its own (no --work): the same
    model as 'train build' (model.yaml, default.weights and every table byte for byte); a stage reads
    nothing it was not given (the inputs live in directories holding nothing else)."""
    tmp, src, tgt, models = toy_models
    root = tmp / "explicit"

    def f(name: str) -> pathlib.Path:
        (root / name).mkdir(parents=True, exist_ok=True)
        return root / name / name

    steps = [
        ["prepare", "--src", src, "--tgt", tgt, "--src-lang", "fr", "--tgt-lang", "en", "--corpus-src", f("cs"),
         "--corpus-tgt", f("ct"), "--prepare-info", f("pi")],
        ["align", "--corpus-src", f("cs"), "--corpus-tgt", f("ct"), "--symmetrize", "grow-diag-final-and", "union",
         "--aligned", f("a0"), f("a1"), "--forward", f("fw"), "--reverse", f("rv"), "--align-info", f("ai"),
         "--seed", "3", "--threads", "1"],
        ["phrases", "--corpus-src", f("cs"), "--corpus-tgt", f("ct"), "--aligned", f("a0"), "--phrase-table",
         f("p0.gz"), "--phrases-info", f("j0"), "--reordering-table", f("r0.gz"), "--sparse"],
        ["phrases", "--corpus-src", f("cs"), "--corpus-tgt", f("ct"), "--aligned", f("a1"), "--symmetrization",
         "union", "--phrase-table", f("p1.gz"), "--phrases-info", f("j1")],
        ["lm", "--corpus-tgt", f("ct"), "--order", "4", "--lm", f("l0.gz"), "--lm-info", f("i0")],
        ["lm", "--corpus-tgt", f("ct"), "--order", "2", "--lm", f("l1.gz"), "--lm-info", f("i1")],
        ["assemble", "--feature-set", "big", "--prepare-info", f("pi"), "--align-info", f("ai"), "--phrase-table",
         f("p0.gz"), f("p1.gz"), "--phrases-info", f("j0"), f("j1"), "--lm", f("l0.gz"), f("l1.gz"), "--lm-info",
         f("i0"), f("i1"), "--reordering-table", f("r0.gz"), "--out", root / "model" / "model.yaml"],
    ]
    for step in steps:
        done = cli("train", *step)
        assert done.returncode == 0, (step, done.stderr)
    written = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert [p for p in written if not p.startswith("model/")] == sorted(
        f"{n}/{n}" for n in ("cs", "ct", "pi", "a0", "a1", "fw", "rv", "ai", "p0.gz", "j0", "r0.gz", "p1.gz", "j1",
                             "l0.gz", "i0", "l1.gz", "i1")
    )
    for name in ("model.yaml", "default.weights", "phrase-table.0.gz", "phrase-table.1.gz", "reordering-table.0.gz",
                 "lm.0.arpa.gz", "lm.1.arpa.gz"):
        assert (root / "model" / name).read_bytes() == (models["big"] / name).read_bytes(), name
    # assemble checks what it was given against the feature set
    done = cli("train", "assemble", "--feature-set", "medium", "--prepare-info", f("pi"), "--phrase-table", f("p0.gz"),
               "--phrases-info", f("j0"), "--lm", f("l0.gz"), "--lm-info", f("i0"), "--out", root / "bad")
    assert done.returncode == 2 and "2 phrase table(s)" in done.stderr
    done = cli("train", "lm", "--order", "2", "--lm", f("l9.gz"), "--lm-info", f("i9"))
    assert done.returncode == 2 and "--corpus-tgt or --work" in done.stderr


def _decode_outputs(cli, model, weights, src, out) -> tuple[dict[str, bytes], str]:
    """``smtlib decode`` (1-best and 100-best); the outputs' bytes and stderr."""
    done = cli("decode", "--model", model, "--weights", weights, "--input", src, "--output", out.with_suffix(".best"),
               "--kbest", out.with_suffix(".kbest"), "--k", "100", "--quiet")
    assert done.returncode == 0, done.stderr
    return {ext: out.with_suffix(f".{ext}").read_bytes() for ext in ("best", "kbest")}, done.stderr


def test_build_writes_a_compiled_model_the_decoder_uses(toy_models, cli, tmp_path):
    """The trained toy systems: ``smtlib decode`` reads compiled.bin and gives byte-identical 1-best
    and 100-best output to decoding from the text tables (a copy without compiled.bin); a truncated
    compiled.bin is not used (one note line on stderr, exit 0, the text tables' output)."""
    import shutil

    from smtlib.decoder.loader import load_model

    _, src, _, models = toy_models
    lines = src.read_text(encoding="utf-8").splitlines()[:12] + ["le chat bleu mange la souris .", "voit voit le"]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rng = np.random.default_rng(5)
    for fs in ("small", "big"):
        report = json.loads((models[fs] / "build.json").read_text())
        assert report["stages"]["compile"]["result"]["entries"] > 0
        assert load_model(models[fs], [["le", "chat", "noir", "voit"]]).compiled
        weights = dict(read_weights(models[fs] / "default.weights"))
        if fs == "big":  # nonzero weights on the sparse features the table carries
            with gzip.open(models[fs] / "phrase-table.0.gz", "rt", encoding="utf-8") as fh:
                names = sorted({n for line in fh for n in line.split(" ||| ")[5].split()[::2]})
            assert names
            weights.update({n: float(rng.uniform(-0.5, 0.5)) for n in names})
        wfile = tmp_path / f"{fs}.weights"
        write_weights(wfile, weights)
        text_dir = tmp_path / f"{fs}-text"
        shutil.copytree(models[fs], text_dir, ignore=shutil.ignore_patterns("compiled.bin"))
        compiled, err = _decode_outputs(cli, models[fs], wfile, tmp_path / "in.txt", tmp_path / f"{fs}-compiled")
        assert "not used" not in err
        text, _ = _decode_outputs(cli, text_dir, wfile, tmp_path / "in.txt", tmp_path / f"{fs}-text")
        assert text["kbest"].count(b"\n") > 10 * len(lines)
        assert compiled == text, fs
        broken_dir = tmp_path / f"{fs}-broken"
        shutil.copytree(models[fs], broken_dir)
        data = (broken_dir / "compiled.bin").read_bytes()
        (broken_dir / "compiled.bin").write_bytes(data[: len(data) - 100])
        broken, err = _decode_outputs(cli, broken_dir, wfile, tmp_path / "in.txt", tmp_path / f"{fs}-broken")
        assert err.count("\n") == 1 and "compiled.bin: not used (unreadable: truncated" in err, err
        assert broken == text, fs


def test_export_moses(toy_models, cli):
    tmp, _, _, models = toy_models
    (tmp / "w.txt").write_text("LM0_0 0.7\nTranslationModel0_2 0.1\ntu_the 0.05\n")
    done = cli("train", "export-moses", "--model", models["big"], "--out", tmp / "moses", "--weights", tmp / "w.txt")
    assert done.returncode == 0, done.stderr
    ini = (tmp / "moses").joinpath("moses.ini").read_text()
    assert "PhraseDictionaryMemory name=TranslationModel0 num-features=8" in ini  # the merged tables
    assert "LexicalReordering name=LexicalReordering0 num-features=6 type=wbe-msd-bidirectional-fe-allff" in ini
    assert "KENLM name=LM1 factor=0" in ini and "order=2" in ini
    assert "LM0= 0.7" in ini and "TranslationModel0_tu_the= 0.05" in ini
    for line in ini.splitlines():
        if "path=" in line:
            assert pathlib.Path(line.split("path=")[1].split()[0]).is_file()


@pytest.mark.slow
@pytest.mark.data
def test_small_multi30k_system(shared_data, tmp_path, cli):
    tok = shared_data / "multi30k" / "tok"
    for lang in ("fr", "en"):
        with gzip.open(tok / f"train.lc.norm.tok.{lang}.gz", "rt", encoding="utf-8") as fh:
            lines = [next(fh) for _ in range(3000)]
        (tmp_path / f"train.{lang}").write_text("".join(lines), encoding="utf-8")
    done = cli("train", "build", "--src", tmp_path / "train.fr", "--tgt", tmp_path / "train.en", "--src-lang", "fr",
               "--tgt-lang", "en", "--feature-set", "medium", "--out", tmp_path / "m", "--seed", "1")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "m" / "build.json").read_text())
    prep = report["stages"]["prepare"]["result"]
    assert prep["read"] == 3000 and prep["tokenizer"] == ""  # already tokenized: left as it is
    phrases = report["stages"]["phrases0+reordering"]["result"]
    assert 50_000 < phrases["distinct_pairs"] < 300_000
    spec = read_model_spec(tmp_path / "m")
    assert len(spec.dense_weight_names()) == 18 and spec.lowercase
    pt = gzip.open(tmp_path / "m" / "phrase-table.0.gz", "rt", encoding="utf-8").read().splitlines()
    assert len(pt) == phrases["pairs_written"]
    table = {tuple(line.split(" ||| ")[:2]): [float(x) for x in line.split(" ||| ")[2].split()] for line in pt}
    assert table[("chien", "dog")][2] > 0.5  # p(dog | chien)
    # LM check against kenlm on held-out captions.
    val = tmp_path / "val.en"
    with gzip.open(tok / "val.lc.norm.tok.en.gz", "rt", encoding="utf-8") as fh:
        val.write_text(fh.read(), encoding="utf-8")
    done = cli("train", "lm", "--work", tmp_path / "m" / "work", "--index", "0", "--order", "4", "--check", val)
    check = json.loads(done.stdout)["check"]
    assert check["relative_difference"] < 1e-5 and check["perplexity_kenlm"] < 200


def _toy_medium(cli, tmp_path, *, n: int, seed: int):
    """A Medium model built by `smtlib train build` on ``n`` toy sentence pairs; its directory."""
    src, tgt = _toy_corpus(tmp_path, n=n, seed=seed)
    medium = tmp_path / "medium"
    done = cli("train", "build", "--src", src, "--tgt", tgt, "--src-lang", "fr", "--tgt-lang", "en",
               "--feature-set", "medium", "--out", medium, "--seed", "1")
    assert done.returncode == 0, done.stderr
    return medium


def test_rule_template_model_adds_templates_and_keeps_the_rest(cli, tmp_path):
    """`smtlib sgd templates` (Simianer et al. 2012, §3): TranslationModel0 gains the rule templates,
    every other table and the initial weights are the medium model's, byte for byte."""
    medium = _toy_medium(cli, tmp_path, n=40, seed=2)
    out = tmp_path / "templated"
    done = cli("sgd", "templates", "--model", medium / "model.yaml", "--groups", "id", "shape",
               "--out", out / "model.yaml")
    assert done.returncode == 0, done.stderr
    spec, base = read_model_spec(out), read_model_spec(medium)
    components = [c.path for c in base.phrase_tables + base.language_models + base.reordering]
    assert sorted(p.name for p in out.iterdir()) == sorted(["model.yaml", "default.weights", "compiled.bin", *components])
    assert spec.feature_set == "big" and len(spec.sparse_templates) == 2
    assert (out / "default.weights").read_bytes() == (medium / "default.weights").read_bytes()
    for comp in base.phrase_tables + base.language_models + base.reordering:
        same = (out / comp.path).read_bytes() == (medium / comp.path).read_bytes()
        assert same == (comp.name != "TranslationModel0"), comp.name
    table = gzip.decompress((out / base.phrase_tables[0].path).read_bytes()).decode()
    assert "ri_" in table and "rs_" in table and "rn_" not in table


@pytest.mark.parametrize("groups", [("id", "ng", "shape"), ("ng",)])
def test_templated_model_compiled_from_its_base_is_the_text_tables_compile(cli, tmp_path, groups):
    """`smtlib sgd templates` compiles the new model from the Medium model's compiled form
    (SparseOverlay): the same file, byte for byte, as `smtlib train compile` of its text tables; a base
    without its compiled form gives the same file through the text tables."""
    from smtlib.decoder.compiled import FILENAME

    medium = _toy_medium(cli, tmp_path, n=60, seed=4)
    out = tmp_path / "templated"
    done = cli("sgd", "templates", "--model", medium / "model.yaml", "--groups", *groups, "--out", out / "model.yaml")
    assert done.returncode == 0, done.stderr
    overlaid = (out / FILENAME).read_bytes()
    assert cli("train", "compile", "--model", out).returncode == 0
    assert overlaid == (out / FILENAME).read_bytes()
    (medium / FILENAME).unlink()
    again = tmp_path / "again"
    done = cli("sgd", "templates", "--model", medium / "model.yaml", "--groups", *groups, "--out", again / "model.yaml")
    assert done.returncode == 0, done.stderr
    from smtlib.decoder.compiled import CompiledModel

    assert CompiledModel(again / FILENAME).arrays["sparse_vals"].tobytes() == \
        CompiledModel(out / FILENAME).arrays["sparse_vals"].tobytes()
    assert (again / FILENAME).stat().st_size == len(overlaid)
