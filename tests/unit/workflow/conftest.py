"""The workflow's configuration as the rules see it: config/config.yaml (and a config file merged over
it, as ``snakemake --configfile`` merges) validated against the schema, which fills in its defaults."""

from __future__ import annotations

import copy

import pytest
import yaml

from smtlib.workflow.config import merge
from tests.support.repo import REPO

SCHEMA = REPO / "config" / "schema" / "config.schema.yaml"


def load_config(*overlays: dict | str) -> dict:
    """config/config.yaml with each overlay (a dict, or a file name under config/) merged over it, then
    validated with the schema's defaults filled in (``snakemake.utils.validate``, as rules/common.smk)."""
    from snakemake.utils import validate

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    for overlay in overlays:
        if isinstance(overlay, str):
            overlay = yaml.safe_load((REPO / "config" / overlay).read_text(encoding="utf-8"))
        merge(config, copy.deepcopy(overlay))
    validate(config, schema=str(SCHEMA))
    return config


@pytest.fixture
def config() -> dict:
    return load_config()
