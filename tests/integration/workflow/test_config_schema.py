"""The config schema's name lists agree with their owners (STYLE: "where a schema must list them, a
test checks it against the owner"): pairs with ``smtlib/data/corpora.py``, symmetrizations with
``smtlib/system/align.py``. Methods, feature sets and BLEU tokenizers are not listed in the schema
at all: ``rules/common.smk`` checks them against the tuner registry, ``smtlib/system/feature_sets.py``
and sacrebleu's ``BLEU.TOKENIZERS`` (``tests/integration/workflow/test_workflow.py`` shows the
message), so adding either is one entry in its owner; so are the tuning and evaluation metrics (``smtlib/bleu/metrics.py``, and the tuner registry for which metrics a
method takes)."""


import yaml

from smtlib.bleu.metrics import METRICS
from smtlib.data.corpora import PAIRS
from smtlib.system.align import ALIASES, SYMMETRIZATIONS
from smtlib.system.feature_sets import FEATURE_SETS
from smtlib.tuners.registry import list_tuners
from tests.support.repo import REPO

SCHEMA = yaml.safe_load((REPO / "config/schema/config.schema.yaml").read_text())


def _enum(name):
    return SCHEMA["definitions"][name]["enum"]


def test_methods_and_feature_sets_are_not_copied_into_the_schema():
    """rules/common.smk checks them against their owners; the schema only says what a name looks like."""
    import re

    for name, owner in (("method", list_tuners()), ("feature_set", list(FEATURE_SETS))):
        assert "enum" not in SCHEMA["definitions"][name]
        pattern = SCHEMA["definitions"][name]["pattern"]
        assert all(re.match(pattern, n) for n in owner), name
    for section in ("bleu", "replay"):
        assert "enum" not in SCHEMA["properties"][section]["properties"]["tokenize"]


def test_pair_enum_is_the_corpora_table():
    assert sorted(_enum("pair")) == sorted(PAIRS)


def test_symmetrization_enum_names_known_heuristics():
    enum = SCHEMA["properties"]["system"]["properties"]["tm1_symmetrization"]["enum"]
    assert set(enum) <= set(SYMMETRIZATIONS) | set(ALIASES)
    assert set(SYMMETRIZATIONS) <= set(enum)


def test_feature_set_table_is_what_the_paper_describes():
    """Cherry & Foster 2012 §4.2: Small 7 dense values, Medium and Big 18; Big adds sparse features."""
    dense = {name: sum(n for _, n in fs.dense_features()) for name, fs in FEATURE_SETS.items()}
    assert dense == {"small": 7, "medium": 18, "big": 18, "overfit": 18}
    assert [fs.name for fs in FEATURE_SETS.values() if fs.sparse] == ["big", "overfit"]
    assert FEATURE_SETS["overfit"].count_bins == "exact"


def test_an_imported_system_is_filed_under_the_smallest_set_that_holds_it():
    from smtlib.system.feature_sets import describe

    assert describe(1, 1, False, False) == "small"
    assert describe(1, 1, True, False) == "medium"  # train-model.perl's standard system
    assert describe(2, 2, True, True) == "big" and describe(1, 1, False, True) == "big"
    assert describe(3, 2, True, False) == "medium"  # more than any set: the largest of its kind


def _validator():
    import jsonschema

    return jsonschema.Draft202012Validator(SCHEMA)


def test_metric_keys_take_the_registry_names_without_copying_them():
    """tuning.metric (a name, a mixture, or a list of them: a sweep) and evaluation.metrics (names):
    the schema gives the form only; every name of smtlib.bleu.metrics fits it."""
    import re

    metric = SCHEMA["definitions"]["tuning_metric"]
    evaluation = SCHEMA["properties"]["evaluation"]["properties"]["metrics"]
    assert "enum" not in metric and "enum" not in evaluation["items"]
    assert all(re.match(metric["pattern"], n) and re.match(evaluation["items"]["pattern"], n) for n in METRICS)
    assert SCHEMA["properties"]["tuning"]["properties"]["metric"]["default"] == "bleu"
    assert evaluation["default"] == ["bleu"]
    validator = _validator()
    for good in ("chrf", "bleu:0.5,ter:-0.5", ["bleu", "chrf++", "ter"], ["bleu:0.7,chrf:0.3"]):
        assert not list(validator.iter_errors({"tuning": {"metric": good}})), good
    for bad in ("bleu ter", "", [], ["chrf", "chrf"], "bleu:0.5;ter:-0.5", "../x"):
        assert list(validator.iter_errors({"tuning": {"metric": bad}})), bad
    assert not list(validator.iter_errors({"evaluation": {"metrics": ["bleu", "chrf", "ter"]}}))
    for bad in ([], ["bleu", "bleu"], ["bleu:1"], "bleu"):
        assert list(validator.iter_errors({"evaluation": {"metrics": bad}})), bad
