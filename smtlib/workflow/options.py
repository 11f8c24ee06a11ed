"""The options the workflow's rules pass to ``smtlib``, rendered for the shell from the validated
config (a plain dict) and a job's plain values.

A changed option string is a changed ``params`` for Snakemake, which reruns the job and everything
after it: each function here keeps the exact text that the runs recorded so far were planned with
(e.g. no ``--search`` for the stack search, no ``--metric`` for BLEU).
"""

from __future__ import annotations

import json
import shlex

from smtlib.decoder.settings import search_defaults
from smtlib.tuners.registry import get_tuner_class
from smtlib.workflow.runs import DEFAULT, replica_seed, setting_parts, tuning_metrics

#: `smtlib data fetch`'s options of the data limits, in this fixed order
_LIMIT_OPTIONS = {"train": "--max-train", "dev": "--max-dev", "test": "--max-test"}


def limit_options(limits: dict) -> str:
    """The data limits as options, in a fixed order: the order of the keys in a config file is not a
    parameter of the science (in the file's order, a config written with sorted keys reran every job).
    """
    return " ".join(f"{option} {limits[k]}" for k, option in _LIMIT_OPTIONS.items() if limits.get(k) is not None)


def data_dir_option(download: bool) -> str:
    """Download switch of `smtlib data`. The data's location is not a parameter of the science (every
    file is checked against its SHA-256), so it is not an option, where a new spelling of the same
    directory would rerun every job ("Params have changed"), but the environment's SMTLIB_DATA_DIR.
    """
    return "" if download else "--no-download"


def bleu_options(bleu: dict) -> str:
    """`--tokenize` and `--lowercase` of a config section with BLEU settings (``bleu``, ``replay``)."""
    return f"--tokenize {bleu['tokenize']}" + (" --lowercase" if bleu["lowercase"] else "")


def scoring_options(bleu: dict, setting: str) -> str:
    """The options of a k-best tuning step's `smtlib kbest add` and `smtlib tune` (both take them):
    BLEU's, and `--metric` when the run's {setting} names a metric other than BLEU (the pool keeps
    that metric's statistics, the tuner optimizes it). BLEU's runs get what they always had.
    """
    _, metric = setting_parts(setting)
    return bleu_options(bleu) + ("" if metric == "bleu" else f" --metric {metric}")


def decoder_options(decoder: dict, moses_ini: str | None = None, model: str | None = None) -> str:
    """The search options of every command that decodes (smtlib.cli.common.add_search_options) from
    the config's ``decoder:`` section; with backend moses and the model's exported ``moses_ini``, also
    the Moses binary and that file. With backend command and the decode job's ``model`` (directory or
    model.yaml), ``--backend command`` and the decoder command with ``{model}`` replaced by it (a
    placeholder of the workflow's, for commands that run our own decoder), its dialect, and the
    Moses export when the command has ``{ini}`` (``smtlib decode --decoder-ini``).

    ``--search`` and ``--pop-limit`` are left out for the decoder's default search when it has no pop
    limit (the stack search): the commands recorded before cube pruning existed stay as they were.
    """
    opts = (
        f"--stack-size {decoder['stack_size']} --distortion-limit {decoder['distortion_limit']} "
        f"--table-limit {decoder['table_limit']}"
    )
    if not decoder["search"] == search_defaults()["search"] == "stack":
        opts += f" --search {decoder['search']} --pop-limit {decoder['pop_limit']}"
    if decoder["backend"] == "moses" and moses_ini is not None:
        opts += f" --backend moses --moses-bin {decoder['moses']} --moses-ini {moses_ini}"
    if decoder["backend"] == "command" and model is not None:
        opts += f" --backend command --decoder {shlex.quote(decoder['command'].replace('{model}', model))}"
        if decoder["dialect"]:
            opts += f" --dialect {decoder['dialect']}"
        if moses_ini is not None:
            opts += f" --decoder-ini {moses_ini}"
    return opts


def command_uses_ini(decoder: dict) -> bool:
    """Whether ``decoder.command`` (backend command) passes the weights in a moses.ini (``{ini}``): then
    the decode jobs need the system's Moses export, which the command's ``{ini}`` is rewritten from."""
    from smtlib.loop.decoder_command import DecoderTemplate

    return decoder["backend"] == "command" and "ini" in DecoderTemplate.parse(decoder["command"].replace("{model}", "")).used


