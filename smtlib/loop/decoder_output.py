"""Checks of the decoder's n-best list before it joins the pool, and the decoder's 1-best.

mert-moses.pl trusts the decoder: a list with fewer sentences than the dev set or with other
features than before is scored as it is (its ``sanity_check_order_of_lambdas`` only compares the
feature order once, at ``--continue``). Here each iteration's list must

* read under the dialect (:mod:`smtlib.kbest.format`: one layout per file, every line checked);
* have at least one hypothesis for every sentence of the source (a decoder that stopped early, or
  lost a shard, is an error naming the first sentence without one);
* have the dense features of the first iteration's list (names, value counts and order): a decoder
  whose features change between iterations (another moses.ini, another model) cannot be tuned by
  one weight vector. Sparse features may come and go. In the Joshua (cdec) dialect, whose lines leave
  out features that did not fire, a feature is new when neither an earlier list nor the initial
  weights have it.

The decoder's 1-best of a sentence is the first hypothesis of its list, in file order (what the
decoder would print as its translation; Moses writes its n-best list best first).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Collection, Sequence

import numpy as np

from smtlib.errors import InputError
from smtlib.kbest.format import describe_groups, layout_key
from smtlib.kbest.pool import KBestPool, read_pool


@dataclasses.dataclass
class DecodedList:
    """One n-best list of the decoder, read and checked."""

    path: str
    pool: KBestPool
    one_best: list[str]

    @property
    def dense_layout(self) -> list[list]:
        """The dense groups as ``[label, size]`` pairs (JSON-friendly; :func:`smtlib.kbest.format.layout_key`)."""
        return [[label, size] for label, size in layout_key(self.pool.groups)]


def read_decoded(path: str | os.PathLike, n_sentences: int, dialect: str | None, what: str = "dev set") -> DecodedList:
    """Read the decoder's n-best list of a source of ``n_sentences`` lines and check that it covers it.

    Raises
    ------
    InputError
        For a malformed line (at its line), an id beyond the source, or a sentence without any
        hypothesis (the first one, with how many sentences have some).
    """
    path = os.fspath(path)
    pool = read_pool(path, n_sentences=n_sentences, dialect=dialect, references=f"the {what}")
    sizes = pool.sizes()
    missing = np.flatnonzero(sizes == 0)
    if len(missing):
        first = int(missing[0])
        more = f", and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise InputError(f"the decoder wrote hypotheses for {n_sentences - len(missing)} of the {n_sentences} sentences "
                         f"of the {what}: none for sentence {first} (source line {first + 1}){more}", path)
    one_best = [pool.texts[int(row)] for row in pool.offsets[:-1]]
    return DecodedList(path, pool, one_best)


def check_features(decoded: DecodedList, first: Sequence[Sequence], first_iteration: int, dialect: str | None,
                   known: Collection[str] = ()) -> None:
    """Check that ``decoded`` has the dense features of the first iteration's list (see the module docstring).

    Parameters
    ----------
    first
        The first list's :attr:`DecodedList.dense_layout`.
    first_iteration
        Its iteration, for the message.
    dialect
        The dialect the lists are read in (None: decided per file).
    known
        In the Joshua dialect, the names known before (earlier lists' and the initial weights').

    Raises
    ------
    InputError
        Naming the list's file and what differs.
    """
    now = decoded.dense_layout
    groups = decoded.pool.groups
    joshua = bool(groups) and all(g.style == "joshua" for g in groups)
    if joshua or (dialect == "joshua" and not groups):
        new = [label for label, _ in now if label not in set(known) | {str(g[0]) for g in first}]
        if new:
            raise InputError(f"the decoder's features changed: {new[0]!r} is in no earlier n-best list (iteration "
                             f"{first_iteration} on) and not in the initial weights", decoded.path)
        return
    if [list(g) for g in now] != [list(g) for g in first]:
        def show(layout):
            return describe_groups(tuple(_Group(label, size) for label, size in layout))

        raise InputError(f"the decoder's dense features changed: {show(now)} here, {show(first)} in iteration "
                         f"{first_iteration} (the weights of one model cannot tune another)", decoded.path)


@dataclasses.dataclass(frozen=True)
class _Group:
    """What :func:`describe_groups` reads of a group."""

    label: str
    size: int


def decode_and_read(template, lines: Sequence[str], scratch: str | os.PathLike, values, k: int, jobs: int,
                    nbest_path: str | os.PathLike, log_path: str | os.PathLike, dialect: str | None,
                    what: str = "dev set") -> DecodedList:
    """Run the decoder command on ``lines`` (``jobs`` shards), join the shards' n-best lists into
    ``nbest_path`` and read it back, checked: one set's decode, as ``smtlib loop`` and ``smtlib decode
    --backend command`` run it (:func:`smtlib.loop.decoder_command.decode`, :func:`read_decoded`)."""
    from smtlib.loop.decoder_command import decode, join_nbest

    shards = decode(template, lines, scratch, values, k, jobs, log_path)
    join_nbest(shards, nbest_path)
    return read_decoded(nbest_path, len(lines), dialect, what)
