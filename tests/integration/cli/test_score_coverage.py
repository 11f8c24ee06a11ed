"""Which sentences a score covers: the pool's ids choose the reference lines, in every command.

The property (:mod:`tests.support.coverage_property`): over random pools with gaps and offsets in
their ids and random reference counts, every command's printed BLEU equals sacrebleu's on exactly
the pool's sentences and says how many it covers, or the command exits 2 with one line. The
reproduction of the held-out half of Moses's ``test_scorer_data`` holds the numbers the commands
print for it.
"""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from sacrebleu.metrics import BLEU

from smtlib.bleu.references import covered_sentences
from smtlib.errors import InputError
from tests.support.coverage_property import COMMANDS, check_case, random_case

#: random cases of the property (each runs every command of COMMANDS: about 15 command lines)
CASES = 80


@pytest.mark.filterwarnings("ignore:pro. no pair:UserWarning")
def test_every_command_scores_exactly_the_pools_sentences(tmp_path):
    rng = np.random.default_rng(50)
    failures, runs, invalid = [], 0, 0
    for k in range(CASES):
        case = random_case(rng, tmp_path / f"case{k}")
        found, count = check_case(case)
        failures += found
        runs += count
        invalid += not case.valid
    assert not failures, "\n".join(failures[:20])
    assert runs > 10 * CASES and 0 < invalid < CASES / 2  # the error path is exercised, and the scores more


def test_the_rule():
    refs = [["a", "b", "c", "d"]]
    coverage = covered_sentences([3, 1, 1], refs)
    assert coverage.ids.tolist() == [1, 3] and str(coverage) == "2 sentences of 4 reference lines"
    assert coverage.references(refs) == [["b", "d"]] and coverage.pick(["w", "x", "y", "z"]) == ["x", "z"]
    assert coverage.info() == {"sentences": 2, "reference_lines": 4} and not coverage.complete
    assert str(covered_sentences([0], 1)) == "1 sentence of 1 reference line"
    with pytest.raises(InputError, match="sentence id 4, beyond the references .4 lines, ids 0 to 3."):
        covered_sentences([0, 4], refs)
    with pytest.raises(InputError, match="negative"):
        covered_sentences([-1], refs)
    # a file whose line i is sentence i: as many lines as the references, or fewer with --refs-prefix
    assert covered_sentences(range(4), refs, lines=True).complete
    with pytest.raises(InputError, match=r"hyp:3: has 2 lines but the references have 4 .*--refs-prefix"):
        covered_sentences(range(2), refs, lines=True, path="hyp")
    assert str(covered_sentences(range(2), refs, lines=True, prefix=True)) == "2 sentences of 4 reference lines"
    with pytest.raises(InputError, match="hyp:5: has 5 lines but the references have 4"):
        covered_sentences(range(5), refs, lines=True, prefix=True, path="hyp")


def test_the_property_covers_every_scoring_command():
    assert {"rerank", "kbest stats", "tune kbmira", "tune mert", "tune pro", "kbest add + tune --pool", "tune lbmert",
            "tune lbmira", "bleu, score, compare"} == set(COMMANDS)


