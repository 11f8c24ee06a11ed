"""The tuning loop of ``smtlib loop``: decode, check, pool, tune, stop; resumable after any iteration.

Iteration N (1-based), as mert-moses.pl's main loop:

1. write the current weights in the forms the decoder command reads
   (:func:`smtlib.loop.decoder_weights.write_iteration_weights`) and run the decoder on the dev set
   (:func:`smtlib.loop.decoder_command.decode`, ``--jobs`` shards), joining its n-best lists into
   ``itN/nbest.gz``;
2. check the list (:mod:`smtlib.loop.decoder_output`: every sentence, the first iteration's dense
   features; in iteration 1 also the initial weights' names against it, the rule of every command,
   :func:`smtlib.weights.check_weight_names`, unless they come from a moses.ini, the decoder's own
   names: its features that the n-best lists lack, such as untuneable ones, keep their value, as in
   mert-moses.pl) and score the decoder's 1-best (dev BLEU); with ``--test``, decode and score the test set
   with the same weights;
3. add the list to the pool (:func:`smtlib.kbest.store.add_kbest`): the pool of iteration N-1 plus
   this list, or with ``--prev-nbest W`` the lists of iterations max(1, N-W+1) .. N (mert-moses.pl's
   ``--prev-aggregate-nbestlist`` counts the earlier iterations besides the current one: its W-1 is
   our W);
4. one optimizer step on the pool (:func:`smtlib.loop.step.tune_step`), whose result is the next
   iteration's weights; the pool BLEU is the BLEU of the pool's 1-best under them, on the sentences
   the pool covers (:func:`smtlib.bleu.references.covered_sentences`);
5. stop when no weight moved by more than ``--epsilon`` (mert-moses.pl stops when none moved by
   1e-5 or more; the two differ only at exactly epsilon), or at ``--max-iterations``.

A weight that the pool does not have (a sparse feature that never fired, a feature of the initial
weights the decoder does not print) is carried over unchanged. After every iteration ``curve.tsv``,
``best.weights`` (the weights of the iteration whose decoder 1-best has the best dev score, as
mert-moses.pl's ``--return-best-dev``; the dev score is the ``--metric``, BLEU by default) and
``best.json`` are rewritten, so a killed loop loses only the iteration it was in.

**Errors.** Anything wrong with what the decoder did (a non-zero exit, a short or malformed list,
changed features) is an :class:`~smtlib.errors.InputError` whose one line starts with the iteration;
finished iterations stay as they are, and a rerun of the same command starts the failed iteration
again.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

import numpy as np

from smtlib.bleu.corpus import corpus_bleu
from smtlib.bleu.metrics import parse_mixture
from smtlib.bleu.references import covered_sentences, read_references
from smtlib.errors import InputError
from smtlib.io import atomic_output, read_lines
from smtlib.kbest.pool import KBestPool
from smtlib.loop import workdir as wd
from smtlib.loop.constraints import resolve
from smtlib.loop.decoder_command import DecoderTemplate
from smtlib.loop.decoder_output import DecodedList, check_features, decode_and_read
from smtlib.loop.decoder_weights import InitialWeights, write_decoder_weights, write_iteration_weights
from smtlib.loop.options import LoopOptions
from smtlib.loop.step import StepSettings, tune_step
from smtlib.tuners.registry import check_metric, get_tuner_class
from smtlib.weights import check_weight_names, read_weights, write_weights


@dataclasses.dataclass
class _Inputs:
    """What the loop reads once: the dev and test sets, the initial weights, the decoder command, the metric."""

    source: list[str]
    references: list[list[str]]
    test_source: list[str] | None
    test_references: list[list[str]] | None
    initial: InitialWeights
    template: DecoderTemplate
    mixture: Any
    tuner_params: dict
    start_params: dict | None


def _read_inputs(options: LoopOptions) -> _Inputs:
    options.check()
    template = DecoderTemplate.parse(options.decoder)
    source = read_lines(options.source, what="dev source")
    references = read_references(options.refs, source=options.source, source_lines=len(source))
    test_source = test_references = None
    if options.test:
        test_source = read_lines(options.test, what="test source")
        test_references = read_references(options.test_refs, source=options.test, source_lines=len(test_source))
    initial = InitialWeights.read(options.init)
    if "ini" in template.used and initial.ini is None:
        raise InputError("the decoder command has {ini} but --init is a weights file, not a moses.ini "
                         "(smtlib weights to-moses-ini W --ini moses.ini writes one)", options.init)
    mixture = parse_mixture(options.metric, options.metric_options)
    for method in filter(None, (options.method, options.start_from)):
        check_metric(method, mixture.names)
    if any(getattr(m.settings, "eps_smoothing", False) for m, _ in mixture.parts):
        raise InputError("--chrf-eps-smoothing: the tuners optimise chrF with effective-order averaging (sacrebleu's "
                         "default)")
    tuner_params = get_tuner_class(options.method)(seed=options.seed, **options.params).params
    start_params = (get_tuner_class(options.start_from)(seed=options.seed, **options.start_params).params
                    if options.start_from else None)
    return _Inputs(source, references, test_source, test_references, initial, template, mixture, tuner_params,
                   start_params)


def pool_bleu(pool: KBestPool, weights: np.ndarray, references: Sequence[Sequence[str]], coverage, settings) -> float:
    """Corpus BLEU (0-1) of the pool's 1-best under ``weights`` on the sentences it covers (as ``smtlib rerank``)."""
    rows = pool.best_indices(weights)
    lines = [pool.texts[int(r)] if r >= 0 else "" for r in rows]
    return corpus_bleu(coverage.pick(lines), coverage.references(references), settings)


