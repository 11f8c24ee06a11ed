"""``smtlib train export-moses``: the merged phrase table, the moses.ini, the weight mapping; and, when
a Moses binary is found, that Moses decodes the export exactly as ``smtlib decode`` does."""

from __future__ import annotations

import gzip
import os
import pathlib
import random
import subprocess

import numpy as np
import pytest

from smtlib.decoder.decoder import DecoderConfig
from tests.support.decoder_toy import random_source, write_toy_model
from smtlib.errors import InputError
from smtlib.system.modeldir import read_model_spec
from smtlib.system.moses_export import MISSING_PROBABILITY, export_moses, feature_map
from smtlib.system.moses_ini import MosesIni
from smtlib.weights import from_moses_ini, write_weights
from tests.support.repo import REPO



def moses_dir() -> pathlib.Path | None:
    """``$SMTLIB_MOSES_BIN`` or ``../shared/peers/moses/bin`` beside the repository, if it holds ``moses``."""
    env = os.environ.get("SMTLIB_MOSES_BIN")
    path = pathlib.Path(env) if env else REPO.parent / "shared" / "peers" / "moses" / "bin"
    return path if (path / "moses").is_file() else None


def _table(path: pathlib.Path) -> dict[tuple[str, str], list[str]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return {tuple(f[:2]): f for f in (line.rstrip("\n").split(" ||| ") for line in fh)}


@pytest.fixture(scope="module")
def toys_by_set(tmp_path_factory):
    """One toy model directory per feature set (small, medium, big)."""
    d = tmp_path_factory.mktemp("moses-export")
    for fs in ("small", "medium", "big"):
        write_toy_model(d / fs, fs, seed=4)
    return d


@pytest.mark.parametrize("feature_set", ["small", "medium", "big"])
def test_merged_table(toys_by_set, tmp_path, feature_set):
    ini_path = export_moses(toys_by_set / feature_set, tmp_path / "out")
    merged_lines = gzip.open(tmp_path / "out" / "phrase-table.gz", "rt", encoding="utf-8").read().splitlines()
    merged = {tuple(line.split(" ||| ")[:2]): line.split(" ||| ") for line in merged_lines}
    assert len(merged) == len(merged_lines)
    assert list(merged) == sorted(merged)
    n_tables = 1 if feature_set == "small" else 2
    tables = [_table(toys_by_set / feature_set / f"phrase-table.{t}.gz") for t in range(n_tables)]
    assert set(merged) == set().union(*tables)
    for pair, fields in merged.items():
        expected = []
        for table in tables:
            expected += table[pair][2].split() if pair in table else [MISSING_PROBABILITY] * 4
        assert fields[2].split() == expected
        sparse = [table[pair][5] for table in tables if pair in table and len(table[pair]) > 5]
        if feature_set == "big" and sparse:
            assert fields[5] == sparse[0]
        else:
            assert len(fields) == 5
    ini = MosesIni.read(ini_path)
    pt = ini.feature("TranslationModel0")
    assert pt.type == "PhraseDictionaryMemory" and pt.count == 4 * len(tables) and pt.params["table-limit"] == "20"
    assert ini.sections["mapping"] == ["0 T 0"]
    assert ini.weights["UnknownWordPenalty0"] == [0.0]
    assert (ini.feature("LexicalReordering0") is None) == (feature_set == "small")


def test_sparse_fields_summed_and_unsorted_tables(tmp_path):
    model = tmp_path / "m"
    write_toy_model(model, "big", seed=5)
    for t, extra in ((0, "x_a 1 x_b 2"), (1, "x_a 0.5")):
        path = model / f"phrase-table.{t}.gz"
        lines = gzip.open(path, "rt", encoding="utf-8").read().splitlines()
        lines = [line.split(" ||| ")[:5] + [extra] for line in lines]
        random.Random(t).shuffle(lines)
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write("".join(" ||| ".join(f) + "\n" for f in lines))
    export_moses(model, tmp_path / "out")
    merged = _table(tmp_path / "out" / "phrase-table.gz")
    both = [f for f in merged.values() if MISSING_PROBABILITY not in f[2].split()]
    one = [f for f in merged.values() if MISSING_PROBABILITY in f[2].split()]
    assert both and one
    assert all(f[5] == "x_a 1.5 x_b 2" for f in both)
    assert all(f[5] == "x_a 1 x_b 2" for f in one)  # pairs of TM0 only (the toy TM1 is a subset)


def test_duplicate_pair_is_an_error(tmp_path):
    model = tmp_path / "m"
    write_toy_model(model, "small", seed=5)
    path = model / "phrase-table.0.gz"
    lines = gzip.open(path, "rt", encoding="utf-8").read().splitlines()
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines + lines[-1:]) + "\n")
    with pytest.raises(InputError, match="given twice"):
        export_moses(model, tmp_path / "out")
    assert not (tmp_path / "out" / "moses.ini").exists()


