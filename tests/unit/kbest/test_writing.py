"""Writing Moses n-best lines (smtlib.kbest.format): one writer, the bytes of the two it replaced.

Before issue 26 the k-best tools (``render_line``: ``smtlib kbest merge/convert``, pools written back)
and the decoder (``feature_text`` + ``kbest_line``, also the lattice tuners' paths and the Moses
backend) each assembled the line. :func:`old_tools_line` and :func:`old_decoder_line` transcribe
them as they were; every line the one writer gives must be theirs, byte for byte, on values chosen
where printings differ (signed zeros, subnormals, 7+ significant digits, huge and tiny exponents).
"""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.decoder.decoder import Decoder, DecoderConfig
from smtlib.decoder.driver import decode_file
from smtlib.decoder.loader import load_model
from smtlib.io import read_lines
from smtlib.kbest.format import DECODED, EXACT, FeatureGroup, features_field, format_line, kbest_line
from smtlib.kbest.pool import iter_lines, read_pool
from smtlib.weights import format_value, read_weights, write_weights
from tests.support.decoder_toy import random_source, start_weights, write_toy_model


def old_tools_line(sentence_id, text, groups, dense_values, sparse, total, extra):
    """``render_line`` before issue 26: values printed as the shortest text that reads back."""
    parts = []
    pos = 0
    for group in groups:
        values = dense_values[pos : pos + group.size]
        if group.style == "joshua":
            parts.append(f"{group.label}={format_value(values[0])}")
        else:
            parts.append(f"{group.label}{group.style} " + " ".join(format_value(v) for v in values))
        pos += group.size
    parts += [f"{name}= {format_value(value)}" for name, value in sparse]
    line = f"{sentence_id} ||| {text} ||| {' '.join(parts)} ||| {'' if total is None else format_value(total)}"
    if extra is not None:
        line += f" ||| {extra}"
    return line


def old_decoder_line(sent_id, hyp, dense, sparse, total, groups):
    """``format_kbest_line`` (``feature_text`` + ``kbest_line``) before issue 26: 6 digits, total 10."""
    texts = [f"{v:.6g}" for v in np.asarray(dense, dtype=np.float64).tolist()]
    parts = []
    col = 0
    for name, count in groups:
        parts.append(f"{name}= " + " ".join(texts[col : col + count]))
        col += count
    parts += [f"{name}= {v:.6g}" for name, v in sparse.items()]
    return f"{sent_id} ||| {hyp} ||| {' '.join(parts)} ||| {total:.10g}"


EDGE_VALUES = [0.0, -0.0, 5e-324, -2.2250738585072014e-308, 1e-7, 0.1, 1 / 3, -123.456789012, 1234567.0,
               123456789012.5, 1e300, -1.7976931348623157e308, 1e16, 100000.0, 1e-5]


def random_values(rng: np.random.Generator, n: int) -> np.ndarray:
    """Edge values mixed with normals over 16 orders of magnitude (and some small integers)."""
    values = rng.normal(size=n) * 10.0 ** rng.integers(-8, 9, size=n)
    edge = rng.random(n) < 0.4
    values[edge] = rng.choice(EDGE_VALUES, size=int(edge.sum()))
    ints = rng.random(n) < 0.15
    values[ints] = rng.integers(-5, 6, size=int(ints.sum()))
    return values


@pytest.mark.parametrize("seed", range(6))
def test_exact_printing_is_the_former_tools_writer(seed):
    rng = np.random.default_rng(seed)
    groups = (FeatureGroup("d", 3, ":"), FeatureGroup("tm_pt_0", 1, "joshua"), FeatureGroup("TranslationModel0", 4),
              FeatureGroup("LM0", 1))
    for i in range(200):
        dense = random_values(rng, 9)
        sparse = [(f"s_{j}", v) for j, v in enumerate(random_values(rng, int(rng.integers(0, 4))).tolist())]
        total = None if i % 5 == 0 else float(random_values(rng, 1)[0])
        extra = [None, "", "0-0 1-1"][i % 3]
        used = groups[: int(rng.integers(0, len(groups) + 1))]
        want = old_tools_line(i, "a  b", used, dense, sparse, total, extra)
        assert format_line(i, "a  b", used, dense, sparse, total, EXACT, extra) == want


