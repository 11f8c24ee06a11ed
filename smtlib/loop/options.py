"""The options of ``smtlib loop``, their checks, and the configuration a working directory is bound to.

:class:`LoopOptions` holds everything the command line gives. :meth:`LoopOptions.check` rejects
bad values with one :class:`~smtlib.errors.InputError` line each. :meth:`LoopOptions.configuration`
is what ``loop.json`` records at the top of the working directory: every option that changes a
result, with the SHA-256 of every input file (so an edited dev set or initial weights file is a
changed configuration even under the same name). A rerun compares its configuration with the
recorded one (:func:`configuration_difference`) and refuses to continue another run's iterations.
Three options may change between runs of one working directory because no result depends on
them: ``--jobs`` (the decoder's shards are concatenated with renumbered ids), ``--max-iterations``
(a run stopped at the limit continues up to the new one) and ``--quiet``.

Feature names in ``--fixed`` and ``--range`` are weight names (``LM0_0``) or a dense feature's
name (``TranslationModel0``: all its values), as mert-moses.pl's ``--activate-features`` and
``--range`` name them; they are resolved against the decoder's features once its first n-best list
is read (:mod:`smtlib.loop.constraints`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from smtlib.bleu.metrics import MetricOptions
from smtlib.bleu.stats import BleuSettings
from smtlib.errors import InputError
from smtlib.values import NUMBER

#: the format name written in ``loop.json``
CONFIG_FORMAT = "smtlib-loop/1"
#: k-best dialects the loop reads: those of :mod:`smtlib.kbest.format`, and ``cdec``, whose n-best
#: features are ``name=value`` tokens exactly as Joshua's (read as the ``joshua`` dialect)
DIALECT_ALIASES = {"cdec": "joshua"}
#: options that may change between the runs of one working directory (no result depends on them)
FREE_OPTIONS = ("jobs", "max_iterations", "quiet")


@dataclasses.dataclass(frozen=True)
class RangeSpec:
    """``--range NAME:LO..HI``: the weights of ``name`` stay within ``[low, high]``."""

    name: str
    low: float
    high: float

    def text(self) -> str:
        return f"{self.name}:{self.low:g}..{self.high:g}"


def parse_range(text: str) -> RangeSpec:
    """``NAME:LO..HI`` (``LM0_0:-1..1``, ``TranslationModel0:0..2``) as a :class:`RangeSpec`.

    Raises
    ------
    InputError
        For a missing name or ``:``, bounds that are not numbers, or LO > HI.
    """
    name, sep, bounds = text.rpartition(":")
    low_text, dots, high_text = bounds.partition("..")
    if not sep or not name.strip() or not dots:
        raise InputError(f"--range expects NAME:LO..HI (as LM0_0:-1..1), got {text!r}")
    values = []
    for part in (low_text.strip(), high_text.strip()):
        if NUMBER.fullmatch(part) is None:
            raise InputError(f"--range {text}: {part!r} is not a number")
        values.append(float(part))
    low, high = values
    if low > high:
        raise InputError(f"--range {text}: the low bound {low:g} is above the high bound {high:g}")
    return RangeSpec(name.strip(), low, high)


def file_digest(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes (as stored; a gzip file is hashed compressed)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except FileNotFoundError:
        raise InputError("file not found", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", path) from None
    return digest.hexdigest()


@dataclasses.dataclass(frozen=True)
class LoopOptions:
    """Everything ``smtlib loop`` is given (see ``smtlib loop --help`` for each option)."""

    source: str
    refs: tuple[str, ...]
    init: str
    decoder: str
    work_dir: str = "loop-work"
    method: str = "mert"
    params: Mapping[str, str] = dataclasses.field(default_factory=dict)
    metric: str = "bleu"
    metric_options: MetricOptions = MetricOptions()
    bleu: BleuSettings = BleuSettings()
    seed: int = 0
    dialect: str | None = None
    k: int = 100
    jobs: int = 1
    max_iterations: int = 25
    epsilon: float = 1e-5
    prev_nbest: int | None = None
    fixed: tuple[str, ...] = ()
    ranges: tuple[RangeSpec, ...] = ()
    historic_interpolation: float = 0.0
    start_from: str | None = None
    start_params: Mapping[str, str] = dataclasses.field(default_factory=dict)
    runs: int = 1
    test: str | None = None
    test_refs: tuple[str, ...] = ()
    quiet: bool = False

    @property
    def read_dialect(self) -> str | None:
        """The dialect of :mod:`smtlib.kbest.format` the decoder's n-best lists are read in (None: per file)."""
        return None if self.dialect is None else DIALECT_ALIASES.get(self.dialect, self.dialect)

    def check(self) -> None:
        """Raise :class:`InputError` (one line) for a bad value; file contents are checked when read."""
        from smtlib.kbest.format import DIALECTS
        from smtlib.tuners.registry import input_kind

        input_kind(self.method)  # an unknown method: "did you mean"
        if self.start_from is not None:
            input_kind(self.start_from)
            if self.start_from == self.method:
                raise InputError(f"--start-from {self.start_from} is the method itself")
        elif self.start_params:
            raise InputError("--start-set sets the --start-from method's hyper-parameters; there is no --start-from")
        if self.dialect is not None and self.read_dialect not in DIALECTS:
            raise InputError(f"unknown --dialect {self.dialect!r} (choose from {', '.join((*DIALECTS, *DIALECT_ALIASES))})")
        if self.k < 1:
            raise InputError(f"--k must be at least 1, got {self.k}")
        if self.jobs < 1:
            raise InputError(f"--jobs must be at least 1, got {self.jobs}")
        if self.max_iterations < 1:
            raise InputError(f"--max-iterations must be at least 1, got {self.max_iterations}")
        if not math.isfinite(self.epsilon) or self.epsilon < 0:
            raise InputError(f"--epsilon must be a finite number >= 0, got {self.epsilon}")
        if self.prev_nbest is not None and self.prev_nbest < 1:
            raise InputError(f"--prev-nbest must be at least 1 (the current iteration's list), got {self.prev_nbest}")
        if not 0.0 <= self.historic_interpolation <= 1.0:
            raise InputError(f"--historic-interpolation must be in [0, 1] (the share of the new weights; 0 = off), "
                             f"got {self.historic_interpolation}")
        if self.runs < 1:
            raise InputError(f"--runs must be at least 1, got {self.runs}")
        if (self.test is None) != (not self.test_refs):
            raise InputError("--test and --test-refs go together")
        if not self.refs:
            raise InputError("--refs: no reference file given")
        names = [r.name for r in self.ranges]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InputError(f"--range {twice[0]} is given twice")
        twice = sorted({n for n in self.fixed if self.fixed.count(n) > 1})
        if twice:
            raise InputError(f"--fixed {twice[0]} is given twice")
        both = sorted(set(self.fixed) & set(names))
        if both:
            raise InputError(f"{both[0]} is both --fixed and given a --range")

    def configuration(self, tuner_params: Mapping[str, Any], start_params: Mapping[str, Any] | None) -> dict:
        """The ``loop.json`` record: every option a result depends on, and the inputs' SHA-256.

        ``tuner_params`` (and ``start_params`` for ``--start-from``) are the tuners' hyper-parameters
        after conversion (:attr:`smtlib.tuners.base.Tuner.params`), so ``--set C=0.01`` and
        ``--set C=1e-2`` are one configuration.
        """

        def inputs(paths: Sequence[str]) -> list[dict]:
            return [{"path": os.fspath(p), "sha256": file_digest(p)} for p in paths]

        return {
            "format": CONFIG_FORMAT,
            "source": inputs([self.source])[0],
            "refs": inputs(self.refs),
            "init": inputs([self.init])[0],
            "decoder": self.decoder,
            "method": self.method,
            "params": dict(tuner_params),
            "metric": self.metric,
            "metric_options": dataclasses.asdict(self.metric_options),
            "bleu": self.bleu.to_dict(),
            "seed": self.seed,
            "dialect": self.dialect,
            "k": self.k,
            "epsilon": self.epsilon,
            "prev_nbest": self.prev_nbest,
            "fixed": list(self.fixed),
            "ranges": [[r.name, r.low, r.high] for r in self.ranges],
            "historic_interpolation": self.historic_interpolation,
            "start_from": self.start_from,
            "start_params": None if start_params is None else dict(start_params),
            "runs": self.runs,
            "test": inputs([self.test])[0] if self.test else None,
            "test_refs": inputs(self.test_refs),
        }


