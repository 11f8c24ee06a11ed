"""Moses as a decoding backend: ``smtlib decode --backend moses --moses-bin PATH``.

The same inputs and outputs as :func:`smtlib.decoder.driver.decode_file` (1-best file, k-best list in
our format with our feature names and 0-based ids, the same search settings), but the search is run
by a Moses binary (``moses`` or ``moses2``) on a Moses system:

* the model directory's export (:func:`smtlib.system.moses_export.export_moses`, written to a
  temporary directory unless ``moses_ini`` names one already written, e.g. by the workflow's export
  rule), or a Moses system's own ``moses.ini`` (:mod:`smtlib.system.moses_import`);
* the weights file's weights mapped to Moses's names by :class:`~smtlib.system.moses_ini.FeatureMap`
  and written into a copy of the ini, with the table limit on the phrase tables' lines (Moses rejects
  ``-ttable-limit`` on its command line);
* ``-s STACK -b 0 -distortion-limit DL -n-best-list FILE K distinct -n-best-factor F -threads JOBS``:
  histogram pruning only, as our decoder (Moses's default beam threshold, ``-b 1e-5``, prunes
  hypotheses more than ln(1e5) below the best of their stack; ours has none). Stack size 0
  (unlimited in ours) is passed as a stack of 1,000,000;
* the input prepared as our decoder prepares it (:func:`smtlib.decoder.model.prepare_tokens`);
* each n-best line's values converted back to our names (:meth:`FeatureMap.convert`), its total
  recomputed as ``w . h`` of the printed values, and the lines of a sentence sorted by it (as our
  decoder sorts its own), at most ``k`` per sentence; the 1-best file holds the first of them (or
  Moses's 1-best when no k-best list is asked for).

Lattices (``lattice_out``, ``moses`` only: moses2 has no search-graph output) come from Moses's
``-output-search-graph-hypergraph``, which writes each sentence's search graph with every edge's
feature values (:func:`read_moses_hypergraph`): the hypotheses are the nodes (Moses numbers them
topologically), recombined hypotheses extra incoming edges; the complete hypotheses, which Moses
joins to a goal node with empty ``</s>`` edges, are merged into that goal, as in our lattices. The
lattice beam is applied as our decoder applies it (edges on paths within the beam of the best path,
plus the edges of the ``k`` best distinct paths of the graph).

Deviations: an empty input line gets Moses's empty translation with every feature 0 (our decoder
scores ``<s> </s>`` with the LMs); ``moses2`` reads no sparse features, so a ``big`` model decodes
with it only when every sparse weight is 0; the hypergraph prints feature values with 6 decimals.

Timing: Moses reports on stderr when it has loaded its tables (``Created input-output object`` for
``moses``, ``Loaded :`` for ``moses2``); at that moment the process's CPU time is read from
``/proc/PID/stat``, so :class:`~smtlib.decoder.driver.DecodeStats` separates loading from decoding
for wall-clock and CPU seconds; the peak resident memory comes from ``wait4``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping

import numpy as np

from smtlib._dot import dot
from smtlib.decoder.decoder import DecoderConfig
from smtlib.decoder.driver import DecodeStats
from smtlib.decoder.model import prepare_tokens
from smtlib.kbest.format import DECODED, format_line
from smtlib.lattice.format import Lattice
from smtlib.errors import InputError
from smtlib.io import atomic_output, open_text, read_lines
from smtlib.system.modeldir import ModelSpec, read_model_spec
from smtlib.system.moses_ini import FeatureMap, MosesIni
from smtlib.weights import check_weight_names, read_weights

#: stderr lines that say the binary has loaded its model (moses, moses2)
LOADED_MARKERS = (b"Created input-output object", b"Loaded : [")
#: our unlimited stack (0) as a Moses stack size
UNLIMITED_STACK = 1_000_000
ENV_BIN = "SMTLIB_MOSES_BIN"


def default_moses_dir() -> pathlib.Path | None:
    """``$SMTLIB_MOSES_BIN`` (a directory or the ``moses`` binary in it), else ``../shared/peers/moses/bin``
    beside the repository holding this package, if it has a ``moses`` binary."""
    env = os.environ.get(ENV_BIN)
    if env:
        path = pathlib.Path(env)
        path = path.parent if path.is_file() else path
    else:
        path = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "peers" / "moses" / "bin"
    return path if (path / "moses").is_file() else None


def is_moses2(binary: str | os.PathLike) -> bool:
    """Whether ``binary`` is moses2 (by its name)."""
    return pathlib.Path(binary).name.startswith("moses2")


@dataclasses.dataclass
class MosesRun:
    """What one Moses process took."""

    returncode: int
    wall_seconds: float
    load_wall_seconds: float  #: until Moses said it had loaded (the whole run if it never did)
    cpu_seconds: float
    load_cpu_seconds: float
    peak_rss_mib: float
    stderr_tail: list[str]


def _proc_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a running process (all its threads), from ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run_moses(cmd: list[str], stdin_path: str | os.PathLike, stdout_path: str | os.PathLike,
              log_path: str | os.PathLike | None = None, echo: bool = False) -> MosesRun:
    """Run a Moses command with ``stdin_path`` as input and ``stdout_path`` as output; time it."""
    start = time.perf_counter()
    load_wall = load_cpu = None
    tail: list[str] = []
    with contextlib.ExitStack() as stack:
        stdin = stack.enter_context(open(stdin_path, "rb"))
        stdout = stack.enter_context(open(stdout_path, "wb"))
        log = stack.enter_context(open(log_path, "wb")) if log_path is not None else None
        try:
            proc = subprocess.Popen(cmd, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE)
        except OSError as exc:
            raise InputError(f"cannot run {cmd[0]}: {exc.strerror}") from None
        for line in proc.stderr:
            if log is not None:
                log.write(line)
            if echo:
                sys.stderr.buffer.write(line)
            tail = [*tail[-19:], line.decode("utf-8", "replace").rstrip()]
            if load_wall is None and any(m in line for m in LOADED_MARKERS):
                load_wall = time.perf_counter() - start
                load_cpu = _proc_cpu_seconds(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    cpu = usage.ru_utime + usage.ru_stime
    return MosesRun(proc.returncode, wall, wall if load_wall is None else load_wall, cpu,
                    cpu if load_cpu is None else min(load_cpu, cpu), usage.ru_maxrss / 1024, tail)


def parse_nbest_features(text: str) -> dict[str, list[float]]:
    """A Moses n-best line's feature field ``Name= v v ... name= v`` as ``{name: values}``."""
    groups: dict[str, list[float]] = {}
    name = None
    for tok in text.split():
        if tok.endswith("="):
            name = tok[:-1]
            groups[name] = []
        elif name is None:
            raise ValueError(f"value {tok!r} before any feature name")
        else:
            groups[name].append(float(tok))
    return groups


