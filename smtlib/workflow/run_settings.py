"""The settings a run used, recorded beside its results, so that a report describes that run.

``snakemake --report`` builds its pages from the DAG of the call that asks for the report: called
without the run's ``--configfile`` (the README's quick run, say), it would describe the default
configuration's jobs, beside another run's tables, with a warning for each of the thousands of
files that configuration would have made. So every run records its config files and its merged
configuration (:func:`record`, from the workflow's ``onstart``), and a report call adopts them
(:func:`adopt_for_report`) when it names no config file of its own; one that names other files
than the run's is an error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence

from smtlib.errors import InputError
from smtlib.io import atomic_output

#: where a run records its settings (relative to the working directory)
RECORD = os.path.join("results", "run_settings.json")
#: the configuration key under which a report call keeps what it describes (never validated: it is
#: set after the schema check, in report calls only)
REPORT_KEY = "_report"


def _plain(config: dict) -> dict:
    return {k: v for k, v in config.items() if not k.startswith("_")}


def record(config: dict, configfiles: Sequence[str], path: str = RECORD) -> None:
    """Write the run's ``--configfile`` files (as given) and merged configuration to ``path``."""
    with atomic_output(path) as fh:
        json.dump({"configfiles": [os.fspath(f) for f in configfiles], "config": _plain(config)}, fh, indent=1,
                  sort_keys=True, default=str)
        fh.write("\n")


def adopt_for_report(config: dict, configfiles: Sequence[str], path: str = RECORD,
                     log: Callable[[str], None] = print) -> list[str]:
    """In a report call, make ``config`` the recorded run's (when the call names no config file) and
    return the config files the report describes.

    Raises
    ------
    InputError
        When the call names config files other than the recorded run's.
    """
    given = [os.fspath(f) for f in configfiles]
    if not os.path.exists(path):
        return given
    with open(path, encoding="utf-8") as fh:
        recorded = json.load(fh)
    if given and [os.path.normpath(f) for f in given] != [os.path.normpath(f) for f in recorded["configfiles"]]:
        ran = " ".join(recorded["configfiles"]) or "no --configfile (config/config.yaml alone)"
        raise InputError(f"the run in results/ used {ran}, this report call {' '.join(given)}: give the run's "
                         f"--configfile, or none to use it ({path})")
    if not given:
        config.clear()
        config.update(recorded["config"])
        if recorded["configfiles"]:
            log(f"report: the settings of the run in results/ ({' '.join(recorded['configfiles'])}, recorded in {path})")
    return list(recorded["configfiles"])


def describe(configfiles: Sequence[str]) -> str:
    """The report's words for the settings: ``config/config.yaml with config/quick.yaml over it``."""
    if not configfiles:
        return "config/config.yaml"
    return "config/config.yaml with " + ", then ".join(configfiles) + " over it"
