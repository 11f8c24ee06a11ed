"""The compiled lattice writer gives exactly the bytes of the Python formatter it replaced."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from smtlib.decoder.decoder import Decoder, DecoderConfig
from smtlib.decoder.driver import decode_file
from smtlib.lattice.format import (_POW10, _TIE_MARGIN, IndexedValues, Lattice, _g9_digits_nb, format_dense,
                                   lattice_block, lattice_header, read_lattices, write_lattice)
from smtlib.decoder.loader import load_model
from smtlib.decoder.model import prepare_tokens
from smtlib.system.modeldir import read_model_spec
from smtlib.weights import read_weights, write_weights
from tests.support.decoder_toy import random_source, write_toy_model


def reference_value(v: float) -> str:
    """The Python formatter of the lattice format: ``0`` for zeros (-0.0 too), else ``.9g``."""
    return "0" if v == 0.0 else format(v, ".9g")


def reference_block(lat: Lattice) -> str:
    """The Python writer the compiled one replaced (one f-string per edge)."""
    lines = [f"SENTENCE {lat.sent_id} NODES {lat.n_nodes} EDGES {lat.n_edges}\n"]
    for e in range(lat.n_edges):
        dense = " ".join(reference_value(v) for v in np.asarray(lat.dense[e], dtype=np.float64).tolist())
        sparse = " ".join(f"{k}={reference_value(v)}" for k, v in lat.sparse[e].items())
        lines.append(f"{int(lat.tails[e])} {int(lat.heads[e])} ||| {' '.join(lat.words[e])} ||| {dense} ||| {sparse}\n")
    return "".join(lines)


def hard_values(rng: np.random.Generator) -> np.ndarray:
    """Values that stress 9-digit rounding: ties and near-ties, every exponent, powers of ten."""
    n = 20_000
    ten_digit_ties = (rng.integers(10**8, 10**9, size=n) * 10 + 5).astype(np.float64)  # d.ddddddddd5: ties
    near = np.nextafter(ten_digit_ties, np.inf), np.nextafter(ten_digit_ties, -np.inf)
    scale = 10.0 ** rng.integers(-40, 40, size=n)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 1 / 3, 2 / 3, 1e-4, 1e-5, 9.999999995e-5, 0.000123456789,
               123456789.0, 1234567890.0, 999999999.5, 9999999995.0, 999999999.4999999, 1e16, 1e22, 1e23, 1e30,
               1e-14, 1e-15, 1e-300, 5e-324, 1.7976931348623157e308, 2.0**53, 2.0**-30, 123456785e-9]
    powers = [10.0**i for i in range(-30, 31)] + [np.nextafter(10.0**i, 0.0) for i in range(-30, 31)]
    parts = [ten_digit_ties / 1e9, ten_digit_ties * scale / 1e9, near[0] * scale / 1e9, near[1] / 1e9,
             rng.normal(size=n) * 10.0 ** rng.integers(-25, 25, size=n), rng.uniform(-30, 0, size=n),
             np.round(rng.uniform(-30, 0, size=n), 4), -rng.integers(0, 60, size=n).astype(np.float64),
             np.array(special + powers)]
    values = np.concatenate(parts)
    return np.concatenate([values, -values])


def test_values_are_formatted_as_python_does():
    values = hard_values(np.random.default_rng(7))
    assert format_dense(values) == [reference_value(v) for v in values.tolist()]


def test_negative_zero_is_written_zero():
    assert format_dense(np.array([-0.0, 0.0, -1e-320])) == ["0", "0", format(-1e-320, ".9g")]


def test_python_formats_only_the_unsure_values():
    """Random decoder-like values: the kernel decides all but a few in 10^5 of them itself."""
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.normal(size=100_000) * 5, np.log(rng.uniform(size=100_000))])
    digits, _ = _g9_digits_nb(values, _POW10, _TIE_MARGIN)
    assert (digits < 0).sum() <= 10


def toy_lattice(rng: np.random.Generator, indexed: bool) -> Lattice:
    n_edges, n_dense = 300, 7
    tails = np.sort(rng.integers(0, 40, size=n_edges))
    heads = tails + rng.integers(1, 30, size=n_edges)
    phrases = [(), ("a",), ("été", "vu"), ("x", "y", "z"), ("ü",)]
    sparses = [{}, {"cbin_1": 1.0}, {"tgt_é": -0.5, "dup": 1e-7, "z": -0.0}]
    pid = rng.integers(0, len(phrases), size=n_edges)
    sid = rng.integers(0, len(sparses), size=n_edges)
    dense = rng.choice(hard_values(rng), size=(n_edges, n_dense))
    if indexed:
        words, sparse = IndexedValues(pid, phrases), IndexedValues(sid, sparses)
    else:
        words, sparse = [phrases[i] for i in pid], [dict(sparses[i]) for i in sid]
    return Lattice(3, int(heads.max()) + 1, tails, heads, words, dense, sparse, [f"F{i}" for i in range(n_dense)])


@pytest.mark.parametrize("indexed", [False, True])
def test_block_is_the_python_writers(indexed):
    lat = toy_lattice(np.random.default_rng(11), indexed)
    assert lattice_block(lat) == reference_block(lat).encode("utf-8")


def test_indexed_values_behave_as_the_list():
    values = [("a",), ("b", "c"), ()]
    ids = np.array([2, 0, 0, 1])
    seq = IndexedValues(ids, values)
    as_list = [values[i] for i in ids]
    assert len(seq) == 4 and list(seq) == as_list and seq == as_list and as_list == seq
    assert seq[1] == ("a",) and seq[-1] == ("b", "c") and seq[1:3] == as_list[1:3]
    assert seq != as_list[:3] and seq != [("a",)] * 4


@pytest.fixture(scope="module", params=["medium", "big"])
def toy_decode(request, tmp_path_factory):
    """A toy model (big: with sparse features), 10 sentences, the whole search graph as lattice
    (``lat1.gz`` and ``lat2.gz``: written by ``smtlib decode`` with 1 and 2 processes)."""
    d = tmp_path_factory.mktemp(f"latw-{request.param}")
    spec = write_toy_model(d / "model", request.param, seed=9)
    lines = random_source(np.random.default_rng(2), 10, (1, 9), vocab=13) + [""]
    (d / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    weights = {n: 0.2 for n in spec.dense_weight_names()}
    weights.update({"LM0_0": 0.5, "WordPenalty0_0": -0.5, "Distortion0_0": 0.3})
    if request.param == "big":  # a sparse weight for a model without sparse features is an error
        weights["cbin_1"] = 0.3
    write_weights(d / "w.txt", weights)
    # Decoded here, not in a test: under pytest-xdist the tests that read these files may run in
    # another worker than the one that would have written them.
    config = DecoderConfig(k=10, stack_size=20, lattice_beam=0)
    for jobs in (1, 2):
        decode_file(d / "model", d / "w.txt", d / "in.txt", lattice_out=d / f"lat{jobs}.gz", config=config, jobs=jobs,
                    progress=False, chunksize=1)
    return d, lines


def test_decoder_lattices_are_the_python_writers(toy_decode):
    """The file ``smtlib decode`` writes (1 and 2 processes) is the old writer's text of the same
    lattices, and reads back as them."""
    d, lines = toy_decode
    config = DecoderConfig(k=10, stack_size=20, lattice_beam=0)
    spec = read_model_spec(d / "model")
    model = load_model(d / "model", [prepare_tokens(spec, line) for line in lines])
    decoder = Decoder(model, model.read_weights(read_weights(d / "w.txt")), config)
    lats = [decoder.decode(line, i, kbest=1, lattice=True).lattice for i, line in enumerate(lines)]
    assert isinstance(lats[0].words, IndexedValues) and isinstance(lats[0].sparse, IndexedValues)
    if spec.sparse:
        assert any(sp for lat in lats for sp in lat.sparse)
    expected = lattice_header(list(model.layout.names)) + "".join(reference_block(lat) for lat in lats)
    one = gzip.decompress((d / "lat1.gz").read_bytes())
    assert one.decode("utf-8") == expected
    assert (d / "lat2.gz").read_bytes() == (d / "lat1.gz").read_bytes()
    back = read_lattices(d / "lat1.gz")
    for lat, read in zip(lats, back, strict=True):
        assert list(read.words) == list(lat.words) and list(read.sparse) == list(lat.sparse)
        np.testing.assert_allclose(read.dense, lat.dense, rtol=1e-8, atol=0)


def test_write_lattice_writes_text(toy_decode, tmp_path):
    """:func:`write_lattice` on a text stream, for a lattice read from a file (plain lists)."""
    d, _ = toy_decode
    lats = read_lattices(d / "lat1.gz")
    path = tmp_path / "again.txt"
    with open(path, "w", encoding="utf-8") as out:
        out.write(lattice_header(lats[0].feature_names))
        for lat in lats:
            write_lattice(out, lat)
    assert path.read_bytes() == gzip.decompress((d / "lat1.gz").read_bytes())


def test_small_blocks_are_the_python_writers():
    """No edges (the old writer wrote the header line alone), and the empty sentence's single edge."""
    none = Lattice(0, 2, np.zeros(0, np.int64), np.zeros(0, np.int64), [], np.zeros((0, 3)), [], ["a", "b", "c"])
    empty = Lattice(4, 2, np.array([0]), np.array([1]), [()], np.array([[0.0, -1.5, -0.0]]), [{}], ["a", "b", "c"])
    for lat in (none, empty):
        assert lattice_block(lat) == reference_block(lat).encode("utf-8")