def _split(groups: dict[str, list[float]], fmap: FeatureMap) -> tuple[dict[str, list[float]], dict[str, float]]:
    dense: dict[str, list[float]] = {}
    sparse: dict[str, float] = {}
    for name, values in groups.items():
        if name in fmap.moses_counts:
            dense[name] = values
        elif len(values) == 1:
            if values[0] != 0.0:
                sparse[name] = values[0]
        else:
            raise ValueError(f"feature {name!r} has {len(values)} values and is not a feature of the moses.ini")
    return dense, sparse


def read_moses_nbest(path: str | os.PathLike, fmap: FeatureMap, weights: Mapping[str, float], k: int
                     ) -> Iterator[tuple[int, list[tuple[str, np.ndarray, dict[str, float], float]]]]:
    """Per sentence id, its n-best lines as ``(hyp, dense, sparse, total)`` in our names, best first.

    The total is ``w . h`` of the printed values (as our decoder computes its own); lines are sorted
    by it (stable), at most ``k`` kept.
    """
    names = [f"{n}_{j}" for n, c in fmap.groups for j in range(c)]
    w_dense = np.array([weights.get(n, 0.0) for n in names])
    current: int | None = None
    block: list[tuple[str, np.ndarray, dict[str, float], float]] = []

    def finish() -> list:
        block.sort(key=lambda item: -item[3])
        return block[:k]

    with open_text(path, what="Moses n-best list") as fh:
        for lineno, line in enumerate(fh, 1):
            fields = line.rstrip("\n").split(" ||| ")
            if len(fields) < 4:
                raise InputError("not a Moses n-best line", path, lineno)
            try:
                sent = int(fields[0])
                dense_groups, sparse = _split(parse_nbest_features(fields[2]), fmap)
                dense, sparse = fmap.convert(dense_groups, sparse)
            except ValueError as exc:
                raise InputError(f"Moses n-best line: {exc}", path, lineno) from None
            if sent != current:
                if current is not None:
                    yield current, finish()
                current, block = sent, []
            total = dot(dense, w_dense) + sum(weights.get(n, 0.0) * v for n, v in sparse.items())
            block.append((" ".join(fields[1].split()), dense, dict(sorted(sparse.items())), total))
    if current is not None:
        yield current, finish()


