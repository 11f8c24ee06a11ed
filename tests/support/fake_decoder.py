#!/usr/bin/env python3
"""A tiny deterministic "decoder" for the tests of ``smtlib loop`` (a test fixture, not part of the package).

It translates a source whose words are the reference's words spelt backwards (``tac`` for ``cat``,
:func:`encode`) and knows eight candidate translations per sentence (:func:`candidates`): the right
one, and seven damaged ones (a word dropped, two words swapped, a word added, ...). Every candidate
has four dense features, ``LM0`` (one value), ``TM0`` (two values) and ``WordPenalty0`` (one value),
computed from the candidate's number of errors and a hash of the sentence (:func:`features`):
``LM0`` rewards the right candidate, ``TM0_0`` rewards damage, so weights that trust ``TM0`` pick
damaged candidates (low BLEU) and tuning can learn to trust ``LM0`` (BLEU up to 100). With
``--sparse`` a sparse feature ``Fake_swap`` fires on the candidates with swapped words. The output
of a sentence depends only on the sentence and the weights, so shards do not change it.

It reads weights the three ways ``smtlib loop`` passes them:

* ``-f moses.ini``: the ``[weight]`` section (``NAME= v0 v1 ...``);
* ``--weights FILE``: ``name value`` lines;
* ``-weight-overwrite 'NAME= v ... NAME2= v'`` (Moses's syntax) and ``-weight-file F`` (sparse, ``name value``).

Missing weights are 0. Input: ``-i FILE`` or standard input. Output: the n-best list to
``-n-best-list FILE K`` (``-`` for standard output; the 1-best goes to standard output otherwise),
best first (ties by candidate order), Moses format (``--dialect joshua``: ``name=value`` features).

For the error tests: ``--calls FILE`` counts the runs (one line per run, under a lock), and
``--break KIND@N`` breaks the N-th run: ``exit`` (exits 3 with two lines on stderr), ``short``
(leaves out the last sentence), ``features`` (renames ``TM0`` to ``TM1``), ``malformed`` (line 2 gets
a feature value that is not a number). The environment variable ``FAKE_DECODER_HANG_AT=N`` makes
the N-th run write ``FILE.hang`` and sleep (the kill-and-resume test); it needs ``--calls``.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import sys
import time

#: per candidate kind: number of errors
KINDS = ("right", "drop_last", "swap", "add", "replace", "reverse", "drop_two", "half")
ERRORS = {"right": 0, "drop_last": 1, "swap": 1, "add": 1, "replace": 1, "reverse": 3, "drop_two": 2, "half": 3}


def encode(sentence: str) -> str:
    """The fake source of a reference sentence: every word spelt backwards."""
    return " ".join(w[::-1] for w in sentence.split())


def candidates(source: str) -> list[tuple[str, str]]:
    """``(kind, text)`` of the distinct candidates of a source line, in :data:`KINDS` order."""
    words = [w[::-1] for w in source.split()]
    n = len(words)
    forms = {
        "right": words,
        "drop_last": words[:-1],
        "swap": words[1:2] + words[:1] + words[2:],
        "add": words + ["indeed"],
        "replace": words[: n // 2] + ["thing"] + words[n // 2 + 1:],
        "reverse": words[::-1],
        "drop_two": words[:1] + words[3:],
        "half": words[: max(1, n // 2)],
    }
    seen, out = set(), []
    for kind in KINDS:
        text = " ".join(forms[kind])
        if text and text not in seen:
            seen.add(text)
            out.append((kind, text))
    return out


def noise(*parts: object) -> float:
    """A deterministic number in [-1, 1) from a hash of ``parts``."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 63 - 1.0


def features(source: str, kind: str, text: str) -> dict[str, list[float]]:
    """Dense features of a candidate (see the module docstring)."""
    e = ERRORS[kind]
    return {
        "LM0": [round(-0.5 * e + 0.6 * noise(source, kind, "lm"), 4)],
        "TM0": [round(0.4 * e + 0.5 * noise(source, kind, "tm0"), 4), round(noise(source, kind, "tm1"), 4)],
        "WordPenalty0": [float(-len(text.split()))],
    }


