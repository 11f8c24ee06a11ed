"""Hopkins & May (2011) §4.2, Figure 3, standalone: can MERT / PRO / batch MIRA learn back a gold linear model?

The experiment is :mod:`smtlib.report.pro_mert` (the workflow draws it with ``smtlib report pro-mert``;
see that module for the settings); this script runs it with the paper's dimensions, prints one line
per trial, writes benchmarks/results/synthetic_pro_mert.tsv and .png, and ends with ``metric:
value``, the mean cosine of PRO (noise-free) at the largest dimension. CPU seconds per trial are
``time.process_time``.

  python benchmarks/synthetic_pro_mert.py [--dims 10 20 ...] [--reps 3] [--methods pro kbmira mert] [--out PREFIX]
"""

from __future__ import annotations

import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from smtlib.io import atomic_output  # noqa: E402
from smtlib.report.figures import save_figure  # noqa: E402
from smtlib.report.pro_mert import (  # noqa: E402
    DIMS,
    METHODS,
    describe,
    format_trials,
    plot_trials,
    pro_clean_cosine,
    run_experiment,
)

OUT = pathlib.Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=list(DIMS))
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--out", default=str(OUT / "synthetic_pro_mert"), help="output prefix (.tsv, .png)")
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out)
    trials = run_experiment(args.dims, args.reps, args.methods, progress=lambda t: print(describe(t), flush=True))
    with atomic_output(out.with_suffix(".tsv")) as fh:
        fh.write(format_trials(trials))
    save_figure(plot_trials(trials), out.with_suffix(".png"), tight=False)
    print(f"wrote {out.with_suffix('.tsv')} and {out.with_suffix('.png')}")
    print(f"metric: pro_clean_cosine_at_dim_{max(args.dims)}: {pro_clean_cosine(trials):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