#: how :func:`configuration_difference` names a ``loop.json`` key
_OPTION_NAMES = {"source": "--source", "refs": "--refs", "init": "--init", "decoder": "--decoder",
                 "method": "--method", "params": "--set", "metric": "--metric", "metric_options": "the metric options",
                 "bleu": "the BLEU options", "seed": "--seed", "dialect": "--dialect", "k": "--k",
                 "epsilon": "--epsilon", "prev_nbest": "--prev-nbest", "fixed": "--fixed", "ranges": "--range",
                 "historic_interpolation": "--historic-interpolation", "start_from": "--start-from",
                 "start_params": "--start-set", "runs": "--runs", "test": "--test",
                 "test_refs": "--test-refs", "format": "the loop.json format"}


def _digests(value: Any) -> Any:
    """An input record (or list of them) as its content only: a file may move, not change."""
    if isinstance(value, dict) and "sha256" in value:
        return value["sha256"]
    if isinstance(value, list):
        return [_digests(v) for v in value]
    return value


def configuration_difference(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> str | None:
    """What differs between two :meth:`LoopOptions.configuration` records, in a few words (None: nothing).

    Input files are compared by content (their SHA-256), so a moved or renamed file is the same input.
    """
    changes = []
    skip = set()
    if recorded.get("method") != current.get("method"):
        skip.add("params")  # another method has other settings: the method says it
    if recorded.get("start_from") != current.get("start_from"):
        skip.add("start_params")
    for key in sorted(set(recorded) | set(current), key=lambda k: list(_OPTION_NAMES).index(k) if k in _OPTION_NAMES else 99):
        old, new = _digests(recorded.get(key)), _digests(current.get(key))
        if old == new or key in skip:
            continue
        name = _OPTION_NAMES.get(key, key)
        if key in ("source", "refs", "init", "test", "test_refs"):
            changes.append(f"{name} (the file's content)" if old and new else name)
        elif isinstance(old, (dict, list)) or isinstance(new, (dict, list)) or key == "decoder":
            changes.append(f"{name} ({_short(old)} -> {_short(new)})")
        else:
            changes.append(f"{name} ({old} -> {new})")
    return "; ".join(changes) if changes else None


def _short(value: Any, width: int = 60) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= width else text[: width - 3] + "..."