def _edge_features(text: str, fmap: FeatureMap) -> tuple[dict[str, list[float]], dict[str, float]]:
    """A hypergraph edge's ``Name=v Name_k=v ...`` (1-based ``k`` for features with several values) as
    Moses's dense groups and sparse features."""
    dense = {name: [0.0] * count for name, count in fmap.moses_counts.items()}
    sparse: dict[str, float] = {}
    for item in text.split():
        name, _, value = item.rpartition("=")
        v = float(value)
        if name in dense and len(dense[name]) == 1:
            dense[name][0] = v
            continue
        group, _, k = name.rpartition("_")
        if k.isdigit() and group in dense and 1 <= int(k) <= len(dense[group]):
            dense[group][int(k) - 1] = v
        elif v != 0.0:
            sparse[name] = v
    return dense, sparse


def read_moses_hypergraph(path: str | os.PathLike, sent_id: int, fmap: FeatureMap, weights: Mapping[str, float],
                          config: DecoderConfig) -> Lattice:
    """One sentence's Moses hypergraph (``-output-search-graph-hypergraph true txt DIR``) as our lattice.

    See the module doc. The lattice beam and ``k`` of ``config`` are applied as our decoder does.

    Raises
    ------
    InputError
        On a file that is not such a hypergraph.
    """
    from smtlib.lattice.paths import beam_prune_nb, kbest_paths

    with open_text(path, what="Moses hypergraph") as fh:
        lines = [line.rstrip("\n") for line in fh if line.strip() and not line.startswith("#")]
    try:
        n_nodes, _ = (int(x) for x in lines[0].split())
        incoming: list[list[str]] = []
        pos = 1
        for _ in range(n_nodes):
            count = int(lines[pos])
            incoming.append(lines[pos + 1 : pos + 1 + count])
            pos += 1 + count
    except (ValueError, IndexError):
        raise InputError("not a Moses hypergraph (node/edge counts)", path) from None
    goal = n_nodes - 1
    node_of = list(range(n_nodes))
    for line in incoming[goal]:  # the complete hypotheses: merged into the goal
        tail = line.split(" ||| ", 1)[0].split()[0]
        node_of[int(tail.strip("[]"))] = goal
    tails, heads, words, dense_rows, sparse_rows = [], [], [], [], []
    for head in range(1, goal):
        for line in incoming[head]:
            rule, feats, _ = line.split(" ||| ")
            toks = rule.split()
            if not toks or not toks[0].startswith("["):
                raise InputError(f"hypergraph node {head}: an edge without a tail", path)
            tail = int(toks[0].strip("[]"))
            groups, sparse = _edge_features(feats, fmap)
            vec, sp = fmap.convert(groups, sparse)
            tails.append(node_of[tail])
            heads.append(node_of[head])
            words.append(tuple(toks[1:]))
            dense_rows.append(vec)
            sparse_rows.append(sp)
    if not tails:  # an empty sentence: one empty edge, as our decoder writes
        return Lattice(sent_id, 2, np.array([0]), np.array([1]), [()], np.zeros((1, len(fmap.dense_names))), [{}],
                       fmap.dense_names)
    tails_a, heads_a = np.array(tails, dtype=np.int64), np.array(heads, dtype=np.int64)
    # nodes on a path from the start to the goal, renumbered in Moses's (topological) order
    reach = np.zeros(n_nodes, dtype=bool)
    reach[0] = True
    order = np.lexsort((tails_a, heads_a))
    for e in order:
        reach[heads_a[e]] |= reach[tails_a[e]]
    back = np.zeros(n_nodes, dtype=bool)
    back[goal] = True
    for e in order[::-1]:
        back[tails_a[e]] |= back[heads_a[e]]
    live = reach & back
    new_id = np.cumsum(live) - 1
    keep = np.flatnonzero(live[tails_a] & live[heads_a])
    keep = keep[np.lexsort((new_id[tails_a[keep]], new_id[heads_a[keep]]))]
    lat = Lattice(sent_id, int(live.sum()), new_id[tails_a[keep]], new_id[heads_a[keep]],
                  [words[e] for e in keep], np.array([dense_rows[e] for e in keep]),
                  [sparse_rows[e] for e in keep], fmap.dense_names)
    if config.lattice_beam > 0:
        deltas = lat.edge_scores(dict(weights))
        _, _, paths = kbest_paths(lat, dict(weights), config.k, distinct=config.distinct,
                                  max_pops=config.k * config.nbest_factor)
        on_paths = np.unique(np.array([e for p in paths for e in p], dtype=np.int64))
        node_map, n_kept, kept = beam_prune_nb(lat.n_nodes, lat.tails, lat.heads, deltas, float(config.lattice_beam),
                                               on_paths)
        lat = Lattice(sent_id, int(n_kept), node_map[lat.tails[kept]], node_map[lat.heads[kept]],
                      [lat.words[e] for e in kept], lat.dense[kept], [lat.sparse[e] for e in kept], fmap.dense_names)
    return lat