@pytest.mark.data
def test_the_held_out_half_of_test_scorer_data(shared_data, tmp_path, cli):
    """Sentence ids 50-99 of Moses's test_scorer_data with its first 100 reference lines: every
    command prints sacrebleu's BLEU of those 50 sentences (13.20 under these weights; the whole
    reference file scored reference lines 0-49 as empty outputs: 3.43)."""
    base = shared_data / "moses-mert-nbest" / "test_scorer_data"
    with gzip.open(base / "nbest.out.gz", "rt", encoding="utf-8") as fh:
        held_out = [line for line in fh if int(line.split("|||", 1)[0]) >= 50]
    with gzip.open(base / "reference.txt.gz", "rt", encoding="utf-8") as fh:
        refs = [line.rstrip("\n") for _, line in zip(range(100), fh, strict=False)]
    nbest, ref, init = tmp_path / "test.nbest", tmp_path / "ref", tmp_path / "init.weights"
    nbest.write_text("".join(held_out), encoding="utf-8")
    ref.write_text("\n".join(refs) + "\n", encoding="utf-8")
    init.write_text("d_0 0.3\nlm_0 0.5\ntm_0 0.2\ntm_1 0.2\nw_0 -0.5\n", encoding="utf-8")
    rerank = cli("rerank", "--kbest", nbest, "--weights", init, "--refs", ref, "--lowercase", "--out", tmp_path / "best")
    assert rerank.returncode == 0, rerank.stderr
    lines = (tmp_path / "best").read_text(encoding="utf-8").split("\n")[:100]
    assert lines[:50] == [""] * 50 and all(lines[50:])
    want = BLEU(lowercase=True).corpus_score(lines[50:], [refs[50:]]).score
    assert f"BLEU = {want:.4f} on 50 sentences of 100 reference lines (" in rerank.stderr
    assert round(want, 2) == 13.20
    tune = cli("tune", "kbmira", "--kbest", nbest, "--refs", ref, "--init", init, "--out", tmp_path / "w",
               "--lowercase", "--info", tmp_path / "info.json")
    assert tune.returncode == 0, tune.stderr
    info = json.loads((tmp_path / "info.json").read_text(encoding="utf-8"))
    assert info["pool_bleu_init"] == pytest.approx(want, abs=1e-9)
    assert (info["sentences"], info["reference_lines"]) == (50, 100)
    after = cli("rerank", "--kbest", nbest, "--weights", tmp_path / "w", "--refs", ref, "--lowercase")
    out_lines = after.stdout.split("\n")[50:100]
    assert info["pool_bleu_out"] == pytest.approx(BLEU(lowercase=True).corpus_score(out_lines, [refs[50:]]).score,
                                                  abs=1e-9)
    assert f"pool BLEU {want:.2f} -> {info['pool_bleu_out']:.2f} on 50 sentences of 100 reference lines" in tune.stderr
    # the tuner's own progress lines score the same sentences: its best epoch is the BLEU printed after
    assert info["objective"] * 100 == pytest.approx(info["pool_bleu_out"], abs=1e-6)
    stats = json.loads(cli("kbest", "stats", nbest, "--refs", ref, "--lowercase").stdout)
    assert (stats["sentences"], stats["reference_lines"]) == (50, 100)
    assert stats["hypotheses_per_sentence"] == {"min": 100, "mean": 100.0, "max": 100}
    best: dict[int, tuple[float, str]] = {}
    for line in held_out:
        fields = line.split("|||")
        sid, total = int(fields[0]), float(fields[-1])
        if sid not in best or total > best[sid][0]:
            best[sid] = (total, " ".join(fields[1].split()))
    by_total = BLEU(lowercase=True).corpus_score([best[s][1] for s in range(50, 100)], [refs[50:]]).score
    assert stats["bleu_1best_by_total"] == pytest.approx(by_total, abs=1e-9)


# -- unusual but valid inputs, as a new user gives them ----------------------------------------------
REFS = ["the cat sat on the mat .", "a dog barked loudly at night", "hello world again", "we all live here"]
HYPS = ["the cat sat on a mat .", "a dog barked at night", "hello world", "we live here"]
NBEST = [f"{s} ||| {h} ||| lm= -{s + 1} w= -{len(h.split())} ||| -{s + 2}" for s, h in enumerate(HYPS)]


def _write(path, lines, *, newline="\n", compress=False, bom=False):
    data = ("\ufeff" if bom else "") + "".join(line + newline for line in lines)
    path.write_bytes(gzip.compress(data.encode("utf-8")) if compress else data.encode("utf-8"))
    return path


