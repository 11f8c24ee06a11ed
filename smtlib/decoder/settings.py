"""The decoder's settings and their defaults: the one owner of them.

:class:`DecoderConfig` is what :class:`~smtlib.decoder.decoder.Decoder` searches with. Its five search
settings (:data:`SEARCH_SETTINGS`) are the options of every command that decodes (``smtlib decode``,
``smtlib tune mira``, ``smtlib sgd pass``: :func:`smtlib.cli.common.add_search_options`), whose defaults
are read from here, and the workflow's ``decoder:`` section (``config/schema/config.schema.yaml``,
rendered by :func:`smtlib.workflow.options.decoder_options`), which a test holds to this module.

The module imports nothing heavy (no numba), so that the CLI and the Snakefile can read it cheaply.
"""

from __future__ import annotations

import dataclasses

#: the searches :class:`DecoderConfig` offers
SEARCHES = ("stack", "cube")
#: translation options the decoder keeps per source phrase (Moses's ``ttable-limit``, default 20); the
#: phrase table itself holds more (smtlib.system.build.PHRASE_TABLE_LIMIT)
DECODER_TABLE_LIMIT = 20


@dataclasses.dataclass
class DecoderConfig:
    """Search settings (Moses option names in parentheses).

    Attributes
    ----------
    stack_size
        Histogram pruning limit per stack (``-s``, default 100); 0 means unlimited.
    distortion_limit
        Maximum jump (``-dl``, default 6); negative means unlimited.
    table_limit
        Options kept per source phrase (``ttable-limit``, default 20); 0 keeps all.
    k
        Size of the k-best lists (``-n-best-list``).
    distinct
        Only distinct translations in k-best lists (Moses's ``distinct``).
    nbest_factor
        With ``distinct``, at most ``k * nbest_factor`` derivations are examined (Moses's
        ``n-best-factor``, default 20).
    lattice_beam
        If positive (default 10), lattices keep only edges on paths within this model score of the
        1-best, and every edge of the k-best paths; 0 writes the whole search graph. On Multi30k
        (medium, Moses default weights) the whole graph has ~8,500 edges per sentence (160 MiB of
        gzip for val); beam 10 keeps ~1,300 (~24 MiB), beam 3 ~190.
    search
        ``"stack"`` (default): every hypothesis of a stack extended by every option
        (:mod:`smtlib.decoder.search`, Moses's ``-search-algorithm 0``); ``"cube"``: cube pruning
        (:mod:`smtlib.decoder.cube`, Moses's ``-search-algorithm 1``).
    pop_limit
        With ``search="cube"``, hypotheses popped per stack (Moses's ``-cube-pruning-pop-limit``,
        default 1000).
    """

    stack_size: int = 100
    distortion_limit: int = 6
    table_limit: int = DECODER_TABLE_LIMIT
    k: int = 100
    distinct: bool = True
    nbest_factor: int = 20
    lattice_beam: float = 10.0
    search: str = "stack"
    pop_limit: int = 1000

    def __post_init__(self) -> None:
        if self.search not in SEARCHES:
            raise ValueError(f"unknown search {self.search!r} (one of {', '.join(SEARCHES)})")
        if self.pop_limit < 1:
            raise ValueError(f"pop_limit must be at least 1, got {self.pop_limit}")


#: the settings of the search itself, in the order of the commands' options (``--stack-size ...``)
SEARCH_SETTINGS = ("stack_size", "distortion_limit", "table_limit", "search", "pop_limit")


def search_defaults() -> dict[str, object]:
    """The defaults of :data:`SEARCH_SETTINGS`, from :class:`DecoderConfig`."""
    fields = {f.name: f.default for f in dataclasses.fields(DecoderConfig)}
    return {name: fields[name] for name in SEARCH_SETTINGS}