@pytest.mark.parametrize("seed", range(6))
def test_decoded_printing_is_the_former_decoders_writer(seed):
    rng = np.random.default_rng(seed)
    groups = [("TranslationModel0", 4), ("LM0", 1), ("Distortion0", 1), ("WordPenalty0", 1)]
    for i in range(200):
        dense = random_values(rng, 7)
        sparse = dict(zip([f"cbin_{j}" for j in range(5)], random_values(rng, int(rng.integers(0, 5))).tolist()))
        total = float(random_values(rng, 1)[0])
        want = old_decoder_line(i, "x y", dense, sparse, total, groups)
        assert format_line(i, "x y", groups, dense, sparse.items(), total, DECODED) == want
        # the decoder's own path: each value printed once, the fields joined by the same writer
        texts = [DECODED.value(v) for v in dense.tolist()]
        features = features_field(groups, texts, [(n, DECODED.value(v)) for n, v in sparse.items()])
        assert kbest_line(i, "x y", features, DECODED.total(total)) == want


def test_features_field_keeps_labels_with_braces_and_empty_groups():
    """The dense part is a cached format string: a label's braces are text, not fields, and a group
    of no values or a Joshua group of several still moves the columns as the groups say."""
    groups = (FeatureGroup("a{0}", 2), FeatureGroup("e", 0), FeatureGroup("j}", 3, "joshua"), ("LM{", 1))
    texts = ["1", "2", "3", "4", "5", "6"]
    assert features_field(groups, texts, [("x{1}", "7")]) == "a{0}= 1 2 e=  j}=3 LM{= 6 x{1}= 7"
    assert features_field(list(groups), texts, []) == "a{0}= 1 2 e=  j}=3 LM{= 6"
    assert features_field((), [], [("s", "1"), ("t", "2")]) == "s= 1 t= 2"
    assert features_field([["LM0", 1], ["TM0", 2]], ["1", "2", "3"], []) == "LM0= 1 TM0= 2 3"  # lists: no cache key


def test_a_pool_is_written_back_as_the_former_tools_writer_wrote_it(tmp_path):
    """``kbest merge/convert``'s call site: lines read into a pool and written back."""
    rng = np.random.default_rng(3)
    lines = []
    for s in range(4):
        for _ in range(5):
            dense = " ".join(format_value(v) for v in random_values(rng, 5).tolist())
            sparse = " ".join(f"x_{j}= {format_value(v)}" for j, v in enumerate(random_values(rng, 2).tolist()))
            lines.append(f"{s} ||| w{s} v ||| TM0= {dense} {sparse} ||| {format_value(random_values(rng, 1)[0])}")
    (tmp_path / "in.nbest").write_text("\n".join(lines) + "\n", encoding="utf-8")
    pool = read_pool(tmp_path / "in.nbest")
    written = list(iter_lines(pool))
    want = []
    for r in range(pool.n_hypotheses):
        row = pool.sparse.getrow(r)
        sparse = [(pool.sparse_names[c], v) for c, v in zip(row.indices, row.data, strict=True)]
        want.append(old_tools_line(int(pool.sentence_index[r]), pool.texts[r], pool.groups, pool.dense[r], sparse,
                                   float(pool.totals[r]), None))
    assert written == want


@pytest.mark.parametrize("feature_set", ["small", "big"])
def test_the_decoders_kbest_file_is_the_former_writers(tmp_path, feature_set):
    """``smtlib decode --kbest`` on a toy model (``big``: sparse features): every written line is the
    former decoder writer's line of the decoder's own values."""
    spec = write_toy_model(tmp_path / "model", feature_set, seed=3)
    rng = np.random.default_rng(4)
    # weights of many digits, so that the totals use all ten printed digits
    weights = {name: value * float(rng.uniform(0.5, 1.5)) for name, value in start_weights(spec).items()}
    if feature_set == "big":
        weights.update({"cbin_2": 0.3, "cbin_1": -0.2})
    write_weights(tmp_path / "w.txt", weights)
    lines = random_source(rng, 8) + [""]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = DecoderConfig(k=15)
    decode_file(tmp_path / "model", tmp_path / "w.txt", tmp_path / "in.txt", kbest_out=tmp_path / "kb.txt",
                config=config, progress=False)
    model = load_model(tmp_path / "model", [line.split() for line in lines])
    decoder = Decoder(model, model.read_weights(read_weights(tmp_path / "w.txt")), config)
    want = []
    for sid, line in enumerate(lines):
        for kb in decoder.decode(line, sid).kbest:
            want.append(old_decoder_line(sid, kb.hyp, kb.dense, kb.sparse, kb.total, model.layout.groups))
    written = read_lines(tmp_path / "kb.txt", allow_empty=True)
    assert len(want) > 5 * len(lines)
    assert list(written) == want
