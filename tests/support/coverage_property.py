"""Random pools whose sentence ids have gaps and offsets, and every command that prints a score of
them, against sacrebleu on exactly the pool's sentences (the property of
``tests/integration/cli/test_score_coverage.py``).

:func:`random_case` draws a case: 1-12 reference lines in one or two reference sets, and a pool
whose sentence ids are a random subset of a random window (a gap anywhere, an offset from 0, the
held-out half of a list); one case in five has an id beyond the references. The case is written as
a Moses n-best list, lattices (one random lattice per id), a 1-best file of the pool's 1-best
(line i is sentence i, empty for an id without hypotheses, as ``rerank`` writes it) and initial
weights. :data:`COMMANDS` run the command line in this process (:func:`run`) and check what they
print: the BLEU equals sacrebleu's on the pool's sentences and their reference lines (``rerank``,
``kbest stats``, ``tune`` of k-best methods before and after, ``kbest add`` then ``tune --pool``,
the lattice tuners), or on the 1-best file's lines (``bleu``, ``score``, ``compare``, which need
as many lines as the references, or ``--refs-prefix``); the coverage they print is the pool's;
and an input no rule allows (an id beyond the references, a file shorter than the references
without ``--refs-prefix``) is exit status 2 with one line on stderr.

:func:`check_case` returns the failures, one line each (empty: the case holds).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import pathlib
import re

import numpy as np
from sacrebleu.metrics import BLEU, CHRF

VOCAB = ["a", "man", "dog", "the", "runs", "on", "grass", "blue", "."]
KBEST_NAMES = ["lm_0", "tm_0", "tm_1", "w_0"]
INIT = {"lm_0": 1.0, "tm_0": 0.5, "tm_1": 0.5, "w_0": -0.3}
TOL = 5e-5  # printed with 4 decimals


@dataclasses.dataclass
class Case:
    """One random case, written under ``dir``."""

    dir: pathlib.Path
    n_lines: int
    refs: list[list[str]]  #: reference sets, ``n_lines`` lines each
    hyps: dict[int, list[tuple[str, np.ndarray, float]]]  #: id -> (text, features, total) per hypothesis
    lattices: dict[int, object]  #: id -> smtlib.lattice.format.Lattice

    @property
    def ids(self) -> list[int]:
        return sorted(self.hyps)

    @property
    def valid(self) -> bool:
        """No id beyond the references."""
        return self.ids[-1] < self.n_lines

    def path(self, name: str) -> pathlib.Path:
        return self.dir / name

    def ref_paths(self) -> list[pathlib.Path]:
        return [self.path(f"ref{k}") for k in range(len(self.refs))]


def _sentence(rng: np.random.Generator, low: int = 1, high: int = 9) -> str:
    return " ".join(rng.choice(VOCAB, size=int(rng.integers(low, high))).tolist())


def random_case(rng: np.random.Generator, directory: pathlib.Path) -> Case:
    """A random case (see the module docstring), written to ``directory``."""
    from smtlib.lattice.format import lattice_header, write_lattice
    from tests.support.lattice_fixtures import NAMES, random_lattice

    directory.mkdir(parents=True, exist_ok=True)
    n_lines = int(rng.integers(1, 13))
    refs = [[_sentence(rng) for _ in range(n_lines)] for _ in range(int(rng.integers(1, 3)))]
    beyond = rng.random() < 0.2
    start = int(rng.integers(0, n_lines))
    end = n_lines + int(rng.integers(1, 4)) if beyond else int(rng.integers(start + 1, n_lines + 1))
    window = np.arange(start, end)
    ids = sorted(rng.choice(window, size=int(rng.integers(1, len(window) + 1)), replace=False).tolist())
    if beyond and ids[-1] < n_lines:
        ids.append(end - 1)  # at least one id beyond the references
    hyps: dict[int, list[tuple[str, np.ndarray, float]]] = {}
    for s in ids:
        rows = []
        for _ in range(int(rng.integers(2, 6))):
            base = refs[0][s].split() if s < n_lines and rng.random() < 0.5 else _sentence(rng).split()
            words = [w for w in base if rng.random() < 0.8] + rng.choice(VOCAB, size=int(rng.integers(0, 3))).tolist()
            features = np.round(rng.normal(size=len(KBEST_NAMES)), 4)
            rows.append((" ".join(words), features, round(float(rng.normal()), 4)))
        hyps[s] = rows
    lattices = {s: random_lattice(rng, sent_id=s, n_nodes=int(rng.integers(2, 6)), extra=int(rng.integers(0, 5)))
                for s in ids}
    case = Case(directory, n_lines, refs, hyps, lattices)
    for k, ref_set in enumerate(refs):
        case.path(f"ref{k}").write_text("".join(line + "\n" for line in ref_set), encoding="utf-8")
    with open(case.path("pool.nbest"), "w", encoding="utf-8") as out:
        for s in ids:
            for text, f, total in hyps[s]:
                out.write(f"{s} ||| {text} ||| lm= {f[0]} tm= {f[1]} {f[2]} w= {f[3]} ||| {total}\n")
    with open(case.path("lattices"), "w", encoding="utf-8") as out:
        out.write(lattice_header(list(NAMES)))
        for s in ids:
            write_lattice(out, lattices[s])
    case.path("init.w").write_text("".join(f"{k} {v}\n" for k, v in INIT.items()), encoding="utf-8")
    case.path("lattice.init.w").write_text("".join(f"{n} {v}\n" for n, v in zip(NAMES, (0.5, 1.0, -0.2))),
                                           encoding="utf-8")
    case.path("best.txt").write_text("".join(line + "\n" for line in one_best_file(case, INIT)), encoding="utf-8")
    return case


# ------------------------------------------------------------------------------ what sacrebleu says
def one_best(case: Case, weights: dict[str, float], by_total: bool = False) -> dict[int, str]:
    """id -> the text of its best hypothesis under ``weights`` (by the file's totals), first on ties."""
    w = np.array([weights.get(n, 0.0) for n in KBEST_NAMES])
    best = {}
    for s, rows in case.hyps.items():
        scores = [total if by_total else float(f @ w) for _, f, total in rows]
        best[s] = rows[int(np.argmax(scores))][0]
    return best


def one_best_file(case: Case, weights: dict[str, float]) -> list[str]:
    """The lines ``rerank`` writes: ids 0 to the largest, empty where the pool has none."""
    best = one_best(case, weights)
    return [best.get(s, "") for s in range(case.ids[-1] + 1)]


def lattice_best(case: Case, weights: dict[str, float]) -> dict[int, str]:
    """id -> the words of its lattice's best path under ``weights`` (by enumeration)."""
    from tests.support.lattice_fixtures import NAMES, all_paths, path_words

    w = np.array([weights.get(n, 0.0) for n in NAMES])
    best = {}
    for s, lat in case.lattices.items():
        paths = all_paths(lat)
        scores = [float(sum(lat.dense[e] @ w for e in p)) for p in paths]
        best[s] = " ".join(path_words(lat, paths[int(np.argmax(scores))]))
    return best


def sacrebleu_of(hyps_by_id: dict[int, str], refs: list[list[str]], **options) -> float:
    """sacrebleu's corpus BLEU of the given ids' hypotheses against their reference lines."""
    ids = sorted(hyps_by_id)
    return BLEU(**options).corpus_score([hyps_by_id[s] for s in ids], [[r[s] for s in ids] for r in refs]).score


# ------------------------------------------------------------------------------------ the commands
def run(*argv) -> tuple[int, str, str]:
    """``smtlib ARGV`` in this process: exit status, stdout, stderr."""
    from smtlib.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as exc:  # pragma: no cover - main returns its status
            rc = int(exc.code or 0)
    return rc, out.getvalue(), err.getvalue()


_SCORE = re.compile(r"(?:BLEU =|pool BLEU|lattice BLEU) (-?[0-9.]+)(?: -> (-?[0-9.]+))?(?: on ([0-9]+ sentences? of "
                    r"[0-9]+ reference lines?))?")


def _coverage_text(n: int, m: int) -> str:
    return f"{n} sentence{'' if n == 1 else 's'} of {m} reference line{'' if m == 1 else 's'}"


class Checker:
    """The failures of one case, one line each."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.failures: list[str] = []
        self.runs = 0

    def fail(self, command: str, what: str) -> None:
        self.failures.append(f"{self.case.dir.name}: {command}: {what}")

    def call(self, command: str, *argv) -> tuple[int, str, str]:
        self.runs += 1
        return run(*argv)

    def one_error_line(self, command: str, result) -> None:
        rc, _, err = result
        if rc != 2 or len(err.strip().splitlines()) != 1:
            self.fail(command, f"expected exit 2 with one line, got {rc}: {err.strip()[-300:]!r}")

    def close(self, command: str, got: float, want: float, tol: float = TOL) -> None:
        if not abs(got - want) <= tol:
            self.fail(command, f"printed {got}, sacrebleu on the pool's sentences gives {want}")

    def coverage(self, command: str, text: str | None, n: int | None = None) -> None:
        want = _coverage_text(len(self.case.ids) if n is None else n, self.case.n_lines)
        if text != want:
            self.fail(command, f"says it covers {text!r}, not {want!r}")


def _check_rerank(c: Checker) -> None:
    case = c.case
    result = c.call("rerank", "rerank", "--kbest", case.path("pool.nbest"), "--weights", case.path("init.w"), "--refs",
                    *case.ref_paths(), "--out", case.path("rerank.out"))
    if not case.valid:
        return c.one_error_line("rerank", result)
    rc, _, err = result
    match = _SCORE.search(err)
    if rc != 0 or match is None:
        return c.fail("rerank", f"exit {rc}: {err.strip()[-300:]!r}")
    c.close("rerank", float(match.group(1)), sacrebleu_of(one_best(case, INIT), case.refs))
    c.coverage("rerank", match.group(3))
    if case.path("rerank.out").read_text(encoding="utf-8") != case.path("best.txt").read_text(encoding="utf-8"):
        c.fail("rerank", "its output is not the 1-best file (line i: sentence i)")


def _check_kbest_stats(c: Checker) -> None:
    case = c.case
    result = c.call("kbest stats", "kbest", "stats", case.path("pool.nbest"), "--refs", *case.ref_paths())
    if not case.valid:
        return c.one_error_line("kbest stats", result)
    rc, out, err = result
    if rc != 0:
        return c.fail("kbest stats", f"exit {rc}: {err.strip()[-300:]!r}")
    info = json.loads(out)
    c.close("kbest stats", info["bleu_1best_by_total"], sacrebleu_of(one_best(case, {}, by_total=True), case.refs), 1e-8)
    c.coverage("kbest stats", _coverage_text(info["sentences"], info.get("reference_lines", 0)))


def _check_tune(c: Checker, method: str, *settings: str, pool: bool = False) -> None:
    from smtlib.weights import read_weights

    case = c.case
    label = f"tune {method}" + (" --pool" if pool else "")
    source = ["--kbest", case.path("pool.nbest")]
    if pool:
        made = c.call("kbest add", "kbest", "add", "--kbest", case.path("pool.nbest"), "--refs", *case.ref_paths(),
                      "--out", case.path("pool.bin"))
        if not case.valid:
            return c.one_error_line("kbest add", made)
        if made[0] != 0:
            return c.fail("kbest add", f"exit {made[0]}: {made[2].strip()[-300:]!r}")
        source = ["--pool", case.path("pool.bin")]
    out, info_path = case.path(f"{method}.w"), case.path(f"{method}.json")
    result = c.call(label, "tune", method, *source, "--refs", *case.ref_paths(), "--init", case.path("init.w"),
                    "--out", out, "--info", info_path, "--quiet", *settings)
    if not case.valid:
        return c.one_error_line(label, result)
    rc, _, err = result
    if rc == 1 and "tuned weights" in err:  # a tuner's verdict on a degenerate pool, not a score
        return
    match = _SCORE.search(err)
    if rc != 0 or match is None:
        return c.fail(label, f"exit {rc}: {err.strip()[-300:]!r}")
    info = json.loads(info_path.read_text(encoding="utf-8"))
    c.close(label, info["pool_bleu_init"], sacrebleu_of(one_best(case, INIT), case.refs), 1e-8)
    c.close(label, info["pool_bleu_out"], sacrebleu_of(one_best(case, dict(read_weights(out))), case.refs), 1e-8)
    c.close(label, float(match.group(1)), info["pool_bleu_init"], 0.0051)
    c.coverage(label, match.group(3))


def _check_lattice_tuner(c: Checker, method: str, *settings: str) -> None:
    from smtlib.weights import read_weights

    case = c.case
    out, info_path = case.path(f"{method}.w"), case.path(f"{method}.json")
    result = c.call(f"tune {method}", "tune", method, "--lattice", case.path("lattices"), "--refs", *case.ref_paths(),
                    "--init", case.path("lattice.init.w"), "--out", out, "--info", info_path, "--tokenize", "none",
                    "--quiet", *settings)
    if not case.valid:
        return c.one_error_line(f"tune {method}", result)
    rc, _, err = result
    if rc == 1 and "tuned weights" in err:
        return
    match = _SCORE.search(err)
    if rc != 0 or match is None:
        return c.fail(f"tune {method}", f"exit {rc}: {err.strip()[-300:]!r}")
    init = dict(read_weights(case.path("lattice.init.w")))
    want_init = sacrebleu_of(lattice_best(case, init), case.refs, tokenize="none")
    want_out = sacrebleu_of(lattice_best(case, dict(read_weights(out))), case.refs, tokenize="none")
    c.close(f"tune {method}", float(match.group(1)), want_init, 0.0051)
    c.close(f"tune {method}", float(match.group(2)), want_out, 0.0051)
    c.coverage(f"tune {method}", match.group(3))


def _file_expectation(case: Case) -> str:
    """What a 1-best file of the pool (lines 0 to its largest id) is against the references."""
    n = case.ids[-1] + 1
    return "equal" if n == case.n_lines else ("shorter" if n < case.n_lines else "longer")


def _check_file_commands(c: Checker) -> None:
    """bleu, score and compare on the 1-best file: line i against reference line i."""
    case = c.case
    lines = one_best_file(case, INIT)
    by_line = dict(enumerate(lines))
    kind = _file_expectation(case)
    best = case.path("best.txt")
    refs = case.ref_paths()
    for prefix in ([], ["--refs-prefix"]):
        label = "bleu" + (" --refs-prefix" if prefix else "")
        result = c.call(label, "bleu", "--refs", *refs, "--hyps", best, *prefix)
        if kind == "longer" or (kind == "shorter" and not prefix):
            c.one_error_line(label, result)
            c.one_error_line(label.replace("bleu", "score"),
                             c.call("score", "score", "--metric", "bleu", "chrf", "--refs", *refs, "--hyps", best, *prefix))
            c.one_error_line(label.replace("bleu", "compare"),
                             c.call("compare", "compare", "--refs", *refs, "--baseline", best, "--ar-shuffles", "5",
                                    "--boot-samples", "2", *prefix))
            continue
        want = sacrebleu_of(by_line, case.refs)
        rc, out, err = result
        if rc != 0:
            c.fail(label, f"exit {rc}: {err.strip()[-300:]!r}")
            continue
        got = json.loads(out)
        c.close(label, got["score"], want, 1e-8)
        if (got.get("sentences"), got.get("reference_lines")) != (len(lines), case.n_lines):
            c.fail(label, f"says it covers {got.get('sentences')} of {got.get('reference_lines')}")
        rc, out, err = c.call("score", "score", "--metric", "bleu", "chrf", "--refs", *refs, "--hyps", best, *prefix)
        if rc != 0:
            c.fail("score", f"exit {rc}: {err.strip()[-300:]!r}")
        else:
            bleu, chrf = json.loads(out)
            c.close("score", bleu["score"], want, 1e-8)
            ids = sorted(by_line)
            want_chrf = CHRF().corpus_score([by_line[s] for s in ids], [[r[s] for s in ids] for r in case.refs]).score
            c.close("score chrf", chrf["score"], want_chrf, 1e-8)
        tsv = case.path("compare.tsv")
        rc, out, err = c.call("compare", "compare", "--refs", *refs, "--baseline", best, "--ar-shuffles", "5",
                              "--boot-samples", "2", "--tsv", tsv, *prefix)
        if rc != 0:
            c.fail("compare", f"exit {rc}: {err.strip()[-300:]!r}")
        else:
            rows = [line.split("\t") for line in tsv.read_text(encoding="utf-8").splitlines()]
            header = rows[0]
            row = next(r for r in rows[1:] if r[header.index("metric")] == "bleu")
            c.close("compare", float(row[header.index("mean")]), want, 1e-6)
            if f"scored: {_coverage_text(len(lines), case.n_lines)}" not in out:
                c.fail("compare", "does not say what it scored")


#: the commands each case runs (name -> check)
COMMANDS = {
    "rerank": _check_rerank,
    "kbest stats": _check_kbest_stats,
    "tune kbmira": lambda c: _check_tune(c, "kbmira", "--set", "epochs=3"),
    "tune mert": lambda c: _check_tune(c, "mert", "--set", "random_restarts=2"),
    "tune pro": lambda c: _check_tune(c, "pro"),
    "kbest add + tune --pool": lambda c: _check_tune(c, "kbmira", "--set", "epochs=3", pool=True),
    "tune lbmert": lambda c: _check_lattice_tuner(c, "lbmert", "--set", "random_restarts=2"),
    "tune lbmira": lambda c: _check_lattice_tuner(c, "lbmira", "--set", "epochs=3"),
    "bleu, score, compare": _check_file_commands,
}


def check_case(case: Case, commands=COMMANDS) -> tuple[list[str], int]:
    """The failures of every command on ``case`` and the number of command runs."""
    checker = Checker(case)
    for check in commands.values():
        check(checker)
    return checker.failures, checker.runs