def test_weight_mapping_round_trip(toys_by_set, tmp_path):
    spec = read_model_spec(toys_by_set / "big")
    names = spec.dense_weight_names()
    weights = {name: float(k) / 10 for k, name in enumerate(names)}
    weights["cbin_2"] = 0.25
    ini = MosesIni.read(export_moses(toys_by_set / "big", tmp_path / "out", weights))
    expected = [weights[f"TranslationModel{t}_{k}"] for t in range(2) for k in range(4)]
    assert ini.weights["TranslationModel0"] == expected
    assert ini.weights["LexicalReordering0"] == [weights[f"LexicalReordering0_{k}"] for k in range(6)]
    assert ini.weights["TranslationModel0_cbin_2"] == [0.25]
    fmap = feature_map(spec, ini)
    # a Moses n-best line's values (named as Moses names them) back in our k-best order
    moses_values = {name: [float(v) for v in values] for name, values in ini.weights.items() if "_" not in name}
    moses_values["UnknownWordPenalty0"] = [-100.0]
    dense, sparse = fmap.convert(moses_values, {"TranslationModel0_cbin_2": 1.0})
    assert dense.tolist() == [weights[n] for n in names]
    assert sparse == {"cbin_2": 1.0}
    with pytest.raises(InputError, match="LM0_1"):
        fmap.moses_weights({"LM0_1": 1.0})
    medium = toys_by_set / "medium"
    medium_map = feature_map(read_model_spec(medium), MosesIni.read(export_moses(medium, tmp_path / "m")))
    with pytest.raises(InputError, match="nofeature"):
        medium_map.moses_weights({"nofeature": 1.0})


def test_cli_export(toys_by_set, tmp_path, cli):
    (tmp_path / "w.txt").write_text("LM0_0 0.7\nTranslationModel1_2 0.1\ncbin_1 0.05\n")
    done = cli("train", "export-moses", "--model", toys_by_set / "big", "--out", tmp_path / "moses", "--weights",
               tmp_path / "w.txt", "--table-limit", "5", "--copy")
    assert done.returncode == 0, done.stderr
    ini = MosesIni.read(tmp_path / "moses" / "moses.ini")
    assert ini.weights["LM0"] == [0.7] and ini.weights["TranslationModel0"][6] == 0.1
    assert ini.weights["TranslationModel0_cbin_1"] == [0.05]
    assert ini.feature("TranslationModel0").params["table-limit"] == "5"
    for feat in ini.features:
        if "path" in feat.params:
            assert pathlib.Path(feat.params["path"]).parent == (tmp_path / "moses").resolve()
    (tmp_path / "bad.txt").write_text("LM0_0 0.7\nLM1_3 1\n")
    done = cli("train", "export-moses", "--model", toys_by_set / "big", "--out", tmp_path / "bad", "--weights",
               tmp_path / "bad.txt")
    assert done.returncode == 2 and "LM1_3" in done.stderr