def run_ini(ini: MosesIni, fmap: FeatureMap, weights: Mapping[str, float], config: DecoderConfig,
            moses2: bool) -> MosesIni:
    """A copy of ``ini`` with ``weights`` (mapped), the table limit and the distortion limit of ``config``."""
    moses_weights = fmap.moses_weights(weights)
    if moses2:
        sparse = {n: v for n, v in moses_weights.items() if n not in fmap.moses_counts}
        if any(v[0] != 0.0 for v in sparse.values()):
            raise InputError("moses2 reads no sparse features: every sparse weight must be 0 to decode with it "
                             f"(got {len(sparse)} sparse weights)")
        moses_weights = {n: v for n, v in moses_weights.items() if n in fmap.moses_counts}
    out = ini.with_weights(moses_weights)
    for feat in out.features:
        if feat.is_phrase_table:
            feat.params["table-limit"] = str(config.table_limit)
    out.sections["distortion-limit"] = [str(config.distortion_limit)]
    return out


def check_weights(spec: ModelSpec, weights: Mapping[str, float], path: str | os.PathLike) -> None:
    """The project's one rule for weight names (:func:`smtlib.weights.check_weight_names`), as
    :meth:`smtlib.decoder.model.PhraseModel.read_weights` applies it; a missing dense weight is 0."""
    check_weight_names(weights, spec.dense_weight_names(), has_sparse=spec.sparse, what=f"the {spec.feature_set} model",
                       path=path)