def test_gzip_plain_and_crlf_files_mixed_score_as_clean_ones(cli, tmp_path):
    """References in gzip and CRLF text, k-best lists one gzip one CRLF, a 1-best with CRLF: the same
    numbers as the clean files give, and as sacrebleu gives."""
    clean = [_write(tmp_path / "r1", REFS), _write(tmp_path / "r2", REFS[::-1])]
    mixed = [_write(tmp_path / "r1.gz", REFS, compress=True), _write(tmp_path / "r2.crlf", REFS[::-1], newline="\r\n")]
    want = BLEU().corpus_score(HYPS, [REFS, REFS[::-1]]).score
    weights = tmp_path / "w"
    weights.write_text("lm_0 1\n", encoding="utf-8")
    hyps = [_write(tmp_path / "h", HYPS), _write(tmp_path / "h.crlf", HYPS, newline="\r\n")]
    kbest = [_write(tmp_path / "k", NBEST), _write(tmp_path / "k1.gz", NBEST[:2], compress=True),
             _write(tmp_path / "k2.crlf", NBEST[2:], newline="\r\n")]
    for refs in (clean, mixed):
        for hyp in hyps:
            got = json.loads(cli("bleu", "--refs", *refs, "--hyps", hyp).stdout)
            assert got["score"] == pytest.approx(want, abs=1e-8) and got["sentences"] == 4
        for lists in ([kbest[0]], kbest[1:]):
            r = cli("rerank", "--kbest", *lists, "--weights", weights, "--refs", *refs)
            assert r.returncode == 0 and f"BLEU = {want:.4f} on 4 sentences of 4 reference lines" in r.stderr, r.stderr


def test_a_byte_order_mark_is_one_line_naming_the_file(cli, tmp_path):
    """A UTF-8 byte-order mark would be scored as part of the first word (sacrebleu keeps it: BLEU
    36.56 becomes 26.54 with nothing to show); every reader of segments to score refuses it."""
    ref, hyp = _write(tmp_path / "ref", REFS), _write(tmp_path / "hyp", HYPS)
    ref_bom, hyp_bom = _write(tmp_path / "ref.bom", REFS, bom=True), _write(tmp_path / "hyp.bom", HYPS, bom=True)
    nbest = _write(tmp_path / "k", NBEST)
    weights = tmp_path / "w"
    weights.write_text("lm_0 1\n", encoding="utf-8")
    for command, bad in ((["bleu", "--refs", ref_bom, "--hyps", hyp], ref_bom),
                         (["bleu", "--refs", ref, "--hyps", hyp_bom], hyp_bom),
                         (["score", "--metric", "chrf", "--refs", ref, "--hyps", hyp_bom], hyp_bom),
                         (["compare", "--refs", ref, "--baseline", hyp_bom], hyp_bom),
                         (["rerank", "--kbest", nbest, "--weights", weights, "--refs", ref_bom], ref_bom),
                         (["kbest", "stats", nbest, "--refs", ref_bom], ref_bom),
                         (["tune", "mert", "--kbest", nbest, "--refs", ref_bom, "--init", weights, "--out",
                           tmp_path / "out"], ref_bom)):
        r = cli(*command)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert f"{bad}:1: starts with a UTF-8 byte-order mark" in r.stderr
    assert not (tmp_path / "out").exists()


def test_a_pool_scored_with_other_references_says_what_it_covers(cli, tmp_path):
    """The pool of one system (4 sentences) with another's references (6 lines): accepted, since ids
    choose lines, and every output says it covers 4 sentences of 6 reference lines; kbest add counts
    the pool's sentences, not the references' lines; a binary pool refuses references other than its own."""
    other = _write(tmp_path / "other", [*REFS[::-1], "five", "six"])
    nbest = _write(tmp_path / "k", NBEST)
    want = BLEU().corpus_score(HYPS, [REFS[::-1]]).score
    weights = tmp_path / "w"
    weights.write_text("lm_0 1\n", encoding="utf-8")
    r = cli("rerank", "--kbest", nbest, "--weights", weights, "--refs", other)
    assert f"BLEU = {want:.4f} on 4 sentences of 6 reference lines" in r.stderr, r.stderr
    r = cli("kbest", "add", "--kbest", nbest, "--refs", other, "--out", tmp_path / "pool")
    assert r.returncode == 0 and "pool of 4 hypotheses over 4 sentences of 6 reference lines" in r.stderr, r.stderr
    r = cli("tune", "kbmira", "--pool", tmp_path / "pool", "--refs", _write(tmp_path / "ref", REFS), "--init", weights,
            "--out", tmp_path / "out")
    assert r.returncode == 2 and "computed against other references" in r.stderr
