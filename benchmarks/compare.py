"""``smtlib compare``'s randomization test against sacrebleu's ``--paired-ar``, same inputs, same run.

Inputs: MultEval's example data from the shared data (``$SMTLIB_SHARED_DATA`` or ../shared/data, as
``benchmarks/_inputs.py`` finds it: baseline and system 1, three optimizer replicas
of 2,489 newstest2010 sentences), or, when it is absent, random text of the same shape. sacrebleu
tests one pair of outputs, so it is given the concatenation of the three replicas (7,467 lines,
the references repeated): exchanging line i of the two concatenations is exactly our stratified
test (sentence i of replica r of one system against sentence i of replica r of the other). Both
sides start from text (statistics extraction included), run 10,000 shuffles with BLEU only, no
tokenization and MultEval's strict ties, and print their p-values (equal within Monte-Carlo error).
Also timed: the whole ``smtlib compare`` computation (BLEU and Length, 1,000 bootstrap samples for
s_sel of both systems).

    python benchmarks/compare.py [--shuffles 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import logging
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from smtlib.bleu.randomization import paired_randomization  # noqa: E402
from smtlib.bleu.replicas import Layout, compare_systems  # noqa: E402
from smtlib.bleu.stats import BleuSettings  # noqa: E402
from smtlib.io import read_lines  # noqa: E402
from _inputs import SHARED_DATA  # noqa: E402  (benchmarks/_inputs.py, beside this script)

EXAMPLE = SHARED_DATA / "multeval-example"


def inputs() -> tuple[list[str], list[list[str]], list[list[str]], str]:
    """(references, baseline replicas, system replicas, where they come from)."""
    if EXAMPLE.is_dir():
        refs = read_lines(EXAMPLE / "refs.test2010.lc.tok.en.0.gz")
        group = [[read_lines(EXAMPLE / f"hyps.lc.tok.en.{s}.opt{r}.gz") for r in range(3)] for s in ("baseline", "sys1")]
        return refs, group[0], group[1], "MultEval's example (newstest2010)"
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(8000)]
    refs = [" ".join(rng.choice(words, size=rng.integers(10, 40))) for _ in range(2489)]

    def replica():
        return [" ".join(t if rng.random() > 0.4 else words[rng.integers(8000)] for t in ref.split()) for ref in refs]

    return refs, [replica() for _ in range(3)], [replica() for _ in range(3)], "random text (no shared data)"


def best_of(repeat: int, fn):
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shuffles", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="timings are the best of this many runs")
    args = parser.parse_args()
    logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # its "forgot to detokenize" hint, on tokenized data
    refs, base, sys1, source = inputs()
    settings = BleuSettings(tokenize="none")
    n_rep, n_sent = len(base), len(refs)
    print(f"inputs: {source}; 2 systems x {n_rep} replicas x {n_sent} sentences; {args.shuffles} shuffles")

    bleu = Layout.of(["bleu"])
    bleu.rows(base[0][:10], [refs[:10]], settings)  # numba compile / cache load, outside the timing

    def ours():
        a = np.vstack([bleu.rows(h, [refs], settings) for h in base])
        b = np.vstack([bleu.rows(h, [refs], settings) for h in sys1])
        return paired_randomization(a, b, bleu.score, trials=args.shuffles, seed=0, ties="strict")[1][0]

    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    flat_refs, flat_base, flat_sys = refs * n_rep, sum(base, []), sum(sys1, [])

    def sacrebleu_ar():
        _, scores = PairedTest([("baseline", flat_base), ("system", flat_sys)], {"BLEU": BLEU(tokenize="none")},
                               [flat_refs], test_type="ar", n_samples=args.shuffles)()
        return scores["BLEU"][1].p_value

    t_ours, p_ours = best_of(args.repeat, ours)
    print(f"smtlib paired_randomization (statistics + {args.shuffles} shuffles): {t_ours:.2f} s, p = {p_ours:.4f}")
    t_sacre, p_sacre = best_of(args.repeat, sacrebleu_ar)
    print(f"sacrebleu PairedTest ar on the concatenated replicas: {t_sacre:.2f} s, p = {p_sacre:.4f}")

    both = Layout.of(["bleu", "length"])

    def whole():
        stats = [np.stack([both.rows(h, [refs], settings) for h in group]) for group in (base, sys1)]
        return compare_systems(stats[0], {"system": stats[1]}, both, ar_shuffles=args.shuffles, boot_samples=1000)

    t_whole, _ = best_of(args.repeat, whole)
    print(f"whole smtlib compare computation (BLEU + Length, {args.shuffles} shuffles, 1000 bootstrap samples): {t_whole:.2f} s")
    print(f"speedup_vs_sacrebleu_paired_ar: {t_sacre / t_ours:.1f}")


if __name__ == "__main__":
    main()