def method_settings(config: dict, pair: str, method: str, setting: str = DEFAULT) -> dict[str, object]:
    """A run's hyper-parameters that differ from the tuner's defaults: the method's configured ones
    (method_settings), those of the method for this pair (pair_method_settings), then the run's own
    {setting} (``PARAM=VALUE``, a sweep's point), each over the ones before. A seed-only replica
    (``seed=N``, :func:`smtlib.workflow.runs.replica_seed`) takes ``stability.method_settings`` last
    instead: its seed is not a hyper-parameter (:func:`run_seed`)."""
    settings = dict(config["method_settings"].get(method, {}))
    settings.update(config["pair_method_settings"].get(pair, {}).get(method, {}))
    hyper, _ = setting_parts(setting)
    if replica_seed(setting) is not None:
        settings.update(config["stability"]["method_settings"].get(method, {}))
    elif hyper != DEFAULT:
        key, value = hyper.split("=", 1)
        settings[key] = value
    return settings


def set_options(settings: dict[str, object]) -> str:
    """`--set KEY=VALUE` of each setting, in order."""
    return " ".join(f"--set {k}={v}" for k, v in settings.items())


def tune_settings(config: dict, pair: str, method: str, setting: str) -> str:
    """`--set` options of a run's tuning step (:func:`method_settings`)."""
    return set_options(method_settings(config, pair, method, setting))


def tuner_param(config: dict, pair: str, method: str, setting: str, key: str) -> object:
    """One hyper-parameter of a run's method: the run's (:func:`method_settings`), else the tuner's default."""
    return method_settings(config, pair, method, setting).get(key, get_tuner_class(method).defaults[key])


def tune_seed(seed: int, it: int | str) -> int:
    """A different seed per iteration: the runs differ by their dev sub-sample, not by seed (§4.3)."""
    return seed * 1000 + int(it)


def run_seed(seed: int, setting: str) -> int:
    """The seed a run's :func:`tune_seed` starts from: a seed-only replica's own (``seed=N``), else
    ``seed`` (tuning.seed), so every other run keeps the seeds it was planned with."""
    replica = replica_seed(setting)
    return seed if replica is None else replica


def lattice_tune_threads(method: str) -> int:
    """Threads of a lattice tuning step: lbmert runs its climbs on them (`--jobs`, results unchanged);
    lbmira is sequential."""
    return 2 if method == "lbmert" else 1


def significance_options(significance: dict) -> str:
    """The randomization test of every cell against its column's best (`smtlib report table`)."""
    s = significance
    return f"--ar-shuffles {s['ar_shuffles']} --boot-samples {s['boot_samples']} --seed {s['seed']}"


def not_applicable_cells(not_applicable: dict) -> str:
    """`METHOD:FEATURE_SET` cells shown as n/a (MERT on Big, as in the paper)."""
    return " ".join(f"{m}:{fs}" for m, sets in not_applicable.items() for fs in sets)


#: the config sections recorded in each table's companion
_TABLE_SETTINGS = (
    "pairs",
    "feature_sets",
    "not_applicable",
    "method_settings",
    "pair_method_settings",
    "subsample",
    "tuning",
    "decoder",
    "system",
    "bleu",
    "limits",
    "significance",
)


def table_settings(config: dict) -> str:
    """The settings recorded in each table's companion (JSON on one line; quoted in the shell with :q)."""
    settings = {k: config[k] for k in _TABLE_SETTINGS}
    # the metrics are recorded where they are not BLEU alone (BLEU-only tables keep their settings)
    if tuning_metrics(config) == ["bleu"]:
        settings["tuning"] = {k: v for k, v in config["tuning"].items() if k != "metric"}
    if config["evaluation"]["metrics"] != ["bleu"]:
        settings["evaluation"] = config["evaluation"]
    return json.dumps(settings, sort_keys=True)


def check_command_backend(config: dict) -> None:
    """Raise ValueError (one line) for a ``decoder: {backend: command}`` the workflow cannot run: no or a
    bad command, or methods that need our decoder itself (the lattice tuners read its search graphs,
    online MIRA decodes inside its passes), which an outside decoder does not give."""
    from smtlib.errors import InputError
    from smtlib.loop.decoder_command import DecoderTemplate
    from smtlib.tuners.registry import input_kind

    command = config["decoder"]["command"]
    if not command:
        raise ValueError("config: decoder.backend is command but decoder.command is not set")
    try:
        DecoderTemplate.parse(command.replace("{model}", ""))
    except InputError as exc:
        raise ValueError(f"config: decoder.command: {str(exc).removeprefix('--decoder: ')}") from None
    methods = dict.fromkeys([*config["methods"], *config["extended_methods"]])
    need_ours = [m for m in methods if input_kind(m) != "kbest"]
    if need_ours:
        raise ValueError(f"config: decoder.backend command decodes k-best lists only; methods {', '.join(need_ours)} "
                         "need our decoder (lattices, or decoding inside their passes): leave them out of methods "
                         "and extended_methods")
