"""The compiled model (``compiled.bin``): decoding from it gives byte-identical output to decoding
from the text tables, a stale or broken file is detected, and the LM restriction equals filtering."""

from __future__ import annotations

import gzip
import os
import shutil

import numpy as np
import pytest

from smtlib.decoder.compiled import FILENAME, compile_model
from smtlib.decoder.decoder import Decoder, DecoderConfig
from smtlib.decoder.driver import decode_file
from smtlib.decoder.arpa import parse_arpa
from smtlib.decoder.lm import build_lm, read_arpa, table_find
from smtlib.decoder.lm_restrict import keep_mask, restrict, restriction
from smtlib.decoder.loader import load_model
from tests.support.decoder_toy import random_source, write_toy_model
from smtlib.weights import read_weights, write_weights

CONFIGS = {
    "default": DecoderConfig(k=20),
    "tight": DecoderConfig(k=15, stack_size=5, table_limit=3, lattice_beam=0, distinct=False),
    "loose": DecoderConfig(k=10, stack_size=20, table_limit=0, distortion_limit=-1, lattice_beam=3),
}


def _input(seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    lines = random_source(rng, 20, (1, 14), vocab=13)
    return lines + ["", "qq f1 zz", "F1 F2 e3 f1", " ".join(f"f{int(x)}" for x in rng.integers(0, 12, size=40))]


def _few_words(seed: int) -> list[str]:
    """Three sentences that use few of the 40 words of the "wide" toy model: the text loader's
    filtered LMs then give other word bounds than the unfiltered ones (and other lattices, unless
    the compiled model restricts its LMs the same way)."""
    rng = np.random.default_rng(seed)
    return [" ".join(f"f{int(x)}" for x in rng.integers(0, 40, size=8)) for _ in range(3)]


#: name -> (feature set, write_toy_model options, input)
TOYS = {
    "small": ("small", {}, _input(7)),
    "medium": ("medium", {}, _input(7)),
    "big": ("big", {}, _input(7)),
    "wide": ("medium", {"seed": 0, "n_words": 40, "n_multi": 150}, _few_words(0)),
}


def _weights(spec, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    w = {n: float(v) for n, v in zip(spec.dense_weight_names(), rng.uniform(-0.3, 1.0, size=40))}
    w["LM0_0"] = 0.6
    if spec.feature_set == "big":
        w.update({"cbin_1": 0.3, "cbin_2": -0.2, "cbin_3": 0.1, "tgtunal_e3": 0.4, "tgtunal_e5": -0.5})
    return w


def _text_copy(model, dest):
    """The model directory without its compiled form (what decoding from the text tables sees)."""
    shutil.copytree(model, dest, ignore=shutil.ignore_patterns(FILENAME))
    return dest


def _decode_all(model, d, name, config):
    out = {ext: d / f"{name}.{ext}" for ext in ("best", "kbest", "lattice")}
    decode_file(model, d / "w.txt", d / "in.txt", output=out["best"], kbest_out=out["kbest"],
                lattice_out=out["lattice"], config=config, progress=False)
    return {ext: p.read_bytes() for ext, p in out.items()}


@pytest.fixture(scope="module", params=sorted(TOYS))
def compiled_toy(request, tmp_path_factory):
    """A toy model of each kind in TOYS, compiled, with a copy of its text tables, an input and weights."""
    feature_set, options, lines = TOYS[request.param]
    d = tmp_path_factory.mktemp(f"compiled-{request.param}")
    spec = write_toy_model(d / "model", feature_set, **{"seed": 4, **options})
    info = compile_model(d / "model")
    assert info["bytes"] == (d / "model" / FILENAME).stat().st_size
    _text_copy(d / "model", d / "text")
    (d / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_weights(d / "w.txt", _weights(spec, 3))
    return d, spec, lines


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_compiled_output_is_byte_identical(compiled_toy, config):
    d, _, _ = compiled_toy
    text = _decode_all(d / "text", d, f"text-{config}", CONFIGS[config])
    compiled = _decode_all(d / "model", d, f"compiled-{config}", CONFIGS[config])
    assert text["kbest"].count(b"\n") >= 30
    for ext in ("best", "kbest", "lattice"):
        assert compiled[ext] == text[ext], ext


def test_compiled_is_used_and_lazy(compiled_toy):
    d, _, lines = compiled_toy
    sents = [line.split() for line in lines]
    m = load_model(d / "model", sents)
    assert m.compiled and not load_model(d / "model", sents, compiled=False).compiled
    # only the pairs of the input's source phrases are read
    everything = load_model(d / "model", None)
    assert everything.compiled and len(m.entry_tm) < len(everything.entry_tm)


def test_unfiltered_and_unseen_sentences_match_text(compiled_toy):
    """Loading everything (lazy lookups), and decoding a sentence that was not given at load time."""
    d, spec, lines = compiled_toy
    given = [line.split() for line in lines[:5]]
    other = ["f2 f9 zz f1 f3 f12", "f0 f0 f4 e7"]
    for sentences in (None, given):
        results = []
        for compiled in (False, True):
            m = load_model(d / "model", sentences, compiled=compiled)
            dec = Decoder(m, m.read_weights(_weights(spec, 3)), DecoderConfig(k=10))
            results.append([(r.best, r.best_score, [(h, list(v), s, t, f) for h, v, s, t, f in r.kbest])
                            for r in (dec.decode(line, i) for i, line in enumerate(other + lines[:3]))])
        assert results[0] == results[1]


# ---------------------------------------------------------------- staleness
@pytest.fixture
def model_copy(tmp_path):
    spec = write_toy_model(tmp_path / "model", "medium", seed=9)
    compile_model(tmp_path / "model")
    (tmp_path / "in.txt").write_text("f1 f2 f3 f4\nf5 f6 f1\n", encoding="utf-8")
    write_weights(tmp_path / "w.txt", _weights(spec, 1))
    return tmp_path


def _rewrite_table(path, scale: float) -> None:
    """Rewrite a phrase table with every probability multiplied by ``scale`` (same line count)."""
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    out = []
    for line in lines:
        fields = line.split(" ||| ")
        fields[2] = " ".join(f"{float(v) * scale:.4g}" for v in fields[2].split())
        out.append(" ||| ".join(fields))
    path.write_bytes(gzip.compress(("\n".join(out) + "\n").encode(), mtime=0))


def test_stale_compiled_model_is_not_used(model_copy, capsys):
    d = model_copy
    table = d / "model" / "phrase-table.0.gz"
    _rewrite_table(table, 0.5)
    m = load_model(d / "model", [["f1", "f2"]])
    err = capsys.readouterr().err
    assert not m.compiled
    assert err.count("\n") == 1 and "phrase-table.0.gz has changed" in err and "smtlib train compile" in err
    # the output is the text tables' (the new scores), not the compiled file's
    stale = _decode_all(d / "model", d, "stale", DecoderConfig(k=5))
    text = _decode_all(_text_copy(d / "model", d / "text"), d, "text", DecoderConfig(k=5))
    assert stale == text
    compile_model(d / "model")
    assert load_model(d / "model", [["f1", "f2"]]).compiled
    assert _decode_all(d / "model", d, "fresh", DecoderConfig(k=5)) == text


def test_same_size_other_time_and_content_is_caught_by_the_hash(model_copy, capsys):
    d = model_copy
    lm = d / "model" / "lm.0.arpa.gz"  # a plain-text ARPA file under the same name is read as well
    lm.write_bytes(gzip.decompress(lm.read_bytes()))
    compile_model(d / "model")
    data = bytearray(lm.read_bytes())
    i = data.index(b"-0.") + 3  # one digit of a log probability: same size, other content
    data[i] = ord("9") if data[i] != ord("9") else ord("8")
    st = lm.stat()
    lm.write_bytes(bytes(data))
    os.utime(lm, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert lm.stat().st_size == st.st_size
    assert not load_model(d / "model", [["f1"]]).compiled
    assert "lm.0.arpa.gz has changed" in capsys.readouterr().err


def test_copied_directory_keeps_using_it(model_copy, tmp_path, capsys):
    d = model_copy
    shutil.copytree(d / "model", tmp_path / "copy", copy_function=shutil.copyfile)  # new modification times
    assert load_model(tmp_path / "copy", [["f1"]]).compiled
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("damage", ["truncate", "garbage", "version", "foreign", "spec"])
def test_broken_or_foreign_compiled_model(model_copy, tmp_path, capsys, damage):
    d = model_copy
    path = d / "model" / FILENAME
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "garbage":
        path.write_bytes(b"not a model\n")
    elif damage == "version":
        data = path.read_bytes()
        path.write_bytes(data.replace(b"smtlib-compiled-model/1", b"smtlib-compiled-model/0", 1))
    elif damage == "foreign":
        write_toy_model(tmp_path / "other", "medium", seed=10)
        compile_model(tmp_path / "other")
        shutil.copyfile(tmp_path / "other" / FILENAME, path)
    else:  # model.yaml now says big: compiled without the sparse field
        text = (d / "model" / "model.yaml").read_text()
        (d / "model" / "model.yaml").write_text(text.replace("feature_set: medium", "feature_set: big"))
    m = load_model(d / "model", [["f1", "f2"]])
    err = capsys.readouterr().err
    assert not m.compiled
    assert err.count("\n") == 1 and "not used" in err


def test_compile_cli_and_errors(model_copy, cli):
    d = model_copy
    (d / "model" / FILENAME).unlink()
    done = cli("train", "compile", "--model", d / "model")
    assert done.returncode == 0, done.stderr
    assert (d / "model" / FILENAME).is_file() and '"entries"' in done.stdout
    table = d / "model" / "phrase-table.1.gz"
    lines = gzip.decompress(table.read_bytes()).decode().splitlines()
    lines[3] = "f1 ||| e1 ||| 0.5 zz 0.1 0.1"
    table.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    done = cli("train", "compile", "--model", d / "model")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "phrase-table.1.gz:4: non-numeric score" in done.stderr


# ---------------------------------------------------------------- the LM restriction
ARPA = """
\\data\\
ngram 1=7
ngram 2=7
ngram 3=3

\\1-grams:
-1.0\t<unk>\t0
-99\t<s>\t-0.3
-0.8\t</s>
-0.7\ta\t0.2
-0.6\tb\t0
-0.9\tc\t-0.1
-1.1\td\t0.05

\\2-grams:
-0.2\t<s> a\t-0.2
-0.3\ta b\t0
-0.4\tb c\t0.1
-0.5\tc d
-0.25\td a\t0
-0.3\tb </s>
-0.1\tc a\t0.3

\\3-grams:
-0.05\ta b c
-0.15\td a b
-0.12\tc a d

\\end\\
"""


def test_restriction_equals_filtering(tmp_path):
    arpa = tmp_path / "lm.arpa"
    arpa.write_text(ARPA, encoding="utf-8")
    grams = parse_arpa(arpa)
    full = build_lm(grams)
    r = restriction(grams, full)
    assert len(r.fix_rows) == 3 and len(r.pos_bo) == 4  # "b", "a b", "d a": back-off 0, contexts; 4 positive
    differs = 0
    for keep_words in ({"a"}, {"a", "b"}, {"b", "c"}, {"a", "b", "d"}, {"c", "d"}, {"a", "c", "d"}, {"d"}, set("abcd")):
        filtered = read_arpa(arpa, keep_words=keep_words)
        tab = full.tab.copy()
        keep = keep_mask(full, np.array([full.vocab[w] for w in keep_words], dtype=np.int64))
        bounds = restrict(full, r, keep, tab, 0)
        for w in [*keep_words, "<unk>", "<s>", "</s>"]:
            assert bounds[full.vocab[w]] == filtered.max_word_prob[filtered.vocab[w]], (keep_words, w)
            differs += bounds[full.vocab[w]] != full.max_word_prob[full.vocab[w]]
        # every kept n-gram has the flags of the filtered table
        for n, ids in grams.ids.items():
            inv = {i: w for w, i in grams.vocab.items()}
            for row in ids:
                words = [inv[i] for i in row]
                if all(w in keep_words or w in ("<unk>", "<s>", "</s>") for w in words):
                    key_full = _key(row)
                    key_filt = _key(np.array([filtered.vocab[w] for w in words]))
                    a = tab[table_find(tab, 0, full.mask, key_full), 0] & np.uint64(1)
                    b = filtered.tab[table_find(filtered.tab, 0, filtered.mask, key_filt), 0] & np.uint64(1)
                    assert a == b, (keep_words, words)
    assert differs > 0  # the restriction matters: the unfiltered bounds would be wrong


def _key(ids: np.ndarray) -> np.uint64:
    from smtlib.decoder.lm import _keys_for

    return _keys_for(np.asarray(ids, dtype=np.int64).reshape(1, -1))[0]


def test_arpa_word_without_unigram_is_an_error(tmp_path):
    from smtlib.errors import InputError

    arpa = tmp_path / "lm.arpa"
    arpa.write_text(ARPA.replace("-0.3\ta b\t0", "-0.3\ta zz\t0"), encoding="utf-8")
    with pytest.raises(InputError, match="'zz' occurs in an n-gram but has no unigram"):
        read_arpa(arpa)


@pytest.mark.slow
@pytest.mark.data
def test_compiled_matches_text_on_multi30k(shared_data, tmp_path, cli):
    """A system built from 2,000 Multi30k training pairs: 40 dev sentences decoded (1-best, 100-best,
    lattices) with the compiled model and with the text tables, medium and big (random sparse weights)."""
    tok = shared_data / "multi30k" / "tok"
    for lang in ("fr", "en"):
        with gzip.open(tok / f"train.lc.norm.tok.{lang}.gz", "rt", encoding="utf-8") as fh:
            (tmp_path / f"train.{lang}").write_text("".join(next(fh) for _ in range(2000)), encoding="utf-8")
    with gzip.open(tok / "val.lc.norm.tok.fr.gz", "rt", encoding="utf-8") as fh:
        (tmp_path / "in.txt").write_text("".join(next(fh) for _ in range(40)), encoding="utf-8")
    done = cli("train", "build", "--src", tmp_path / "train.fr", "--tgt", tmp_path / "train.en", "--src-lang", "fr",
               "--tgt-lang", "en", "--feature-set", "big", "--out", tmp_path / "big", "--work", tmp_path / "work",
               "--seed", "1")
    assert done.returncode == 0, done.stderr
    done = cli("train", "assemble", "--work", tmp_path / "work", "--feature-set", "medium", "--out", tmp_path / "medium")
    assert done.returncode == 0, done.stderr
    rng = np.random.default_rng(0)
    names = sorted({f.split()[i] for line in gzip.open(tmp_path / "big" / "phrase-table.0.gz", "rt")
                    for f in [line.split(" ||| ")[5]] for i in range(0, len(f.split()), 2)})
    for fs in ("medium", "big"):
        model = tmp_path / fs
        assert (model / FILENAME).is_file()
        weights = dict(read_weights(model / "default.weights"))
        if fs == "big":
            weights.update({n: float(rng.uniform(-0.3, 0.3)) for n in names})
        write_weights(tmp_path / "w.txt", weights)
        config = DecoderConfig(k=100)
        compiled = _decode_all(model, tmp_path, f"{fs}-compiled", config)
        text = _decode_all(_text_copy(model, tmp_path / f"{fs}-text"), tmp_path, f"{fs}-text", config)
        assert compiled["kbest"].count(b"\n") > 40 * 50
        for ext in ("best", "kbest", "lattice"):
            assert compiled[ext] == text[ext], (fs, ext)
