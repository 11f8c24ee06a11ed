"""``smtlib compare --ci --correction holm --all-pairs --pairs-tsv`` end to end: the interval and
corrected p-values in the text table, TSV and LaTeX, the pair matrix, and bad inputs (exit 2)."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.report.significance import holm


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


@pytest.fixture
def files(tmp_path):
    """60 reference sentences; 'good' replicas copy it, 'bad' ones replace one word of each sentence,
    'mid' ones do so on every other sentence."""
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(40)]
    refs = [" ".join(rng.choice(words, size=rng.integers(6, 12))) for _ in range(60)]
    out = {"ref": _write(tmp_path / "ref.txt", refs)}
    for r in range(2):
        out[f"bad{r}"] = _write(tmp_path / f"bad{r}.txt", [" ".join(["zzz"] + x.split()[1:]) for x in refs])
        out[f"mid{r}"] = _write(tmp_path / f"mid{r}.txt",
                                [" ".join(["zzz"] + x.split()[1:]) if (i + r) % 2 else x for i, x in enumerate(refs)])
        out[f"good{r}"] = _write(tmp_path / f"good{r}.txt", refs)
    return out


def _args(files, *extra):
    return ["compare", "--refs", files["ref"], "--baseline", files["bad0"], files["bad1"],
            "--system", f"mid={files['mid0']},{files['mid1']}", "--system", f"good={files['good0']},{files['good1']}",
            "--ar-shuffles", "500", "--boot-samples", "200", "--seed", "3", *map(str, extra)]


def _tsv(path):
    rows = [line.split("\t") for line in path.read_text().splitlines()]
    return [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]


def test_ci_in_text_tsv_and_latex(files, cli, tmp_path):
    plain = cli(*_args(files, "--tsv", tmp_path / "plain.tsv"))
    result = cli(*_args(files, "--ci", "--tsv", tmp_path / "ci.tsv", "--latex", tmp_path / "ci.tex"))
    assert plain.returncode == 0 and result.returncode == 0, result.stderr
    lines, before = result.stdout.splitlines(), plain.stdout.splitlines()
    assert lines[0].split()[:5] == ["n=2", "BLEU", "(s_sel/s_opt/p)", "Length", "(s_sel/s_opt/p)"]
    assert "BLEU μ ± 95% CI" in lines[0] and "Length μ ± 95% CI" in lines[0]
    for a, b in zip(before[:4], lines[:4], strict=True):  # MultEval's columns keep their places
        assert b.startswith(a)
    rows, old = _tsv(tmp_path / "ci.tsv"), _tsv(tmp_path / "plain.tsv")
    for row, o in zip(rows, old, strict=True):
        assert {k: row[k] for k in o} == o
        mu, half = float(row["boot_mean"]), float(row["ci_half"])
        assert float(row["ci_low"]) == pytest.approx(mu - half, abs=2e-6)
        assert float(row["ci_high"]) == pytest.approx(mu + half, abs=2e-6)
        # only BLEU of the systems that differ from the reference varies across resamples
        assert (half > 0) == (row["metric"] == "bleu" and row["system"] != "good"), row
        shown = next(line for line in lines if line.startswith(row["system"] + " "))
        assert f"{mu:.1f} ± {half:.1f}" in shown
    assert "$\\mu \\pm$ 95\\% CI" in (tmp_path / "ci.tex").read_text()
    # the same seed gives the same interval
    again = cli(*_args(files, "--ci", "--tsv", tmp_path / "again.tsv"))
    assert again.stdout == result.stdout and (tmp_path / "again.tsv").read_text() == (tmp_path / "ci.tsv").read_text()


def test_holm_correction(files, cli, tmp_path):
    raw = cli(*_args(files, "--tsv", tmp_path / "raw.tsv"))
    result = cli(*_args(files, "--correction", "holm", "--tsv", tmp_path / "holm.tsv", "--latex", tmp_path / "h.tex"))
    assert raw.returncode == 0 and result.returncode == 0, result.stderr
    assert "p: Holm-corrected over the 2 systems' tests against 'baseline', per metric" in result.stdout
    assert "|correction:holm" in result.stdout and "correction" not in raw.stdout
    before, after = _tsv(tmp_path / "raw.tsv"), _tsv(tmp_path / "holm.tsv")
    for metric in ("bleu", "length"):
        ps = [float(r["p"]) for r in before if r["metric"] == metric and r["p"] != "-"]
        corrected = [float(r["p_holm"]) for r in after if r["metric"] == metric and r["p_holm"] != "-"]
        kept = [float(r["p_uncorrected"]) for r in after if r["metric"] == metric and r["p_uncorrected"] != "-"]
        assert kept == ps
        np.testing.assert_allclose(corrected, holm(ps), atol=1e-6)
    assert "$p$ (Holm)" in (tmp_path / "h.tex").read_text()


def test_all_pairs(files, cli, tmp_path):
    table = cli(*_args(files, "--tsv", tmp_path / "t.tsv"))
    result = cli(*_args(files, "--all-pairs", "--correction", "holm", "--pairs-tsv", tmp_path / "pairs.tsv"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = lines.index("BLEU p-values, all pairs (Holm-corrected over 3 pairs):")
    assert lines[start + 1].split() == ["baseline", "mid", "good"]
    assert lines[start + 2].split()[:2] == ["baseline", "-"] and lines[start + 4].split()[-1] == "-"
    assert "Length p-values, all pairs (Holm-corrected over 3 pairs):" in lines
    pairs = _tsv(tmp_path / "pairs.tsv")
    assert [(p["metric"], p["system_a"], p["system_b"]) for p in pairs] == [
        (m, a, b) for m in ("bleu", "length") for a, b in (("baseline", "mid"), ("baseline", "good"), ("mid", "good"))]
    # a pair with the baseline is the table's (uncorrected) test, the same shuffles
    for row in _tsv(tmp_path / "t.tsv"):
        if row["p"] != "-":
            pair = next(p for p in pairs if p["metric"] == row["metric"] and p["system_b"] == row["system"]
                        and p["system_a"] == "baseline")
            assert pair["p_uncorrected"] == row["p"]
    for metric in ("bleu", "length"):
        mine = [p for p in pairs if p["metric"] == metric]
        np.testing.assert_allclose([float(p["p"]) for p in mine], holm([float(p["p_uncorrected"]) for p in mine]),
                                   atol=1e-6)
    # every sentence of 'good' beats 'mid' and 'baseline' on BLEU
    bleu = {(p["system_a"], p["system_b"]): float(p["p"]) for p in pairs if p["metric"] == "bleu"}
    assert bleu[("mid", "good")] < 0.05 and bleu[("baseline", "good")] < 0.05
    uncorrected = cli(*_args(files, "--all-pairs"))
    assert "BLEU p-values, all pairs (uncorrected):" in uncorrected.stdout
    assert table.returncode == 0


def _one_line(result, name):
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and name in lines[0], result.stderr


def test_bad_inputs_exit_2(files, cli, tmp_path):
    _one_line(cli(*_args(files, "--pairs-tsv", tmp_path / "p.tsv")), "--pairs-tsv needs --all-pairs")
    assert not (tmp_path / "p.tsv").exists()
    bad = cli(*_args(files, "--correction", "bonferroni"))  # argparse's usage error: the option on the last line
    assert bad.returncode == 2 and "--correction" in bad.stderr.strip().splitlines()[-1]
    # a replica file of another length still fails as before, with --all-pairs and --ci too
    short = _write(tmp_path / "short.txt", ["a"] * 10)
    _one_line(cli("compare", "--refs", files["ref"], "--baseline", files["bad0"], "--system", f"s={short}",
                  "--all-pairs", "--ci"), "short.txt")
