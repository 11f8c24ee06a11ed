"""``smtlib train import-moses``: a Moses system as a model directory; export then import decodes identically."""

from __future__ import annotations

import gzip
import pathlib

import numpy as np
import pytest

from smtlib.decoder.driver import decode_file
from tests.support.decoder_toy import estimate_arpa, random_source, write_toy_model
from smtlib.errors import InputError
from smtlib.system.modeldir import read_model_spec
from smtlib.system.moses_export import export_moses
from smtlib.system.moses_import import import_moses
from smtlib.weights import read_weights, write_weights


@pytest.mark.parametrize("feature_set", ["small", "medium", "big"])
def test_export_then_import_decodes_identically(tmp_path, feature_set):
    spec = write_toy_model(tmp_path / "model", feature_set, seed=11)
    rng = np.random.default_rng(12)
    weights = {name: float(rng.uniform(-0.3, 1.0)) for name in spec.dense_weight_names()}
    if feature_set == "big":
        weights.update({"cbin_1": 0.4, "tgtunal_e2": -0.3})
    write_weights(tmp_path / "w.txt", weights)
    lines = random_source(rng, 15, (1, 9))
    (tmp_path / "in.txt").write_text("\n".join(lines + ["f2 unknown f3", ""]) + "\n", encoding="utf-8")
    ini = export_moses(tmp_path / "model", tmp_path / "moses", weights)
    summary = import_moses(ini, tmp_path / "imported")
    assert summary["feature_set"] == feature_set and summary["dropped"] == ["UnknownWordPenalty0"]
    imported = read_model_spec(tmp_path / "imported")
    assert imported.dense_features == spec.dense_features
    assert read_weights(tmp_path / "imported" / "default.weights") == weights
    for model, w, out in ((tmp_path / "model", tmp_path / "w.txt", "a"),
                          (tmp_path / "imported", tmp_path / "imported" / "default.weights", "b")):
        decode_file(model, w, tmp_path / "in.txt", kbest_out=tmp_path / f"{out}.kbest", output=tmp_path / f"{out}.1best",
                    progress=False)
    assert (tmp_path / "a.kbest").read_bytes() == (tmp_path / "b.kbest").read_bytes()
    assert (tmp_path / "a.1best").read_bytes() == (tmp_path / "b.1best").read_bytes()
    if feature_set != "small":  # the merged table was split back: each pair in the tables it came from
        for t in range(2):
            orig = gzip.open(tmp_path / "model" / f"phrase-table.{t}.gz", "rt").read().splitlines()
            back = gzip.open(tmp_path / "imported" / f"phrase-table.{t}.gz", "rt").read().splitlines()
            assert {tuple(x.split(" ||| ")[:3]) for x in orig} == {tuple(x.split(" ||| ")[:3]) for x in back}


def _moses_system(d: pathlib.Path, features: list[str], weights: list[str], scores: int = 4) -> pathlib.Path:
    """A small Moses system laid out as train-model.perl writes it (one table, ARPA LM)."""
    d.mkdir(parents=True, exist_ok=True)
    with gzip.open(d / "phrase-table.gz", "wt", encoding="utf-8") as fh:
        for src, tgt in (("le", "the"), ("chat", "cat"), ("le chat", "the cat"), ("noir", "black")):
            fh.write(f"{src} ||| {tgt} ||| {' '.join(['0.5'] * scores)} ||| 0-0 ||| 1 1 1\n")
    with gzip.open(d / "reordering-table.wbe-msd-bidirectional-fe.gz", "wt", encoding="utf-8") as fh:
        fh.write("le ||| the ||| 0.6 0.2 0.2 0.6 0.2 0.2\n")
    (d / "lm.arpa").write_text(estimate_arpa([["the", "black", "cat"], ["the", "cat"]], 3), encoding="utf-8")
    text = "\n".join(["[input-factors]", "0", "", "[mapping]", "0 T 0", "", "[distortion-limit]", "5", "",
                      "[feature]", *(f.format(d=d) for f in features), "", "[weight]", *weights]) + "\n"
    (d / "moses.ini").write_text(text, encoding="utf-8")
    return d / "moses.ini"


