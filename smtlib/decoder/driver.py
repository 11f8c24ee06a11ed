"""Decoding a whole file, in one process or several, with a progress line.

The model is loaded (filtered to the input's source phrases) once, in the parent process; worker
processes are forked from it, so each has the model without reading it again and the large arrays
are shared copy-on-write. Sentences are handed out in small chunks and results are collected in
input order, and decoding a sentence depends on nothing but the sentence, the model and the
weights, so the output is byte-identical for any number of processes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import sys
import time
from collections.abc import Iterator
from typing import IO

from smtlib.decoder.decoder import Decoder, DecoderConfig
from smtlib.decoder.loader import load_model
from smtlib.decoder.model import prepare_tokens
from smtlib.kbest.format import DECODED, kbest_line
from smtlib.lattice.format import lattice_block, lattice_header
from smtlib.system.modeldir import read_model_spec
from smtlib.errors import InputError
from smtlib.io import LOOP_COMPRESSLEVEL, atomic_output, read_lines
from smtlib.weights import read_weights

_DECODER: Decoder | None = None  # the worker's decoder (set before forking)
_WANT: tuple[int, bool] = (0, False)


@dataclasses.dataclass
class DecodeStats:
    sentences: int
    seconds: float  #: decoding time (wall clock), model loading and compilation excluded
    cpu_seconds: float  #: CPU time of the decoding loop in this process (with one job: all of it)
    load_seconds: float
    nodes: int
    edges: int
    #: per-phase seconds of the decoding loop (see ``Decoder.timings``); with several jobs, the
    #: workers' phases are not collected and this is empty
    phases: dict[str, float] = dataclasses.field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.sentences / self.seconds if self.seconds > 0 else float("inf")


def _decode_one(item: tuple[int, str]) -> tuple[str, str, str, int, int]:
    """Decode one sentence in a worker: (1-best, k-best block, lattice block, nodes, edges).

    The lattice block is written to the text stream as a string, as it was before the compiled
    writer: the text stream's buffering decides the gzip stream's chunks, so the gzip bytes stay
    the same too.
    """
    sent_id, line = item
    k, want_lattice = _WANT
    dec = _DECODER
    res = dec.decode(line, sent_id, kbest=k, lattice=want_lattice)
    kb = "".join(kbest_line(sent_id, line.hyp, line.features, DECODED.total(line.total)) + "\n" for line in res.kbest)
    lat = lattice_block(res.lattice).decode("utf-8") if want_lattice and res.lattice is not None else ""
    return res.best, kb, lat, res.n_nodes, res.n_edges


def _results(lines: list[str], jobs: int, chunksize: int) -> Iterator[tuple[str, str, str, int, int]]:
    items = list(enumerate(lines))
    if jobs <= 1 or len(items) <= 1:
        yield from map(_decode_one, items)
        return
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(jobs) as pool:
        yield from pool.imap(_decode_one, items, chunksize=chunksize)


def _located(results: Iterator[tuple[str, str, str, int, int]], input_path) -> Iterator[tuple[str, str, str, int, int]]:
    """``results`` in input order; an error while decoding sentence i names its input line (i + 1)."""
    line = 0
    try:
        for line, result in enumerate(results, 1):  # noqa: B007 - line used in the error
            yield result
    except (RuntimeError, ValueError, IndexError) as exc:
        raise RuntimeError(f"{os.fspath(input_path)}:{line + 1}: decoding failed: {exc}") from exc


class Progress:
    """A progress line on stderr: sentences done, rate and time left, at most every ``interval`` seconds."""

    def __init__(self, total: int, stream: IO[str] | None = None, interval: float = 5.0, enabled: bool = True):
        self.total = total
        self.stream = stream or sys.stderr
        self.interval = interval
        self.enabled = enabled
        self.start = time.perf_counter()
        self.last = self.start

    def update(self, done: int) -> None:
        now = time.perf_counter()
        if self.enabled and (now - self.last >= self.interval):
            self.last = now
            self._print(done, now)

    def finish(self, done: int) -> None:
        if self.enabled:
            self._print(done, time.perf_counter())

    def _print(self, done: int, now: float) -> None:
        rate = done / max(now - self.start, 1e-9)
        eta = f", ETA {(self.total - done) / rate:.0f} s" if 0 < done < self.total else ""
        print(f"decode: {done}/{self.total} sentences, {rate:.1f} sent/s{eta}", file=self.stream, flush=True)


def decode_file(model_dir: str | os.PathLike, weights_path: str | os.PathLike, input_path: str | os.PathLike, *,
                kbest_out: str | os.PathLike | None = None, output: str | os.PathLike | None = None,
                lattice_out: str | os.PathLike | None = None, config: DecoderConfig | None = None,
                jobs: int = 1, progress: bool = True,
                chunksize: int = 4) -> DecodeStats:
    """Translate every line of ``input_path``; write 1-best, k-best and lattice files (all atomic).

    Raises
    ------
    InputError
        On a bad model directory, weights file or input file.
    """
    global _DECODER, _WANT
    config = config or DecoderConfig()
    if jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {jobs}")
    t0 = time.perf_counter()
    lines = read_lines(input_path, what="input", allow_empty=True)
    spec = read_model_spec(model_dir)
    tokenized = [prepare_tokens(spec, line) for line in lines]
    model = load_model(model_dir, tokenized)
    weights = model.read_weights(read_weights(weights_path), path=weights_path)
    decoder = Decoder(model, weights, config)
    _DECODER = decoder
    _WANT = (config.k if kbest_out is not None else 1, lattice_out is not None)
    # compile (or load from numba's cache) every kernel before the clock starts
    decoder.decode(next((line for line in lines if line.strip()), "x"), 0, kbest=_WANT[0], lattice=_WANT[1])
    load_seconds = time.perf_counter() - t0
    if progress:  # after every check of the inputs: a bad input still gives one line on stderr
        print(f"decode: model loaded in {load_seconds:.1f} s; decoding {len(lines)} sentences", file=sys.stderr,
              flush=True)
    decoder.timings = dict.fromkeys(decoder.timings, 0.0)
    t1 = time.perf_counter()
    c1 = time.process_time()
    nodes = edges = 0
    prog = Progress(len(lines), enabled=progress)
    with contextlib.ExitStack() as stack:
        out_best = stack.enter_context(atomic_output(output)) if output is not None else None
        level = LOOP_COMPRESSLEVEL
        out_kb = stack.enter_context(atomic_output(kbest_out, compresslevel=level)) if kbest_out is not None else None
        out_lat = None if lattice_out is None else stack.enter_context(atomic_output(lattice_out, compresslevel=level))
        if out_lat is not None:
            out_lat.write(lattice_header(list(model.layout.names)))
        done = 0
        for best, kb, lat, nn, ne in _located(_results(lines, jobs, chunksize), input_path):
            if out_best is not None:
                out_best.write(best + "\n")
            if out_kb is not None:
                out_kb.write(kb)
            if out_lat is not None:
                out_lat.write(lat)
            nodes += nn
            edges += ne
            done += 1
            prog.update(done)
        prog.finish(done)
    _DECODER = None
    phases = dict(decoder.timings) if jobs <= 1 or len(lines) <= 1 else {}
    return DecodeStats(len(lines), time.perf_counter() - t1, time.process_time() - c1, load_seconds, nodes, edges,
                       phases)
