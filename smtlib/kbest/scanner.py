"""A compiled one-pass reader of a whole Moses n-best file against its layout (the fast path).

:func:`scan` walks the UTF-8 bytes of a file once and checks every line against the file's
:class:`~smtlib.kbest.format.FileLayout` exactly as :func:`smtlib.kbest.format.parse_line` does
(field count, id, dense labels, value counts and order, sparse features, total), while it fills
the id, total and dense-value arrays, writes the normalised hypotheses and the sparse names into
byte buffers, and parses the numbers. It stops at the first line that does not fit and returns
its number; the caller then parses that line with :func:`~smtlib.kbest.format.parse_line`, which
raises the error with its message. The Moses dialects (``moses``, ``moses-old``) and Z-MERT's are
read here; Joshua's lines, whose feature sets differ, go through the line parser.

Numbers: a token with at most 18 significant digits, a mantissa m <= 2^53 and a decimal exponent
e with |e| <= 22 is converted as m * 10^e or m / 10^-e, which IEEE arithmetic rounds correctly
because both operands are exact (Clinger 1990, "How to read floating point numbers accurately",
the fast path); any other number (longer, larger, smaller) is handed back and converted by
Python's ``float``, so every value equals ``float(token)`` bit for bit.
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib._bytes import room_for_row, same_bytes
from smtlib.kbest.format import FileLayout

OK = 0
EMPTY_LINE = 1
FIELDS = 2
BAD_ID = 3
BAD_FEATURES = 4
BAD_TOTAL = 5
NO_LINE_END = 6

_POW10 = np.array([10.0**k for k in range(23)])
_MAX_EXACT = 2**53
_EQ, _COLON, _BAR, _NL, _DOT, _PLUS, _MINUS = 61, 58, 124, 10, 46, 43, 45


@numba.njit(cache=True, inline="always")
def _blank(b):
    return b == 32 or b == 9 or b == 13 or b == 11 or b == 12


@numba.njit(cache=True, inline="always")
def _text_space(b):
    # the ASCII characters Python's str.split() treats as whitespace
    return b == 32 or (9 <= b <= 13) or (28 <= b <= 31)


@numba.njit(cache=True, inline="always")
def _digit(b):
    return 48 <= b <= 57


@numba.njit(cache=True)
def _unicode_space_at(data, i, end):
    """True if a non-ASCII character that Python's str.split() treats as whitespace starts at i."""
    b = data[i]
    if b == 0xC2 and i + 1 < end:
        return data[i + 1] == 0x85 or data[i + 1] == 0xA0
    if b == 0xE1 and i + 2 < end:
        return data[i + 1] == 0x9A and data[i + 2] == 0x80
    if b == 0xE2 and i + 2 < end:
        c, d = data[i + 1], data[i + 2]
        if c == 0x80:
            return (0x80 <= d <= 0x8A) or d == 0xA8 or d == 0xA9 or d == 0xAF
        return c == 0x81 and d == 0x9F
    if b == 0xE3 and i + 2 < end:
        return data[i + 1] == 0x80 and data[i + 2] == 0x80
    return False


@numba.njit(cache=True)
def _number(data, s, e, pow10):
    """(status, value) of the token data[s:e]: 0 not a number, 1 converted exactly, 2 needs float()."""
    i = s
    negative = False
    if data[i] == _PLUS or data[i] == _MINUS:
        negative = data[i] == _MINUS
        i += 1
    mantissa = 0
    significant = 0
    seen = 0
    shift = 0
    lost = False
    while i < e and _digit(data[i]):
        seen += 1
        d = data[i] - 48
        if mantissa == 0 and d == 0:
            pass
        elif significant < 18:  # 18 digits fit an int64; 19 could wrap (9.3e18 > 2^63)
            mantissa = mantissa * 10 + d
            significant += 1
        else:
            shift += 1
            lost = True
        i += 1
    if i < e and data[i] == _DOT:
        i += 1
        while i < e and _digit(data[i]):
            seen += 1
            d = data[i] - 48
            if mantissa == 0 and d == 0:
                shift -= 1
            elif significant < 18:
                mantissa = mantissa * 10 + d
                significant += 1
                shift -= 1
            else:
                lost = True
            i += 1
    if seen == 0:
        return 0, 0.0
    exponent = 0
    if i < e and (data[i] == 101 or data[i] == 69):
        i += 1
        exp_negative = False
        if i < e and (data[i] == _PLUS or data[i] == _MINUS):
            exp_negative = data[i] == _MINUS
            i += 1
        digits = 0
        while i < e and _digit(data[i]):
            if exponent < 100000:
                exponent = exponent * 10 + (data[i] - 48)
            digits += 1
            i += 1
        if digits == 0:
            return 0, 0.0
        if exp_negative:
            exponent = -exponent
    if i != e:
        return 0, 0.0
    if mantissa == 0 and not lost:
        return 1, (-0.0 if negative else 0.0)
    power = shift + exponent
    if lost or mantissa > _MAX_EXACT or power > 22 or power < -22:
        return 2, 0.0
    value = mantissa * pow10[power] if power >= 0 else mantissa / pow10[-power]
    return 1, (-value if negative else value)