def _decode_both(model: pathlib.Path, weights: dict[str, float], lines: list[str], tmp: pathlib.Path, binary: str
                 ) -> tuple[list[tuple], list[tuple]]:
    """(1-best, model score, dense features, sparse features) of every line from smtlib decode and from
    Moses on the export (Moses's features in our names), both with stack 1000: a search without
    pruning errors on these short sentences, so that the comparison is of the models alone."""
    from smtlib.decoder.driver import decode_file

    write_weights(tmp / "w.txt", weights)
    (tmp / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    decode_file(model, tmp / "w.txt", tmp / "in.txt", kbest_out=tmp / "ours.kbest", output=tmp / "ours.1best",
                progress=False, config=DecoderConfig(stack_size=1000, k=10))
    ini = export_moses(model, tmp / "moses", weights)
    with open(tmp / "in.txt", "rb") as stdin, open(tmp / "moses.1best", "wb") as out:
        subprocess.run([binary, "-f", str(ini), "-threads", "1", "-s", "1000", "-b", "0", "-distortion-limit", "6",
                        "-n-best-list", str(tmp / "moses.nbest"), "10", "distinct"],
                       stdin=stdin, stdout=out, stderr=subprocess.DEVNULL, check=True)
    fmap = feature_map(read_model_spec(model), MosesIni.read(ini))

    def firsts(path: pathlib.Path, convert: bool) -> list[tuple]:
        best: dict[int, tuple] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            f = line.split(" ||| ")
            if int(f[0]) in best:
                continue
            groups: dict[str, list[float]] = {}
            name = ""
            for tok in f[2].split():
                if tok.endswith("="):
                    name = tok[:-1]
                    groups[name] = []
                else:
                    groups[name].append(float(tok))
            if convert:
                dense_names = [n for n, _ in fmap.groups] + fmap.ignored + list(fmap.pieces)
                dense, sparse = fmap.convert({n: v for n, v in groups.items() if n in dense_names},
                                             {n: v[0] for n, v in groups.items() if n not in dense_names and v[0]})
            else:
                dense = np.concatenate([groups[n] for n, _ in fmap.groups])
                sparse = {n: v[0] for n, v in groups.items() if n not in dict(fmap.groups)}
            best[int(f[0])] = (" ".join(f[1].split()), float(f[-1]), dense, sparse)
        return [best[i] for i in sorted(best)]

    return firsts(tmp / "ours.kbest", False), firsts(tmp / "moses.nbest", True)


@pytest.mark.parametrize("feature_set", ["small", "medium", "big"])
@pytest.mark.parametrize("binary", ["moses", "moses2"])
def test_moses_decodes_the_export_as_we_do(tmp_path, feature_set, binary):
    bindir = moses_dir()
    if bindir is None or not (bindir / binary).is_file():
        pytest.skip("no Moses binary ($SMTLIB_MOSES_BIN or ../shared/peers/moses/bin)")
    model = tmp_path / "model"
    spec = write_toy_model(model, feature_set, seed=7)
    rng = np.random.default_rng(8)
    lines = random_source(rng, 25, (1, 10))
    lines.append("f1 qq f2")  # an unknown word: passed through, no penalty
    weights = {name: float(rng.uniform(-0.5, 1.0)) for name in spec.dense_weight_names()}
    weights.update({"LM0_0": 0.8, "Distortion0_0": 0.3})
    if feature_set == "big" and binary == "moses":  # moses2 reads no sparse features (nor their weights)
        weights.update({"cbin_1": 0.3, "cbin_2": -0.2, "tgtunal_e3": 0.5})
    ours, theirs = _decode_both(model, weights, lines, tmp_path, str(bindir / binary))
    assert len(ours) == len(theirs) == len(lines)
    for a, b in zip(ours, theirs, strict=True):
        assert a[0] == b[0] and abs(a[1] - b[1]) <= 1e-3, (a, b)
        np.testing.assert_allclose(a[2], b[2], rtol=1e-5, atol=1e-5)
        if binary == "moses":
            assert a[3] == b[3]
    assert any(t[3] for t in ours) == (feature_set == "big")


@pytest.mark.parametrize("line, message", [
    ("LM0= nan", "is not finite"),
    ("LM0= 0.5x", "is not a number"),
    ("LM0=", "no value for 'LM0'"),
    ("= 0.5", "expected 'NAME= values'"),
    ("LM0= 0.5\nLM0= 0.7", "weight 'LM0(_0)?' given twice"),
])
def test_weight_section_read_by_the_one_weight_line_reader(tmp_path, line, message):
    """MosesIni reads [weight] through smtlib.weights.parse_weight_line, as from_moses_ini does: a NaN,
    a typo, a missing value or a name given twice is an error at its line, never a weight."""
    ini = tmp_path / "moses.ini"
    ini.write_text("[feature]\nKENLM name=LM0 factor=0 order=3 path=lm.arpa\n\n[weight]\n" + line + "\n")
    for read in (MosesIni.read, from_moses_ini):
        with pytest.raises(InputError, match=message):
            read(ini)