def decode_file_moses(model_dir: str | os.PathLike, weights_path: str | os.PathLike, input_path: str | os.PathLike,
                      *, moses_bin: str | os.PathLike, moses_ini: str | os.PathLike | None = None,
                      kbest_out: str | os.PathLike | None = None, output: str | os.PathLike | None = None,
                      lattice_out: str | os.PathLike | None = None, config: DecoderConfig | None = None,
                      jobs: int = 1, progress: bool = True,
                      work_dir: str | os.PathLike | None = None) -> DecodeStats:
    """Translate ``input_path`` with Moses; outputs as :func:`smtlib.decoder.driver.decode_file`.

    Raises
    ------
    InputError
        On a bad model directory, weights file, input or moses.ini, a lattice request, a Moses binary
        that cannot run or that fails (with the end of its stderr).
    """
    config = config or DecoderConfig()
    if jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {jobs}")
    binary = pathlib.Path(moses_bin)
    if not binary.is_file() or not os.access(binary, os.X_OK):
        raise InputError("not an executable Moses binary", binary)
    t0 = time.perf_counter()
    spec = read_model_spec(model_dir)
    lines = read_lines(input_path, what="input", allow_empty=True)
    weights = read_weights(weights_path)
    check_weights(spec, weights, weights_path)
    moses2 = is_moses2(binary)
    if lattice_out is not None and moses2:
        raise InputError("moses2 writes no search graph: lattices with the Moses backend need the moses binary")
    with tempfile.TemporaryDirectory(prefix="smtlib-moses-", dir=work_dir) as tmp_name:
        tmp = pathlib.Path(tmp_name)
        if moses_ini is None:
            from smtlib.system.moses_export import export_moses

            moses_ini = export_moses(model_dir, tmp / "export", weights)
        ini = MosesIni.read(moses_ini)
        from smtlib.system.moses_export import feature_map

        fmap = feature_map(spec, ini)
        with open(tmp / "moses.ini", "w", encoding="utf-8") as fh:
            fh.write(run_ini(ini, fmap, weights, config, moses2).text(f"run by smtlib decode --backend moses from "
                                                                      f"{ini.path}"))
        with open(tmp / "input.txt", "w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(" ".join(prepare_tokens(spec, line)) + "\n")
        k = config.k if kbest_out is not None else 1
        cmd = [str(binary), "-f", str(tmp / "moses.ini"), "-threads", str(jobs),
               "-s", str(config.stack_size or UNLIMITED_STACK), "-b", "0",
               "-distortion-limit", str(config.distortion_limit)]
        if config.search == "cube":  # Moses's cube pruning, with our pop limit
            cmd += ["-search-algorithm", "1", "-cube-pruning-pop-limit", str(config.pop_limit)]
        if kbest_out is not None:
            cmd += ["-n-best-list", str(tmp / "nbest.txt"), str(config.k)]
            if config.distinct:
                cmd += ["distinct", "-n-best-factor", str(config.nbest_factor)]
        if lattice_out is not None:
            cmd += ["-output-search-graph-hypergraph", "true", "txt", str(tmp / "hypergraph")]
        prep_seconds = time.perf_counter() - t0
        run = run_moses(cmd, tmp / "input.txt", tmp / "best.txt", tmp / "moses.log", echo=False)
        if run.returncode != 0:
            raise InputError(f"{binary.name} failed (exit status {run.returncode}): "
                             + " | ".join(line for line in run.stderr_tail[-3:] if line))
        best = read_lines(tmp / "best.txt", what="Moses output", allow_empty=True)
        if len(best) != len(lines):
            raise InputError(f"{binary.name} wrote {len(best)} translations for {len(lines)} input lines",
                             tmp / "best.txt")
        best = [" ".join(b.split()) for b in best]
        if kbest_out is not None:
            groups = list(spec.dense_features)
            seen: set[int] = set()
            with atomic_output(kbest_out) as out:
                for sent, block in read_moses_nbest(tmp / "nbest.txt", fmap, weights, k):
                    if not 0 <= sent < len(lines) or sent in seen:
                        raise InputError(f"unexpected sentence id {sent} in the Moses n-best list")
                    seen.add(sent)
                    for hyp, dense, sparse, total in block:
                        out.write(format_line(sent, hyp, groups, dense, sparse.items(), total, DECODED) + "\n")
                    best[sent] = block[0][0]
            if len(seen) != len(lines):
                raise InputError(f"the Moses n-best list covers {len(seen)} of {len(lines)} sentences")
        if output is not None:
            with atomic_output(output) as out:
                for b in best:
                    out.write(b + "\n")
        if lattice_out is not None:
            from smtlib.lattice.format import lattice_header, write_lattice

            with atomic_output(lattice_out) as out:
                out.write(lattice_header(fmap.dense_names))
                for sent in range(len(lines)):
                    graph = tmp / "hypergraph" / f"{sent}.txt"
                    write_lattice(out, read_moses_hypergraph(graph, sent, fmap, weights, config))
                    graph.unlink()
    if progress:
        print(f"decode: {binary.name}: {len(lines)} sentences, peak memory {run.peak_rss_mib:.0f} MiB, "
              f"CPU {run.cpu_seconds - run.load_cpu_seconds:.1f} s decoding + {run.load_cpu_seconds:.1f} s loading",
              file=sys.stderr)
    return DecodeStats(len(lines), run.wall_seconds - run.load_wall_seconds, run.cpu_seconds - run.load_cpu_seconds,
                       prep_seconds + run.load_wall_seconds, 0, 0, {})


__all__ = ["MosesRun", "decode_file_moses", "default_moses_dir", "is_moses2", "read_moses_hypergraph",
           "read_moses_nbest", "run_moses"]