def _dev_score(mixture, hypotheses: Sequence[str], references, settings) -> tuple[float, float]:
    """(BLEU, the tuning metric's score), both 0-1, of one hypothesis per source line."""
    bleu = corpus_bleu(hypotheses, references, settings)
    if mixture.is_bleu:
        return bleu, bleu
    return bleu, mixture.corpus(mixture.stats(list(hypotheses), np.arange(len(hypotheses)), references))


class Loop:
    """One ``smtlib loop`` run over a working directory (see the module docstring)."""

    def __init__(self, options: LoopOptions, err: IO[str] | None = None) -> None:
        self.options = options
        self.err = sys.stderr if err is None else err
        self.inputs = _read_inputs(options)
        self.work = wd.WorkDir(options.work_dir)
        self.step_settings = StepSettings(options.method, dict(options.params), options.seed, options.runs,
                                          options.start_from, options.historic_interpolation, self.inputs.mixture,
                                          dict(options.start_params))

    # -- messages ---------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        if not self.options.quiet:
            print(f"smtlib loop: {text}", file=self.err, flush=True)

    # -- the run ----------------------------------------------------------------------------------
    def run(self) -> dict:
        """Run (or continue) the loop until it stops; returns ``best.json``'s content."""
        o = self.options
        rerun = self.work.bind(o.configuration(self.inputs.tuner_params, self.inputs.start_params))
        done = self.work.complete_iterations()
        rows = [self.work.scores(n) for n in done]
        current = dict(read_weights(self.work.file(done[-1], wd.NEXT))) if done else dict(self.inputs.initial.weights)
        finished = bool(rows) and (rows[-1].get("stop") == "epsilon" or len(rows) >= o.max_iterations)
        if rerun and finished:
            self.say(f"{self.work.root} has finished after iteration {done[-1]}: nothing to do")
        elif rerun:
            where = f"after iteration {done[-1]}" if done else "from iteration 1"
            self.say(f"continuing {self.work.root} {where} (the same options as its {wd.CONFIG})")
        if finished:
            return self._finish(rows, current)
        for iteration in range(len(done) + 1, o.max_iterations + 1):
            try:
                row, current = self._iteration(iteration, current, rows)
            except InputError as exc:
                raise InputError(f"iteration {iteration}: {exc}") from None
            rows.append(row)
            self._write_outputs(rows)
            self._report(row)
            if row["stop"] is not None:
                break
        return self._finish(rows, current)

    def _iteration(self, iteration: int, current: dict[str, float], rows: Sequence[Mapping]) -> tuple[dict, dict]:
        o, inputs, work = self.options, self.inputs, self.work
        start = time.monotonic()
        folder = work.start_iteration(iteration)
        scratch = os.path.join(folder, wd.SCRATCH)
        header = f"iteration {iteration}: the weights the decoder used"
        values = write_iteration_weights(folder, current, inputs.initial, inputs.template.used, header=header)
        decoded = self._decode(inputs.source, os.path.join(scratch, "dev"), values, folder, wd.NBEST, wd.DECODER_LOG,
                               "dev set")
        first_layout = rows[0]["dense_features"] if rows else decoded.dense_layout
        if rows:
            check_features(decoded, first_layout, 1, o.read_dialect, known=current)
        elif inputs.initial.ini is None:
            # Joshua's lines leave out the features that did not fire: an unknown name may be one of them
            joshua = any(g.style == "joshua" for g in decoded.pool.groups)
            check_weight_names(inputs.initial.weights, decoded.pool.dense_names, sparse_names=decoded.pool.sparse_names,
                               has_sparse=True if joshua else None, what=f"the decoder's n-best list {decoded.path}")
        dev_bleu, dev_score = _dev_score(inputs.mixture, decoded.one_best, inputs.references, o.bleu)
        test_bleu = None
        if inputs.test_source is not None:
            try:
                tested = self._decode(inputs.test_source, os.path.join(scratch, "test"), values, folder,
                                      wd.TEST_NBEST, wd.TEST_LOG, "test set")
            except InputError as exc:
                raise InputError(f"test set: {exc}") from None
            with atomic_output(os.path.join(folder, wd.TEST_ONE_BEST)) as out:
                out.writelines(line + "\n" for line in tested.one_best)
            test_bleu = corpus_bleu(tested.one_best, inputs.test_references, o.bleu)
        pool = self._pool(iteration)
        box = resolve(pool.feature_names, o.fixed, o.ranges)
        coverage = covered_sentences(np.flatnonzero(pool.sizes()), inputs.references)
        init = pool.weight_vector(current)

        def score(weights: np.ndarray) -> float:
            return pool_bleu(pool, weights, inputs.references, coverage, o.bleu)

        result = tune_step(pool, inputs.references, init, box, self.step_settings, iteration, score)
        names = pool.feature_names
        optimized = _with_rest(dict(zip(names, map(float, result.optimized), strict=True)), current)
        new = _with_rest(dict(zip(names, map(float, result.weights), strict=True)), current)
        write_weights(os.path.join(folder, wd.OPTIMIZED), optimized,
                      header=f"iteration {iteration}: {o.method}'s weights" + (f", {o.runs} runs averaged" if o.runs > 1 else ""))
        next_path = os.path.join(folder, wd.NEXT)
        write_weights(next_path, new, header=f"iteration {iteration}: the weights of iteration {iteration + 1}")
        new = dict(read_weights(next_path))  # what a rerun reads: the same values, the same order
        pool_score = score(pool.weight_vector(new))
        info = {**result.info, "pool_bleu_init": 100 * score(init), "pool_bleu": 100 * pool_score, **coverage.info(),
                "hypotheses": pool.n_hypotheses}
        wd.write_json(os.path.join(folder, wd.TUNER), info)
        changes = {n: abs(new.get(n, 0.0) - current.get(n, 0.0)) for n in dict.fromkeys([*current, *new])}
        moved = sorted(n for n, change in changes.items() if change > o.epsilon)
        stop = "epsilon" if not moved else ("max-iterations" if iteration >= o.max_iterations else None)
        shutil.rmtree(scratch, ignore_errors=True)
        row = {
            "iteration": iteration,
            "dev_bleu": 100 * dev_bleu,
            "dev_score": dev_score,
            "metric": inputs.mixture.text,
            "pool_bleu": 100 * pool_score,
            "test_bleu": None if test_bleu is None else 100 * test_bleu,
            "weights_moved": len(moved),
            "largest_move": max(changes.values(), default=0.0),
            "sentences": coverage.n_sentences,
            "hypotheses": pool.n_hypotheses,
            "dense_features": first_layout,
            "stop": stop,
            "seconds": time.monotonic() - start,
        }
        wd.write_json(os.path.join(folder, wd.SCORES), row)
        return row, new

    def _decode(self, lines: Sequence[str], scratch: str, values: Mapping[str, str], folder: str, name: str, log: str,
                what: str) -> DecodedList:
        """Decode ``lines`` into ``folder/name`` (joined shards) and read it back, checked."""
        o = self.options
        return decode_and_read(self.inputs.template, lines, scratch, values, o.k, o.jobs, os.path.join(folder, name),
                               os.path.join(folder, log), o.read_dialect, what)

    def _pool(self, iteration: int) -> KBestPool:
        """Add this iteration's list to the pool (or build the window's pool) and read it back."""
        from smtlib.kbest.store import add_kbest, read_stored

        o, work = self.options, self.work
        out = work.file(iteration, wd.POOL)
        metrics = list(dict.fromkeys(m for m, _ in self.inputs.mixture.parts if m.name != "bleu"))
        if o.prev_nbest is None and iteration > 1:
            add_kbest(work.file(iteration - 1, wd.POOL), work.file(iteration, wd.NBEST), self.inputs.references, o.bleu,
                      out, metrics=metrics)
        else:
            first = 1 if o.prev_nbest is None else max(1, iteration - o.prev_nbest + 1)
            lists = [work.file(n, wd.NBEST) for n in range(first, iteration + 1)]
            add_kbest(None, lists, self.inputs.references, o.bleu, out, metrics=metrics)
        return read_stored(out).to_kbest_pool()

    # -- outputs ----------------------------------------------------------------------------------
    def _write_outputs(self, rows: Sequence[Mapping], finished: bool = False) -> dict:
        """``curve.tsv``, the best-dev weights in both formats, and ``best.json``."""
        work, initial = self.work, self.inputs.initial
        work.write_curve(rows, with_test=self.inputs.test_source is not None)
        best = wd.best_iteration(rows)
        n = best["iteration"]
        weights = read_weights(work.file(n, "weights"))
        header = (f"the best dev score of the loop: iteration {n}, dev BLEU {best['dev_bleu']:.4f}"
                  + ("" if best["metric"] == "bleu" else f", {best['metric']} {100 * best['dev_score']:.4f}"))
        write_weights(work.path(wd.BEST_WEIGHTS), weights, header=header)
        outputs = {"weights": wd.BEST_WEIGHTS}
        if initial.ini is not None:
            write_decoder_weights(work.path(wd.BEST_INI), weights, initial, header=header)
            outputs["moses_ini"] = wd.BEST_INI
        last = rows[-1]
        summary = {
            "iteration": n,
            "dev_bleu": best["dev_bleu"],
            "dev_score": best["dev_score"],
            "metric": best["metric"],
            "test_bleu": best["test_bleu"],
            "pool_bleu": best["pool_bleu"],
            "weights_file": f"it{n}/weights",
            "outputs": outputs,
            "iterations": len(rows),
            "last_weights": f"it{last['iteration']}/{wd.NEXT}",
            "finished": finished,
            "stop": last["stop"],
        }
        wd.write_json(work.path(wd.BEST_JSON), summary)
        return summary

    def _finish(self, rows: Sequence[Mapping], current: Mapping[str, float]) -> dict:
        summary = self._write_outputs(rows, finished=True)
        why = (f"no weight moved by more than {self.options.epsilon:g}" if rows[-1]["stop"] == "epsilon"
               else f"--max-iterations {self.options.max_iterations}")
        self.say(f"done after {len(rows)} iteration{'s' if len(rows) > 1 else ''} ({why}): the best dev BLEU, "
                 f"{summary['dev_bleu']:.2f}, is iteration {summary['iteration']}'s: {self.work.path(wd.BEST_WEIGHTS)}")
        return summary

    def _report(self, row: Mapping) -> None:
        """The one progress line of an iteration."""
        o = self.options
        parts = [f"dev BLEU {row['dev_bleu']:.2f}"]
        if row["metric"] != "bleu":
            parts.append(f"dev {row['metric']} {100 * row['dev_score']:.2f}")
        parts.append(f"pool BLEU {row['pool_bleu']:.2f} ({row['hypotheses']} hypotheses)")
        if row["test_bleu"] is not None:
            parts.append(f"test BLEU {row['test_bleu']:.2f}")
        moved = row["weights_moved"]
        parts.append(f"{moved} weight{'' if moved == 1 else 's'} moved (largest {row['largest_move']:.4g})")
        parts.append(f"{row['seconds']:.1f} s")
        line = f"iteration {row['iteration']}/{o.max_iterations}: " + ", ".join(parts)
        if row["stop"] == "epsilon":
            line += f"; no weight moved by more than {o.epsilon:g}: stopping"
        self.say(line)


def _with_rest(weights: dict[str, float], current: Mapping[str, float]) -> dict[str, float]:
    """``weights`` (the pool's features) followed by the names of ``current`` the pool does not have, unchanged."""
    out = dict(weights)
    for name, value in current.items():
        out.setdefault(name, value)
    return out


def run_loop(options: LoopOptions, err: IO[str] | None = None) -> dict:
    """Run or continue the loop of ``options`` (see the module docstring); returns ``best.json``'s content."""
    return Loop(options, err).run()
