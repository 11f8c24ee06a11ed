"""Compile smtlib's numba kernels once for this installation, before a workflow's jobs need them.

  smtlib warmup            compile (a few minutes) unless done for these sources, numba and CPU
  smtlib warmup --force    compile again
  smtlib warmup --check    exit 0 if warm, 1 if not (nothing is compiled)

The workflow runs it from its ``onstart`` handler, so a first run says what it is doing instead of
compiling the same kernels in every job at once (see ``smtlib.warmup``).
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--force", action="store_true", help="compile even if this installation is warm")
    mode.add_argument("--check", action="store_true", help="only report whether it is warm (exit 0) or not (1)")


def run(args: argparse.Namespace) -> int:
    from smtlib.warmup import ensure_warm, stamp_path

    if args.check:
        warm = stamp_path().exists()
        print("warm" if warm else "cold")
        return 0 if warm else 1
    ensure_warm(force=args.force, log=lambda line: print(line, file=sys.stderr, flush=True))
    return 0
