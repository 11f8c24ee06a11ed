"""Experiment inputs: fetch a language pair's corpora (checksummed), sub-sample the dev set, initial weights.

    smtlib data list
    smtlib data fetch --pair fr-en --out results/data/fr-en [--parts train dev test.test2016] [--data-dir DIR]
                      [--cache resources/downloads] [--no-download] [--max-train N] [--max-dev N] [--max-test N]
    smtlib data copy KEY [KEY ...] --out-dir DIR [--data-dir DIR]
    smtlib data locate KEY [--data-dir DIR] [--cache DIR] [--no-download]
    smtlib data subsample --src dev.src --refs dev.ref --index S --prob 0.9 --seed 1 \\
                          --out-src S.src --out-refs S.ref --out-ids S.ids
    smtlib data init-weights --model MODEL_DIR --out init.weights [--ones TranslationModel LM Distortion]

``fetch`` looks for each file in --data-dir (a copy laid out like ../shared/data; the variable
``SMTLIB_DATA_DIR`` when the option is not given, which is how the workflow passes it), then in the
download cache, then downloads it from its public source; every copy is checked against the
SHA-256 of its uncompressed content. Offline without a local copy it exits with status 2 and one
line saying which file is missing. ``subsample`` is Cherry & Foster (2012) §4.3 (index 0 = the
whole dev set); ``init-weights`` is their §4.2 (1.0 for TM, LM and distortion, 0.0 otherwise).
"""

from __future__ import annotations

import argparse
import json
import os

from smtlib.values import integer_at_least


def _where(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", default=os.environ.get("SMTLIB_DATA_DIR") or None,
                   help="local copy laid out like ../shared/data (checked first; default: $SMTLIB_DATA_DIR)")
    p.add_argument("--cache", default="resources/downloads", help="download cache (default: resources/downloads)")
    p.add_argument("--no-download", action="store_true", help="fail instead of downloading a missing file")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    sub.add_parser("list", help="the known language pairs and data files")

    p = sub.add_parser("fetch", help="write a pair's train/dev/test files and a manifest")
    p.add_argument("--pair", required=True, help="language pair, e.g. fr-en (see 'smtlib data list')")
    p.add_argument("--out", required=True, help="output directory")
    _where(p)
    p.add_argument("--parts", nargs="+", help="train, dev and/or test.NAME (default: all parts of the pair)")
    p.add_argument("--max-train", type=integer_at_least(1), help="keep the first N training pairs")
    p.add_argument("--max-dev", type=integer_at_least(1), help="keep the first N dev sentences")
    p.add_argument("--max-test", type=integer_at_least(1), help="keep the first N sentences of each test set")

    p = sub.add_parser("copy", help="copy verified data files (gzipped) into a directory")
    p.add_argument("keys", nargs="+", help="registry keys (see 'smtlib data list')")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--out-dir", help="directory; KEY a/b/c is written as OUT/b_c.gz")
    where.add_argument("--out", nargs="+", metavar="FILE", help="one file per KEY, in the same order")
    _where(p)

    p = sub.add_parser("locate", help="print the path of a verified copy of one data file")
    p.add_argument("key", help="registry key, e.g. multi30k/val.fr (see 'smtlib data list')")
    _where(p)

    p = sub.add_parser("subsample", help="one dev sub-sample (Cherry & Foster 2012, 4.3)")
    p.add_argument("--src", required=True, help="dev source file")
    p.add_argument("--refs", required=True, nargs="+", help="dev reference file(s)")
    p.add_argument("--index", required=True, type=integer_at_least(0), help="sub-sample number; 0 = the whole dev set")
    p.add_argument("--prob", type=float, default=0.9, help="probability of keeping a sentence (default 0.9)")
    p.add_argument("--seed", type=integer_at_least(0), default=1, help="base seed (default 1); sub-sample S uses (seed, S)")
    p.add_argument("--out-src", required=True)
    p.add_argument("--out-refs", required=True, nargs="+")
    p.add_argument("--out-ids", required=True, help="kept 0-based line ids of the original dev set")

    p = sub.add_parser("init-weights", help="initial weights of a model (Cherry & Foster 2012, 4.2)")
    p.add_argument("--model", required=True, help="model directory or its model.yaml (smtlib train)")
    p.add_argument("--out", required=True, help="weights file to write")
    p.add_argument("--ones", nargs="+", default=None,
                   help="feature families set to 1.0 (default: TranslationModel LM Distortion)")


def run(args: argparse.Namespace) -> int:
    from smtlib.data import corpora

    if args.action == "list":
        for name, pair in corpora.PAIRS.items():
            print(f"pair {name}: train {pair.train[0]} {pair.train[1]}; dev {pair.dev[0]} {pair.dev[1]}; "
                  f"tests {', '.join(pair.tests)}")
        for key, entry in corpora.FILES.items():
            print(f"file {key}\t{entry.path}\t{entry.lines} lines\tsha256 {entry.sha256}\t{entry.url}")
    elif args.action == "fetch":
        from smtlib.data.fetch import fetch_pair

        manifests = fetch_pair(args.pair, args.out, data_dir=args.data_dir, cache=args.cache,
                               download=not args.no_download, parts=args.parts,
                               limits={"train": args.max_train, "dev": args.max_dev, "test": args.max_test})
        print(json.dumps({name: f["lines"] for m in manifests.values() for name, f in m["files"].items()}, indent=2))
    elif args.action == "copy":
        from smtlib.data.fetch import copy_files
        from smtlib.errors import InputError

        if args.out is not None and len(args.out) != len(args.keys):
            raise InputError(f"--out names {len(args.out)} file(s) for {len(args.keys)} key(s)")
        for path in copy_files(args.keys, args.out_dir, outputs=args.out, data_dir=args.data_dir, cache=args.cache,
                               download=not args.no_download):
            print(path)
    elif args.action == "locate":
        print(corpora.locate(args.key, data_dir=args.data_dir, cache=args.cache, download=not args.no_download))
    elif args.action == "subsample":
        from smtlib.data.subsample import subsample_files

        n = subsample_files(args.src, args.refs, args.out_src, args.out_refs, args.out_ids, index=args.index,
                            prob=args.prob, seed=args.seed)
        print(json.dumps({"index": args.index, "kept": n}))
    elif args.action == "init-weights":
        from smtlib.data.init_weights import PAPER_ONES, write_initial_weights
        from smtlib.system.modeldir import model_directory

        weights = write_initial_weights(model_directory(args.model), args.out, tuple(args.ones) if args.ones else PAPER_ONES)
        print(json.dumps({"features": len(weights), "ones": sum(1 for v in weights.values() if v == 1.0)}))
    return 0