def read_ini(path: str) -> dict[str, float]:
    weights, section = {}, None
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("["):
                section = line[1:-1].strip()
                continue
            if section == "weight":
                name, _, values = line.partition("=")
                values = values.split()
                if len(values) == 1 and "_" in name.strip():
                    weights[name.strip()] = float(values[0])
                else:
                    weights.update({f"{name.strip()}_{k}": float(v) for k, v in enumerate(values)})
    return weights


def read_pairs(path: str) -> dict[str, float]:
    weights = {}
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            line = raw.split("#", 1)[0].strip()
            if line:
                name, value = line.split()
                weights[name] = float(value)
    return weights


def read_overwrite(spec: str) -> dict[str, float]:
    weights, name, k = {}, None, 0
    for token in spec.split():
        if token.endswith("="):
            name, k = token[:-1], 0
        else:
            weights[f"{name}_{k}"] = float(token)
            k += 1
    return weights


def count_call(path: str) -> int:
    """Append a line to ``path`` under a lock; the number of lines (this run's number)."""
    with open(path, "a+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.write("run\n")
        fh.flush()
        fh.seek(0)
        return len(fh.read().splitlines())


# -- example data and commands for the tests ---------------------------------------------------------
VOCABULARY = ("the cat dog sat on mat a big red house ran in park we like green tea very much today small bird "
              "sings loud").split()
#: the initial weights of the examples: they trust TM0, which rewards damaged candidates
INITIAL = {"LM0_0": 0.2, "TM0_0": 0.5, "TM0_1": 0.5, "WordPenalty0_0": 0.0}
SCRIPT = os.path.abspath(__file__)


def example_sentences(n: int, seed: int) -> list[str]:
    """``n`` reference sentences of 5 to 9 words of :data:`VOCABULARY`, the same for the same seed."""
    import random

    rng = random.Random(seed)
    return [" ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(5, 9))) for _ in range(n)]


def write_example(folder: str | os.PathLike, n_dev: int = 12, n_test: int = 6) -> dict[str, str]:
    """Dev and test sets (``dev.src``/``dev.en``, ``test.src``/``test.en``), the initial weights as a
    weights file (``init.weights``) and as a moses.ini (``moses.ini``); their paths by those names."""
    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    paths = {}
    for name, sentences in (("dev", example_sentences(n_dev, 1)), ("test", example_sentences(n_test, 2))):
        for suffix, lines in (("en", sentences), ("src", [encode(s) for s in sentences])):
            paths[f"{name}.{suffix}"] = os.path.join(folder, f"{name}.{suffix}")
            with open(paths[f"{name}.{suffix}"], "w", encoding="utf-8") as fh:
                fh.write("".join(line + "\n" for line in lines))
    paths["init.weights"] = os.path.join(folder, "init.weights")
    with open(paths["init.weights"], "w", encoding="utf-8") as fh:
        fh.write("".join(f"{name} {value}\n" for name, value in INITIAL.items()))
    paths["moses.ini"] = os.path.join(folder, "moses.ini")
    with open(paths["moses.ini"], "w", encoding="utf-8") as fh:
        fh.write("[feature]\nKENLM name=LM0 factor=0 path=lm.arpa order=3\n"
                 "PhraseDictionaryMemory name=TM0 num-features=2 path=pt input-factor=0 output-factor=0\n"
                 "WordPenalty\n\n[weight]\n"
                 f"LM0= {INITIAL['LM0_0']}\nTM0= {INITIAL['TM0_0']} {INITIAL['TM0_1']}\n"
                 f"WordPenalty0= {INITIAL['WordPenalty0_0']}\n")
    return paths


def command(mode: str, extra: str = "") -> str:
    """The ``smtlib loop --decoder`` template running this script with the weights passed as ``mode``:
    ``weights`` (a weights file, ``-i {input}``, ``-n-best-list {nbest}``), ``ini`` (a moses.ini, source on
    stdin, 1-best to /dev/null) or ``weights_args`` (``-weight-overwrite``; stdin in, n-best on stdout)."""
    import shlex

    run = f"{shlex.quote(sys.executable)} {shlex.quote(SCRIPT)}"
    extra = f" {extra}" if extra else ""
    if mode == "weights":
        return f"{run} --weights {{weights}} -i {{input}} -n-best-list {{nbest}} {{k}}{extra}"
    if mode == "ini":
        return f"{run} -f {{ini}} -n-best-list {{nbest}} {{k}}{extra} < {{input}} > /dev/null"
    if mode == "weights_args":
        return f"{run} {{weights_args}} -n-best-list - {{k}}{extra}"
    raise ValueError(mode)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="fake_decoder", allow_abbrev=False)
    parser.add_argument("-f", dest="ini")
    parser.add_argument("--weights")
    parser.add_argument("-weight-overwrite", dest="overwrite")
    parser.add_argument("-weight-file", dest="sparse_file")
    parser.add_argument("-i", dest="input")
    parser.add_argument("-n-best-list", dest="nbest", nargs=2, metavar=("FILE", "K"))
    parser.add_argument("--dialect", default="moses", choices=("moses", "joshua"))
    parser.add_argument("--sparse", action="store_true")
    parser.add_argument("--calls")
    parser.add_argument("--break", dest="breaks", default="")
    args = parser.parse_args(argv)

    call = count_call(args.calls) if args.calls else 0
    kind, _, at = args.breaks.partition("@")
    broken = kind if kind and int(at) == call else ""
    hang = os.environ.get("FAKE_DECODER_HANG_AT")
    if hang and args.calls and int(hang) == call:
        open(args.calls + ".hang", "w").close()
        time.sleep(600)
    if broken == "exit":
        print("fake decoder: loading the model", file=sys.stderr)
        print("fake decoder: fatal: phrase table missing", file=sys.stderr)
        return 3

    weights: dict[str, float] = {}
    if args.ini:
        weights.update(read_ini(args.ini))
    if args.weights:
        weights.update(read_pairs(args.weights))
    if args.overwrite:
        weights.update(read_overwrite(args.overwrite))
    if args.sparse_file:
        weights.update(read_pairs(args.sparse_file))

    lines = open(args.input, encoding="utf-8").read().splitlines() if args.input else sys.stdin.read().splitlines()
    k = int(args.nbest[1]) if args.nbest else 1
    out_lines, one_best = [], []
    for sid, source in enumerate(lines):
        if broken == "short" and sid == len(lines) - 1:
            break
        scored = []
        for order, (kind_name, text) in enumerate(candidates(source)):
            feats = features(source, kind_name, text)
            sparse = {"Fake_swap": 1.0} if args.sparse and kind_name in ("swap", "reverse") else {}
            total = sum(weights.get(f"{g}_{i}", 0.0) * v for g, vs in feats.items() for i, v in enumerate(vs))
            total += sum(weights.get(name, 0.0) * v for name, v in sparse.items())
            scored.append((-total, order, text, feats, sparse, total))
        scored.sort(key=lambda item: (item[0], item[1]))
        one_best.append(scored[0][2])
        for _, _, text, feats, sparse, total in scored[:k]:
            if broken == "features":
                feats = {("TM1" if g == "TM0" else g): v for g, v in feats.items()}
            if args.dialect == "joshua":
                field = " ".join(f"{g}_{i}={v:g}" for g, vs in feats.items() for i, v in enumerate(vs))
            else:
                field = " ".join(f"{g}= " + " ".join(f"{v:g}" for v in vs) for g, vs in feats.items())
            field += "".join(f" {name}= {v:g}" for name, v in sparse.items())
            out_lines.append(f"{sid} ||| {text} ||| {field} ||| {total:.6g}")
    if broken == "malformed" and len(out_lines) > 1:
        out_lines[1] = out_lines[1].replace("LM0= ", "LM0= x", 1)
    text = "".join(line + "\n" for line in out_lines)
    if args.nbest and args.nbest[0] != "-":
        with open(args.nbest[0], "w", encoding="utf-8") as fh:
            fh.write(text)
        sys.stdout.write("".join(line + "\n" for line in one_best))
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
