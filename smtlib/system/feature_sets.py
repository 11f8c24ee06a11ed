"""The feature sets: what each one adds to a system (Cherry & Foster 2012, §4.2 and §5.1).

This table is the one owner of that fact. ``smtlib train`` (which stages to run, what ``assemble``
collects), the model directory (:mod:`smtlib.system.modeldir`), the decoder and the Moses export
(whether TranslationModel0 carries the sparse field), the workflow (``rules/common.smk``: which
components a system needs, the ``{fs}`` wildcard) and the reports (column titles) all read it.
Adding a feature set is one entry in :data:`FEATURE_SETS` (and, where the workflow's config names
it, the schema enum, which ``tests/integration/workflow/test_config_schema.py`` checks against this table).

=========  =====  =====  ==========  ======================================  ==================
name       TMs    LMs    reordering  sparse templates (TM0's sixth field)    count bins
=========  =====  =====  ==========  ======================================  ==================
small      1      1      no          none                                    -
medium     2      2      yes         none                                    -
big        2      2      yes         Table 3 (:mod:`smtlib.system.sparse`)   11 bins (Table 3)
overfit    2      2      yes         Table 3                                 one per joint count
=========  =====  =====  ==========  ======================================  ==================

The dense features follow Moses's names: ``TranslationModel0`` (4 values), ``LM0``,
``WordPenalty0``, ``Distortion0``, then ``TranslationModelK`` (4) and ``LMK`` for every further
index K, then ``LexicalReordering0`` (6): 7 values for small, 18 for medium, big and overfit.
``overfit`` is Figure 1's over-fitting set: Big with the count-bin template made to distinguish
every joint count (:func:`smtlib.system.sparse.exact_count_table`).
"""

from __future__ import annotations

import dataclasses

from smtlib.errors import InputError


@dataclasses.dataclass(frozen=True)
class FeatureSet:
    """One feature set: the components and features a system of this set has.

    Attributes
    ----------
    name
        The name on command lines, in ``model.yaml`` and in the workflow's config.
    title
        The column title in the result tables (Cherry & Foster 2012, Tables 4-6).
    translation_models, language_models
        How many phrase tables (``TranslationModelK``) and LMs (``LMK``) the system has.
    reordering
        Whether it has the msd-bidirectional-fe ``LexicalReordering0`` (6 features).
    sparse
        Whether TranslationModel0's table carries the sparse templates of Table 3 as a sixth field.
    count_bins
        With ``sparse``: ``"paper"`` for the 11 count bins of Table 3, ``"exact"`` for one feature
        per joint count (the over-fitting set of §5.1).
    """

    name: str
    title: str
    translation_models: int
    language_models: int
    reordering: bool
    sparse: bool = False
    count_bins: str = "paper"

    def dense_features(self) -> list[tuple[str, int]]:
        """``[(Moses feature name, number of values), ...]`` in k-best order."""
        dense = [("TranslationModel0", 4), ("LM0", 1), ("WordPenalty0", 1), ("Distortion0", 1)]
        for k in range(1, max(self.translation_models, self.language_models)):
            dense += [(f"TranslationModel{k}", 4)] if k < self.translation_models else []
            dense += [(f"LM{k}", 1)] if k < self.language_models else []
        return dense + ([("LexicalReordering0", 6)] if self.reordering else [])

    def indices(self) -> range:
        """The component indices K whose ``phrases.K``/``lm.K`` stages the set needs."""
        return range(max(self.translation_models, self.language_models))


FEATURE_SETS: dict[str, FeatureSet] = {
    fs.name: fs
    for fs in (
        FeatureSet("small", "Small", translation_models=1, language_models=1, reordering=False),
        FeatureSet("medium", "Medium", translation_models=2, language_models=2, reordering=True),
        FeatureSet("big", "Big", translation_models=2, language_models=2, reordering=True, sparse=True),
        FeatureSet("overfit", "Big (over-fitting)", translation_models=2, language_models=2, reordering=True,
                   sparse=True, count_bins="exact"),
    )
}


def feature_set(name: str, path=None) -> FeatureSet:
    """The feature set called ``name``; :class:`~smtlib.errors.InputError` (naming ``path``) if none is."""
    try:
        return FEATURE_SETS[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown feature set {name!r} (expected one of {', '.join(FEATURE_SETS)})", path) from None


def describe(translation_models: int, language_models: int, reordering: bool, sparse: bool) -> str:
    """The name of the feature set a model with these components is filed under (an imported Moses system).

    The first set in table order (with exact count bins left out: an imported table has no
    templates) whose sparse field matches and whose components include the model's; else the
    largest such set. A standard ``train-model.perl`` system (1 TM, 1 LM, reordering) is ``medium``.
    """
    candidates = [fs for fs in FEATURE_SETS.values() if fs.sparse == sparse and fs.count_bins == "paper"]
    for fs in candidates:
        if (translation_models <= fs.translation_models and language_models <= fs.language_models
                and reordering <= fs.reordering):
            return fs.name
    return candidates[-1].name