@numba.njit(cache=True)
def _grow(array, n):
    bigger = np.empty(max(2 * len(array), 16), dtype=array.dtype)
    bigger[:n] = array[:n]
    return bigger


@numba.njit(cache=True)
def _add_slow(slow, n_slow, t0, t1, row, column):
    """Record the number at ``data[t0:t1]`` for Python's ``float``: its row and its column (a dense
    column, -1 for the total, -3 - n for sparse value n)."""
    slow = room_for_row(slow, n_slow)
    slow[n_slow, 0] = t0
    slow[n_slow, 1] = t1
    slow[n_slow, 2] = row
    slow[n_slow, 3] = column
    return slow


@numba.njit(cache=True)
def scan(data, n_lines, n_fields, has_total, style, label_data, label_off, sizes, col_start, width, zmert, sparse_ok):
    """Read every line of ``data`` (a whole file) against a layout; see the module docstring.

    Parameters
    ----------
    data
        The file's bytes (uint8), lines ending in ``\\n``.
    n_lines
        Number of lines (the count of ``\\n``, plus one when the last line has none).
    n_fields, has_total
        The layout's field count and whether the fourth field is a number.
    style
        Label end byte: ``=`` (Moses) or ``:`` (old Moses); 0 for Z-MERT's unlabeled values.
    label_data, label_off, sizes, col_start
        Dense labels (bytes of label g at ``label_data[label_off[g]:label_off[g+1]]``), their value
        counts and first columns.
    width
        Number of dense values per line.
    zmert
        True for unlabeled values.
    sparse_ok
        True if sparse ``name_x= v`` features may appear (the Moses dialect).

    Returns
    -------
    tuple
        ``(status, line, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start,
        sp_row, sp_value, sp_names, n_sparse, sp_names_len, slow, n_slow)``; ``status`` is
        :data:`OK` or the error code of 1-based line ``line``.
    """
    n_groups = len(sizes)
    ids = np.zeros(n_lines, dtype=np.int64)
    totals = np.full(n_lines, np.nan)
    dense = np.zeros((n_lines, width))
    text = np.empty(len(data) + n_lines, dtype=np.uint8)
    text_end = np.zeros(n_lines, dtype=np.int64)
    text_flag = np.zeros(n_lines, dtype=np.bool_)
    hyp_span = np.zeros((n_lines, 2), dtype=np.int64)
    extra_start = np.full(n_lines, -1, dtype=np.int64)
    sp_row = np.empty(16, dtype=np.int64)
    sp_value = np.empty(16)
    sp_names = np.empty(16, dtype=np.uint8)
    n_sparse = 0
    sp_len = 0
    slow = np.empty((16, 4), dtype=np.int64)  # (start, end, row, column; -1 = total)
    n_slow = 0
    seps = np.empty(max(n_fields - 1, 1), dtype=np.int64)
    pow10 = _POW10
    pos = 0
    tpos = 0
    size = len(data)
    for row in range(n_lines):
        start = pos
        end = start
        while end < size and data[end] != _NL:
            end += 1
        pos = end + 1
        lineno = row + 1
        if end == size:
            return NO_LINE_END, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
        blank = True
        for i in range(start, end):
            if not _blank(data[i]):
                blank = False
                break
        if blank:
            return EMPTY_LINE, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
        # -- fields
        n_seps = 0
        i = start
        while i + 2 < end:
            if data[i] == _BAR and data[i + 1] == _BAR and data[i + 2] == _BAR:
                if i + 3 < end and data[i + 3] == _BAR:
                    return FIELDS, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
                if n_seps < n_fields - 1:
                    seps[n_seps] = i
                n_seps += 1
                i += 3
            else:
                i += 1
        if n_seps != n_fields - 1:
            return FIELDS, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
        # -- id
        i = start
        while i < seps[0] and _blank(data[i]):
            i += 1
        value = 0
        digits = 0
        while i < seps[0] and _digit(data[i]):
            if digits < 18:
                value = value * 10 + (data[i] - 48)
            digits += 1
            i += 1
        while i < seps[0] and _blank(data[i]):
            i += 1
        if digits == 0 or digits > 18 or i != seps[0]:
            return BAD_ID, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
        ids[row] = value
        # -- hypothesis: whitespace runs collapsed, ends stripped (as " ".join(s.split()))
        h0 = seps[0] + 3
        h1 = seps[1]
        hyp_span[row, 0] = h0
        hyp_span[row, 1] = h1
        pending = False
        for i in range(h0, h1):
            b = data[i]
            if _text_space(b):
                pending = tpos > 0 and text[tpos - 1] != _NL
            else:
                if b >= 0x80 and _unicode_space_at(data, i, h1):
                    text_flag[row] = True
                if pending:
                    text[tpos] = 32
                    tpos += 1
                    pending = False
                text[tpos] = b
                tpos += 1
        text[tpos] = _NL
        tpos += 1
        text_end[row] = tpos
        # -- features
        f0 = seps[1] + 3
        f1 = seps[2] if n_fields > 3 else end
        group = 0  # next dense group expected
        current = -1  # dense group being filled, or -2 for a sparse feature
        count = 0
        name_start = 0
        name_end = 0
        n_values = 0
        i = f0
        while True:
            while i < f1 and _blank(data[i]):
                i += 1
            if i >= f1:
                break
            t0 = i
            while i < f1 and not _blank(data[i]):
                i += 1
            t1 = i
            last = data[t1 - 1]
            if not zmert and (last == _EQ or last == _COLON):
                # close the previous feature
                if current >= 0 and count != sizes[current]:
                    return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
                if current == -2 and count != 1:
                    return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
                if last != style or t1 - 1 == t0:
                    return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
                length = t1 - 1 - t0
                matches = -1
                for g in range(n_groups):
                    lo = label_off[g]
                    if label_off[g + 1] - lo == length and same_bytes(label_data, lo, data, t0, length):
                        matches = g
                        break
                if matches == group and group < n_groups:
                    current = group
                    group += 1
                    count = 0
                elif matches < 0 and sparse_ok:
                    underscore = False
                    for k in range(t0, t1 - 1):
                        if data[k] == 95:
                            underscore = True
                            break
                    if not underscore:
                        return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
                    current = -2
                    count = 0
                    name_start = t0
                    name_end = t1 - 1
                else:
                    return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
                continue
            status, number = _number(data, t0, t1, pow10)
            if status == 0:
                return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
            if zmert:
                if n_values >= width:
                    return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
                column = n_values
            elif current >= 0:
                if count >= sizes[current]:
                    return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
                column = col_start[current] + count
            elif current == -2:
                if count >= 1:
                    return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
                if n_sparse == len(sp_row):
                    sp_row = _grow(sp_row, n_sparse)
                    sp_value = _grow(sp_value, n_sparse)
                while sp_len + (name_end - name_start) + 1 > len(sp_names):
                    sp_names = _grow(sp_names, sp_len)
                for k in range(name_start, name_end):
                    sp_names[sp_len] = data[k]
                    sp_len += 1
                sp_names[sp_len] = _NL
                sp_len += 1
                sp_row[n_sparse] = row
                sp_value[n_sparse] = number
                column = -3 - n_sparse  # sparse slot n_sparse
                n_sparse += 1
            else:
                return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
            count += 1
            n_values += 1
            if status == 2:
                slow = _add_slow(slow, n_slow, t0, t1, row, column)
                n_slow += 1
            elif column >= 0:
                dense[row, column] = number
        if zmert:
            if n_values != width:
                return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
        else:
            if current >= 0 and count != sizes[current]:
                return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
            if current == -2 and count != 1:
                return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
            if group != n_groups or (current == -1 and n_groups == 0 and n_values == 0):
                return BAD_FEATURES, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
        # -- total
        if n_fields > 3:
            t = seps[2] + 3
            t_end = seps[3] if n_fields > 4 else end
            while t < t_end and _blank(data[t]):
                t += 1
            t0 = t
            while t < t_end and not _blank(data[t]):
                t += 1
            t1 = t
            while t < t_end and _blank(data[t]):
                t += 1
            if t != t_end or (t1 > t0) != has_total:
                return BAD_TOTAL, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
            if has_total:
                status, number = _number(data, t0, t1, pow10)
                if status == 0:
                    return BAD_TOTAL, lineno, ids, totals, dense, text, text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow
                if status == 2:
                    slow = _add_slow(slow, n_slow, t0, t1, row, -1)
                    n_slow += 1
                else:
                    totals[row] = number
            if n_fields > 4:
                extra_start[row] = seps[3] + 3
    return OK, 0, ids, totals, dense, text[:tpos], text_end, text_flag, hyp_span, extra_start, sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow


def _layout_arrays(layout: FileLayout):
    """The layout's dense labels as :func:`scan` takes them: label bytes, offsets, sizes, first columns, width."""
    labels = [g.label.encode("utf-8") for g in layout.groups]
    label_data = np.frombuffer(b"".join(labels), dtype=np.uint8) if labels else np.zeros(0, dtype=np.uint8)
    label_off = np.zeros(len(labels) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in labels], out=label_off[1:])
    sizes = np.array([g.size for g in layout.groups], dtype=np.int64)
    col_start = np.zeros(len(sizes), dtype=np.int64)
    if len(sizes):
        col_start[1:] = np.cumsum(sizes)[:-1]
    return label_data, label_off, sizes, col_start, int(sizes.sum())


def scan_layout(data: bytes, layout: FileLayout):
    """:func:`scan` of a whole file's bytes against ``layout`` (a Moses, old Moses or Z-MERT layout of
    :func:`~smtlib.kbest.format.decide_layout`); returns what :func:`scan` returns."""
    label_data, label_off, sizes, col_start, width = _layout_arrays(layout)
    zmert = layout.dialect == "zmert"
    style = 0 if zmert else (_EQ if layout.dialect == "moses" else _COLON)
    if zmert:
        width = layout.groups[0].size
    n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    return scan(np.frombuffer(data, dtype=np.uint8), n_lines, layout.n_fields, layout.has_total, style, label_data,
                label_off, sizes, col_start, width, zmert, layout.dialect == "moses")