STANDARD = [
    "UnknownWordPenalty",
    "WordPenalty",
    "PhraseDictionaryMemory name=TranslationModel0 num-features=4 path={d}/phrase-table.gz input-factor=0 "
    "output-factor=0 table-limit=10",
    "LexicalReordering name=LexicalReordering0 num-features=6 type=wbe-msd-bidirectional-fe-allff input-factor=0 "
    "output-factor=0 path={d}/reordering-table.wbe-msd-bidirectional-fe.gz",
    "Distortion",
    "KENLM name=LM0 factor=0 path={d}/lm.arpa order=3",
]
STANDARD_WEIGHTS = ["UnknownWordPenalty0= 1", "WordPenalty0= -1", "TranslationModel0= 0.2 0.2 0.2 0.2",
                    "LexicalReordering0= 0.3 0.3 0.3 0.3 0.3 0.3", "Distortion0= 0.3", "LM0= 0.5"]


def test_a_moses_system(tmp_path):
    ini = _moses_system(tmp_path / "sys", STANDARD, STANDARD_WEIGHTS)
    summary = import_moses(ini, tmp_path / "m", copy=True)
    assert summary["distortion_limit"] == "5" and summary["table_limit"] == "10"
    spec = read_model_spec(tmp_path / "m")
    assert spec.dense_features == [("TranslationModel0", 4), ("LM0", 1), ("WordPenalty0", 1), ("Distortion0", 1),
                                   ("LexicalReordering0", 6)]
    assert spec.language_models[0].order == 3 and not spec.lowercase and spec.max_phrase_length == 2
    assert all((tmp_path / "m" / c.path).is_file() for c in spec.phrase_tables + spec.language_models + spec.reordering)
    weights = read_weights(tmp_path / "m" / "default.weights")
    assert weights["WordPenalty0_0"] == -1 and weights["LexicalReordering0_5"] == 0.3 and len(weights) == 13
    (tmp_path / "in.txt").write_text("le chat noir\n", encoding="utf-8")
    decode_file(tmp_path / "m", tmp_path / "m" / "default.weights", tmp_path / "in.txt", output=tmp_path / "out.txt",
                progress=False)
    assert sorted((tmp_path / "out.txt").read_text().split()) == ["black", "cat", "the"]


@pytest.mark.parametrize(("change", "message"), [
    (lambda f, w: (f + ["PhrasePenalty"], w + ["PhrasePenalty0= 0.2"]), "PhrasePenalty0"),
    (lambda f, w: (f + ["OpSequenceModel path=x num-features=5"], w), "OpSequenceModel0"),
    (lambda f, w: ([x.replace("PhraseDictionaryMemory", "PhraseDictionaryCompact") for x in f], w),
     "PhraseDictionaryCompact"),
    (lambda f, w: ([x.replace("num-features=4", "num-features=5") for x in f],
                   [x.replace("0.2 0.2 0.2 0.2", "0.2 0.2 0.2 0.2 0.2") for x in w]), "5 scores"),
    (lambda f, w: ([x.replace("name=LM0", "name=MyLM") for x in f], [x.replace("LM0=", "MyLM=") for x in w]),
     "MyLM"),
    (lambda f, w: ([x.replace("wbe-msd-bidirectional-fe-allff", "hier-msd-bidirectional-fe") for x in f], w),
     "hier-msd"),
    (lambda f, w: ([x for x in f if x != "Distortion"], [x for x in w if not x.startswith("Distortion")]),
     "no Distortion"),
    (lambda f, w: ([x.replace("lm.arpa", "missing.arpa") for x in f], w), "missing.arpa"),
])
def test_unsupported_systems_are_refused_by_name(tmp_path, change, message):
    features, weights = change(list(STANDARD), list(STANDARD_WEIGHTS))
    ini = _moses_system(tmp_path / "sys", features, weights, scores=5 if "5 scores" == message else 4)
    with pytest.raises(InputError, match=message):
        import_moses(ini, tmp_path / "m")
    assert not (tmp_path / "m" / "model.yaml").exists()


def test_binary_lm_and_two_tables_are_refused(tmp_path, cli):
    ini = _moses_system(tmp_path / "sys", STANDARD, STANDARD_WEIGHTS)
    (tmp_path / "sys" / "lm.arpa").write_bytes(b"mmap lm http://kheafield.com/code format version 5\n\0\0")
    done = cli("train", "import-moses", "--ini", ini, "--out", tmp_path / "m")
    assert done.returncode == 2 and "KenLM binary" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    two = STANDARD + [STANDARD[2].replace("TranslationModel0", "TranslationModel1")]
    ini = _moses_system(tmp_path / "sys2", two, STANDARD_WEIGHTS + ["TranslationModel1= 0.2 0.2 0.2 0.2"])
    with pytest.raises(InputError, match="2 phrase tables"):
        import_moses(ini, tmp_path / "m2")
