"""``smtlib decode``: outputs, parallel identity, bad input."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from tests.support.decoder_toy import random_source, start_weights, write_toy_model
from smtlib.weights import write_weights


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    d = tmp_path_factory.mktemp("decode-cli")
    spec = write_toy_model(d / "model", "medium", seed=2)
    rng = np.random.default_rng(3)
    lines = random_source(rng, 10)
    lines += ["", "qq zz xx", " ".join(f"f{int(x)}" for x in rng.integers(0, 12, size=200)), "F1 F2"]
    (d / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    weights = start_weights(spec)
    write_weights(d / "w.txt", weights)
    return d, lines, weights


def test_decode_outputs_and_bad_lines(setup, cli):
    d, lines, _ = setup
    r = cli("decode", "--model", d / "model", "--weights", d / "w.txt", "--input", d / "in.txt",
            "--kbest", d / "kb.gz", "--k", "10", "--output", d / "best.txt", "--lattice", d / "lat.txt")
    assert r.returncode == 0, r.stderr
    assert "sent/s" in r.stderr
    best = (d / "best.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert len(best) == len(lines)
    assert best[10] == ""  # empty line -> empty translation
    assert best[11] == "qq zz xx"  # only unknown words: passed through (monotone is best here)
    assert len(best[12].split()) >= 200 * 0.5  # the 200-word sentence is translated
    assert best[13] == best[13].lower() and best[13]  # lowercased like the model
    kb = gzip.decompress((d / "kb.gz").read_bytes()).decode().splitlines()
    ids = sorted({int(x.split(" ||| ")[0]) for x in kb})
    assert ids == list(range(len(lines)))
    assert any(x.startswith("10 |||  ||| ") for x in kb)


def test_parallel_output_identical(setup, cli):
    d, _, _ = setup
    outs = []
    for jobs in ("1", "2"):
        r = cli("decode", "--model", d / "model", "--weights", d / "w.txt", "--input", d / "in.txt",
                "--kbest", d / f"kb{jobs}.txt", "--lattice", d / f"lat{jobs}.txt", "--jobs", jobs, "--quiet")
        assert r.returncode == 0, r.stderr
        outs.append(((d / f"kb{jobs}.txt").read_bytes(), (d / f"lat{jobs}.txt").read_bytes()))
    assert outs[0] == outs[1]


def test_stdout_one_best(setup, cli):
    d, lines, _ = setup
    r = cli("decode", "--model", d / "model", "--weights", d / "w.txt", "--quiet", input="f1 f2 f3\n")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 1 and r.stdout.strip()


@pytest.mark.parametrize("extra,message", [
    ({"LM5_0": 1.0}, "LM5_0"),
    ({"TranslationModel0_7": 1.0}, "TranslationModel0_7"),
    ({"lm0_0": 1.0}, "did you mean 'LM0_0'"),
    ({"WordPenalty": 1.0}, "did you mean 'WordPenalty0_0'"),
])
def test_unknown_feature_is_an_error(setup, cli, extra, message):
    d, _, weights = setup
    write_weights(d / "bad.txt", {**weights, **extra})
    r = cli("decode", "--model", d / "model", "--weights", d / "bad.txt", "--input", d / "in.txt",
            "--kbest", d / "never.txt")
    assert r.returncode == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (d / "never.txt").exists()


def test_missing_dense_feature(setup, cli):
    """CONTRACT.md: a weight missing from the weights file is 0 -- a whole dense feature or one of its values."""
    d, _, weights = setup
    for missing in (lambda k: k.startswith("LexicalReordering0"), lambda k: k == "LexicalReordering0_3"):
        absent = {k: v for k, v in weights.items() if not missing(k)}
        zeros = {k: 0.0 if missing(k) else v for k, v in weights.items()}
        assert absent != weights and zeros != weights
        outputs = []
        for name, w in (("absent", absent), ("zeros", zeros)):
            write_weights(d / f"{name}.txt", w)
            r = cli("decode", "--model", d / "model", "--weights", d / f"{name}.txt", "--input", d / "in.txt", "--quiet",
                    "--output", d / f"{name}.out")
            assert r.returncode == 0, r.stderr
            outputs.append((d / f"{name}.out").read_text())
        assert outputs[0] == outputs[1]


def test_sparse_weight_for_a_medium_model_is_an_error(setup, cli):
    """A medium model has no sparse features: a sparse name in its weights (a weights file of another
    system, or a misspelt dense name) is an error at its line (issue 28; it used to never fire)."""
    d, _, weights = setup
    write_weights(d / "sparse.txt", {**weights, "cbin_1": 5.0})
    r = cli("decode", "--model", d / "model", "--weights", d / "sparse.txt", "--input", d / "in.txt", "--quiet")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert f"sparse.txt:{len(weights) + 1}: weight 'cbin_1' is not a feature of the medium model, which has no sparse " \
           "features (did you mean" in r.stderr


def test_bad_model_dir(tmp_path, cli, setup):
    d, _, _ = setup
    r = cli("decode", "--model", tmp_path, "--weights", d / "w.txt", "--input", d / "in.txt")
    assert r.returncode == 2 and "model.yaml" in r.stderr
