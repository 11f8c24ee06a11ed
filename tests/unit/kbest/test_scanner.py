"""The compiled n-best scanner (smtlib.kbest.scanner), directly, and the errors it leads to.

:func:`~smtlib.kbest.scanner.scan_layout` on bytes written by hand: every array it fills, numbers
equal to Python's ``float`` bit for bit (the fast path, and the tokens it hands back), hypotheses
collapsed as ``str.split`` does, and for each kind of malformed line its status and 1-based line.
Then the reader on top of it (:func:`~smtlib.kbest.pool.read_pool`): a CRLF or gzip file reads as the
plain one, and a malformed line is an :class:`~smtlib.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from smtlib.errors import InputError
from smtlib.kbest import scanner
from smtlib.kbest.format import decide_layout
from smtlib.kbest.pool import read_pool

GOOD = ("0 ||| a  b ||| TM0= 1 2 LM0= -3.5 s_x= 4 ||| 1.25 ||| 0-0 1-1\n"
        "0 |||\tc  ||| TM0= 0.5 -0 LM0= 1e3 ||| -2 ||| 1-0\n"
        "2 ||| d ||| TM0= 1 1 LM0= 1 s_y= 5 s_x= 6 ||| 0 |||\n")


def _scan(text: str, dialect: str | None = None):
    data = text.encode("utf-8")
    layout = decide_layout(text.split("\n")[:3], None, dialect)
    names = ("status", "line", "ids", "totals", "dense", "text", "text_end", "text_flag", "hyp_span", "extra_start",
             "sp_row", "sp_value", "sp_names", "n_sparse", "sp_len", "slow", "n_slow")
    return data, dict(zip(names, scanner.scan_layout(data, layout), strict=True))


def test_a_moses_file_fills_every_array():
    data, r = _scan(GOOD)
    assert (r["status"], r["line"]) == (scanner.OK, 0)
    assert r["ids"].tolist() == [0, 0, 2]
    assert r["totals"].tolist() == [1.25, -2.0, 0.0]
    assert r["dense"].tolist() == [[1, 2, -3.5], [0.5, 0, 1000], [1, 1, 1]] and np.signbit(r["dense"][1, 1])
    assert r["text"].tobytes() == b"a b\nc\nd\n" and r["text_end"].tolist() == [4, 6, 8]
    assert not r["text_flag"].any()
    n = r["n_sparse"]
    assert r["sp_row"][:n].tolist() == [0, 2, 2] and r["sp_value"][:n].tolist() == [4, 5, 6]
    assert r["sp_names"][: r["sp_len"]].tobytes() == b"s_x\ns_y\ns_x\n"
    extras = [data[s:].split(b"\n", 1)[0].strip() for s in r["extra_start"].tolist()]
    assert extras == [b"0-0 1-1", b"1-0", b""]
    assert r["n_slow"] == 0


def test_old_moses_labels_and_zmert_values():
    _, r = _scan("0 ||| a ||| d: 1 2 lm: -3 w: 0 ||| 5\n1 ||| b ||| d: 4 5 lm: 6 w: 7 ||| 8\n")
    assert r["status"] == scanner.OK and r["dense"].tolist() == [[1, 2, -3, 0], [4, 5, 6, 7]]
    _, r = _scan("0 ||| a ||| 1 2 3\n0 ||| b ||| 4 5 6\n")
    assert r["status"] == scanner.OK and r["dense"].tolist() == [[1, 2, 3], [4, 5, 6]]
    assert np.isnan(r["totals"]).all()
    _, r = _scan("0 ||| a ||| 1 2 3\n0 ||| b ||| 4 5\n")
    assert (r["status"], r["line"]) == (scanner.BAD_FEATURES, 2)


TOKENS = ["0", "-0", "+3", ".5", "5.", "-0.000", "1e-5", "1E+22", "1e22", "1e23", "1e-22", "1e-23", "0.1", "2.5e-3",
          "9007199254740993", "900719925474099", "123456789012345678", "1234567890123456789", "12345678901234567890",
          "9426218402198768276", "1e400", "1e-400", "4.9e-324", "1.7976931348623157e308", "0.30000000000000004",
          "000000000000000000000001.5"]


def test_numbers_equal_pythons_float_bit_for_bit():
    rng = np.random.default_rng(0)
    tokens = TOKENS + [repr(float(x)) for x in rng.normal(size=200) * 10.0 ** rng.integers(-30, 30, size=200)]
    tokens += [f"{x:.{int(d)}g}" for x, d in zip(rng.normal(size=200), rng.integers(1, 20, size=200), strict=True)]
    lines = "".join(f"{i} ||| h ||| F= {tok} ||| {tok}\n" for i, tok in enumerate(tokens))
    data, r = _scan(lines)
    assert r["status"] == scanner.OK
    dense, totals = r["dense"][:, 0].copy(), r["totals"].copy()
    handed_back = set()
    for start, end, row, column in r["slow"][: r["n_slow"]].tolist():
        assert data[start:end].decode() == tokens[row]
        handed_back.add(tokens[row])
        (dense if column == 0 else totals)[row] = float(data[start:end])
        assert column in (0, -1)
    want = np.array([float(t) for t in tokens])
    assert dense.view(np.int64).tolist() == want.view(np.int64).tolist()
    assert totals.view(np.int64).tolist() == want.view(np.int64).tolist()
    # the fast path is taken where it is exact, and only there
    assert {"12345678901234567890", "1e23", "1e400", "4.9e-324"} <= handed_back
    assert not {"0", "1e22", "0.1", "900719925474099"} & handed_back
    # 19 digits whose integer is above 2^63: once read as a negative mantissa, a wrong value
    assert "0.9426218402198768276" in tokens and "0.9426218402198768276" in handed_back


def test_hypotheses_are_collapsed_as_str_split():
    hyps = ["  a \t b\x0b", "\x1cc\x1fd", "e\u00a0f", "g\u3000 h"]
    _, r = _scan("".join(f"0 ||| {h} ||| F= 1 ||| 1\n" for h in hyps))
    texts = r["text"].tobytes().decode().split("\n")[:-1]
    # ASCII whitespace is collapsed by the scanner; a hypothesis with Unicode whitespace is flagged, and
    # the caller splits it again from its span
    assert texts[:2] == [" ".join(h.split()) for h in hyps[:2]]
    assert r["text_flag"].tolist() == [False, False, True, True]
    data = "".join(f"0 ||| {h} ||| F= 1 ||| 1\n" for h in hyps).encode()
    spans = [data[a:b].decode() for a, b in r["hyp_span"].tolist()]
    assert [" ".join(s.split()) for s in spans] == [" ".join(h.split()) for h in hyps]


MALFORMED = [  # line 2 of a three-line file, its status
    pytest.param("   \t", scanner.EMPTY_LINE, id="blank"),
    pytest.param("", scanner.EMPTY_LINE, id="empty"),
    pytest.param("0 ||| a ||| TM0= 1 2 LM0= 1", scanner.FIELDS, id="no-total-field"),
    pytest.param("0 ||| a |||| TM0= 1 2 LM0= 1 ||| 1", scanner.FIELDS, id="four-bars"),
    pytest.param("x ||| a ||| TM0= 1 2 LM0= 1 ||| 1", scanner.BAD_ID, id="id-not-a-number"),
    pytest.param("-1 ||| a ||| TM0= 1 2 LM0= 1 ||| 1", scanner.BAD_ID, id="negative-id"),
    pytest.param("1234567890123456789 ||| a ||| TM0= 1 2 LM0= 1 ||| 1", scanner.BAD_ID, id="id-of-19-digits"),
    pytest.param("0 ||| a ||| TM1= 1 2 LM0= 1 ||| 1", scanner.BAD_FEATURES, id="other-label"),
    pytest.param("0 ||| a ||| TM0= 1 LM0= 1 ||| 1", scanner.BAD_FEATURES, id="too-few-values"),
    pytest.param("0 ||| a ||| TM0= 1 2 3 LM0= 1 ||| 1", scanner.BAD_FEATURES, id="too-many-values"),
    pytest.param("0 ||| a ||| LM0= 1 TM0= 1 2 ||| 1", scanner.BAD_FEATURES, id="groups-swapped"),
    pytest.param("0 ||| a ||| TM0= 1 2 ||| 1", scanner.BAD_FEATURES, id="group-missing"),
    pytest.param("0 ||| a ||| TM0= 1 2 LM0= 1 sx= 1 ||| 1", scanner.BAD_FEATURES, id="sparse-without-underscore"),
    pytest.param("0 ||| a ||| TM0= 1 2 LM0= 1 s_x= 1 2 ||| 1", scanner.BAD_FEATURES, id="sparse-two-values"),
    pytest.param("0 ||| a ||| TM0= 1 2 LM0= 1 s_x= ||| 1", scanner.BAD_FEATURES, id="sparse-no-value"),
    pytest.param("0 ||| a ||| TM0= 1 2,5 LM0= 1 ||| 1", scanner.BAD_FEATURES, id="value-not-a-number"),
    pytest.param("0 ||| a ||| TM0= 1 2 LM0: 1 ||| 1", scanner.BAD_FEATURES, id="old-label-in-moses-file"),
    pytest.param("0 ||| a ||| = 1 2 LM0= 1 ||| 1", scanner.BAD_FEATURES, id="label-without-name"),
    pytest.param("0 ||| a ||| TM0= 1 2 LM0= 1 ||| 1x", scanner.BAD_TOTAL, id="total-not-a-number"),
    pytest.param("0 ||| a ||| TM0= 1 2 LM0= 1 |||", scanner.BAD_TOTAL, id="total-missing"),
    pytest.param("0 ||| a ||| TM0= 1 2 LM0= 1 ||| 1 2", scanner.BAD_TOTAL, id="two-totals"),
]
LINE = "0 ||| a ||| TM0= 1 2 LM0= 1 ||| 1"


@pytest.mark.parametrize("bad, status", MALFORMED)
def test_a_malformed_line_stops_the_scan_at_its_line(bad, status):
    _, r = _scan(f"{LINE}\n{bad}\n{LINE}\n")
    assert (r["status"], r["line"]) == (status, 2)


def test_a_last_line_without_line_end_is_reported():
    _, r = _scan(f"{LINE}\n{LINE}\n{LINE}")
    assert (r["status"], r["line"]) == (scanner.NO_LINE_END, 3)


def _write(path, text: str):
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def _same_pool(a, b):
    assert a.texts == b.texts and a.sparse_names == b.sparse_names and a.extras == b.extras
    for name in ("offsets", "dense", "totals"):
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
    assert (a.sparse != b.sparse).nnz == 0


def test_crlf_and_gzip_files_read_as_the_plain_file(tmp_path):
    plain = read_pool(_write(tmp_path / "k.txt", GOOD))
    _same_pool(read_pool(_write(tmp_path / "crlf.txt", GOOD.replace("\n", "\r\n"))), plain)
    _same_pool(read_pool(_write(tmp_path / "k.txt.gz", GOOD)), plain)
    _same_pool(read_pool(_write(tmp_path / "crlf.txt.gz", GOOD.replace("\n", "\r\n"))), plain)


# every malformed line but the 19-digit id, which the scanner leaves to the line parser (that takes it)
REJECTED = [p.values[0] for p in MALFORMED if p.values[0].strip() and p.id != "id-of-19-digits"]


@pytest.mark.parametrize("name", ["k.txt", "k.txt.gz"])
@pytest.mark.parametrize("bad", REJECTED + [None])
def test_a_malformed_line_is_an_error_naming_file_and_line(tmp_path, name, bad):
    text = f"{LINE}\n{LINE}\n{LINE}\n{bad}\n{LINE}\n" if bad is not None else f"{LINE}\n{LINE}\n{LINE}\n{LINE}"
    path = _write(tmp_path / name, text)
    with pytest.raises(InputError) as err:
        read_pool(path)
    assert (err.value.path, err.value.line) == (str(path), 4), str(err.value)
