"""``smtlib decode --backend command``: one set decoded by any decoder command, as ``smtlib loop`` decodes it.

Reference: the fake decoder's own n-best list (``tests/support/fake_decoder.py``) read with
:func:`smtlib.kbest.pool.read_pool`, and the loop's first iteration on the same inputs.
"""
from __future__ import annotations

import gzip

import pytest

from smtlib.kbest.pool import read_pool
from tests.integration.loop.conftest import loop_args, loop_in_process, nbest_lines
from tests.support.fake_decoder import command


def _decode(example, tmp_path, mode: str, *options: str, jobs: int = 1) -> tuple[int, str]:
    args = ["decode", "--backend", "command", "--decoder", command(mode), "--weights", example["init.weights"],
            "--input", example["dev.src"], "--kbest", str(tmp_path / "dev.kbest.gz"), "--k", "4",
            "--output", str(tmp_path / "dev.1best"), "--jobs", str(jobs), *options]
    return loop_in_process(args)


@pytest.mark.parametrize("mode", ["weights", "weights_args", "ini"])
def test_the_command_backend_writes_what_the_loops_first_iteration_decodes(example, tmp_path, mode):
    options = ("--decoder-ini", example["moses.ini"]) if mode == "ini" else ()
    code, err = _decode(example, tmp_path, mode, *options, jobs=2)
    assert code == 0, err
    work = tmp_path / "loop"
    init = example["moses.ini"] if mode == "ini" else None
    code, err = loop_in_process(loop_args(example, work, mode, "--max-iterations", "1", init=init))
    assert code == 0, err
    ours = read_pool(str(tmp_path / "dev.kbest.gz"))
    loops = read_pool(str(work / "it1" / "nbest.gz"))
    assert ours.texts == loops.texts and (ours.dense == loops.dense).all()
    assert ours.offsets.tolist() == loops.offsets.tolist()
    one_best = (tmp_path / "dev.1best").read_text().splitlines()
    assert one_best == [loops.texts[int(r)] for r in loops.offsets[:-1]]
    assert len(one_best) == len(open(example["dev.src"]).read().splitlines())
    # our k-best file is in the Moses format every smtlib command reads
    assert all(len(line.split(" ||| ")) == 4 for line in nbest_lines(tmp_path / "dev.kbest.gz"))


def test_shards_do_not_change_the_outputs(example, tmp_path):
    outputs = {}
    for jobs in (1, 3):
        folder = tmp_path / f"j{jobs}"
        folder.mkdir()
        code, err = _decode(example, folder, "weights", jobs=jobs)
        assert code == 0, err
        outputs[jobs] = (gzip.open(folder / "dev.kbest.gz").read(), (folder / "dev.1best").read_bytes())
    assert outputs[1] == outputs[3]


@pytest.mark.parametrize("options, message", [
    ((), "--decoder-ini"),  # {ini} without the moses.ini it rewrites
    (("--lattice", "x.lattice.gz"), "writes no lattice"),
    (("--decoder-ini", "moses.ini", "--dialect", "klingon"), "unknown --dialect"),
])
def test_bad_uses_exit_2(example, tmp_path, options, message):
    options = tuple(example["moses.ini"] if o == "moses.ini" else o for o in options)
    code, err = _decode(example, tmp_path, "ini", *options)
    assert code == 2 and message in err
    assert not (tmp_path / "dev.kbest.gz").exists() and not (tmp_path / "dev.1best").exists()


def test_a_failing_decoder_exits_2_and_writes_nothing(example, tmp_path):
    args = ["decode", "--backend", "command", "--decoder", command("weights", f"--calls {tmp_path}/calls --break exit@1"), "--weights",
            example["init.weights"], "--input", example["dev.src"], "--kbest", str(tmp_path / "k.gz"),
            "--output", str(tmp_path / "o")]
    code, err = loop_in_process(args)
    assert code == 2 and "exit" in err.lower()
    assert not (tmp_path / "k.gz").exists() and not (tmp_path / "o").exists()


def test_a_short_list_exits_2_naming_the_missing_sentence(example, tmp_path):
    args = ["decode", "--backend", "command", "--decoder", command("weights", f"--calls {tmp_path}/calls --break short@1"), "--weights",
            example["init.weights"], "--input", example["dev.src"], "--kbest", str(tmp_path / "k.gz")]
    code, err = loop_in_process(args)
    n = len(open(example["dev.src"]).read().splitlines())
    assert code == 2 and f"none for sentence {n - 1}" in err
