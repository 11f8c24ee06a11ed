"""Config files merged as Snakemake merges them: ``--configfile`` over the Snakefile's ``configfile:``."""

from __future__ import annotations


def merge(base: dict, over: dict) -> dict:
    """``over`` merged into ``base`` in place (and returned): mappings key by key, recursively; any
    other value replaced."""
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = value
    return base
