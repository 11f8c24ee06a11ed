"""The model directory: what ``smtlib train`` writes and ``smtlib decode --model DIR`` reads.

Layout of ``DIR``::

    model.yaml                 this description (see :class:`ModelSpec`)
    phrase-table.0.gz          Moses text phrase table of TranslationModel0
    phrase-table.1.gz          ... of TranslationModel1 (medium and big sets)
    reordering-table.0.gz      Moses msd-bidirectional-fe reordering table (medium and big)
    lm.0.arpa.gz, lm.1.arpa.gz ARPA n-gram language models LM0, LM1
    compiled.bin               the same tables and LMs in binary form, for fast loading (optional)
    default.weights            the system's own weights, for decoding it untuned (DEFAULT_WEIGHTS):
                               Moses train-model.perl's hand-set defaults (smtlib train), or an
                               imported moses.ini's (smtlib train import-moses); not where tuning
                               starts (the workflow's init.weights, smtlib data init-weights)

Phrase-table lines are Moses's text format with an optional sixth field of sparse features::

    src words ||| tgt words ||| p(f|e) lex(f|e) p(e|f) lex(e|f) ||| 0-0 1-1 ||| c(e) c(f) c(e,f) ||| name value name value

The four scores are probabilities (the decoder takes their natural log, as Moses does). The
alignment field lists ``src-tgt`` index pairs within the phrase. The counts field holds the
target-phrase count, the source-phrase count and the joint count, as Moses's ``consolidate`` writes
them. The sixth field, present only when the feature set is sparse
(``big``, ``overfit``), holds the Boolean sparse features of the
phrase pair (Cherry & Foster 2012, Table 3); each name contains ``_`` so that n-best readers treat it
as sparse (Moses's rule).

Reordering-table lines: ``src ||| tgt ||| m_prev s_prev d_prev m_next s_next d_next`` (probabilities).

``compiled.bin`` is written by ``smtlib train assemble`` (and ``build``) after the text components,
or by ``smtlib train compile --model DIR``; the decoder memory-maps it instead of reading the text
(seconds instead of 10-25 s). It holds the merged phrase pairs (looked up by a 64-bit hash of the
source phrase), their log scores, reordering scores and sparse features, the LMs' hash tables and
the vocabularies, and records the size, modification time and SHA-256 of each text component it was
made from and the format version: when a component has changed (or ``model.yaml`` lists other
components), the decoder says so in one line and reads the text tables. The text files stay the
reference; the byte layout is documented in :mod:`smtlib.decoder.compiled`.

Dense feature names and value counts follow Moses; which components and features each feature set
has is the table of :mod:`smtlib.system.feature_sets`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import pathlib

import yaml

from smtlib.errors import InputError
from smtlib.system.feature_sets import feature_set

FORMAT = "smtlib-phrase-model/1"
#: the model directory's own weights (see the module docstring)
DEFAULT_WEIGHTS = "default.weights"
#: its name in directories written before it was renamed (it read like the tuning start, init.weights)
OLD_DEFAULT_WEIGHTS = "weights.init"
#: each of the four log scores of a table that lacks a pair another table of the model has
#: (probability 1e-7): the decoder's merge and the Moses export/import share it
MISSING_LOGPROB = math.log(1e-7)


@dataclasses.dataclass
class Component:
    """One file-backed model component (a phrase table, an LM or a reordering table)."""

    name: str  #: Moses feature name, e.g. ``TranslationModel0``, ``LM1``, ``LexicalReordering0``
    path: str  #: file name relative to the model directory
    order: int | None = None  #: n-gram order, for language models
    description: str = ""  #: where the component comes from (which data, which alignment)


@dataclasses.dataclass
class ModelSpec:
    """The contents of ``model.yaml``.

    Attributes
    ----------
    source_lang, target_lang
        Language codes of the pair the model translates (e.g. ``fr`` -> ``en``).
    feature_set
        A name of :data:`smtlib.system.feature_sets.FEATURE_SETS` (Cherry & Foster 2012, §4.2).
    lowercase
        Whether the training text was lowercased (the decoder lowercases its input likewise).
    tokenized_input
        Whether the decoder input is expected to be tokenized already.
    max_phrase_length
        Longest source phrase in the tables.
    dense_features
        ``[(name, number_of_values), ...]`` in the order the decoder writes them in k-best lines.
    phrase_tables, language_models, reordering
        The components; ``reordering`` is empty for ``small``.
    sparse_templates
        Names of the sparse templates whose features the phrase tables carry (sparse feature sets only).
    tokenizer
        How raw input becomes model input: ``""`` when the training text was used as given
        (``tokenized_input`` is then true), ``"sacremoses"`` when ``smtlib train`` tokenized it with
        sacremoses's Moses tokenizer for ``source_lang`` (Moses escaping on). See
        :func:`prepare_input`.
    """

    source_lang: str
    target_lang: str
    feature_set: str
    lowercase: bool = True
    tokenized_input: bool = True
    max_phrase_length: int = 7
    dense_features: list[tuple[str, int]] = dataclasses.field(default_factory=list)
    phrase_tables: list[Component] = dataclasses.field(default_factory=list)
    language_models: list[Component] = dataclasses.field(default_factory=list)
    reordering: list[Component] = dataclasses.field(default_factory=list)
    sparse_templates: list[str] = dataclasses.field(default_factory=list)
    tokenizer: str = ""

    def dense_weight_names(self) -> list[str]:
        """``NAME_k`` for every value of every dense feature, in k-best order."""
        return [f"{name}_{k}" for name, count in self.dense_features for k in range(count)]

    @property
    def sparse(self) -> bool:
        """Whether TranslationModel0's table carries the sparse field (its feature set says so)."""
        return feature_set(self.feature_set).sparse

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data["dense_features"] = [[name, count] for name, count in self.dense_features]
        return {"format": FORMAT, **data}

    @classmethod
    def from_dict(cls, data: dict, path: str | os.PathLike = "model.yaml") -> ModelSpec:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"not an smtlib model description (expected format: {FORMAT})", path)
        data = dict(data)
        data.pop("format")
        try:
            for key in ("phrase_tables", "language_models", "reordering"):
                data[key] = [Component(**c) for c in data.get(key) or []]
            data["dense_features"] = [(str(n), int(c)) for n, c in data.get("dense_features") or []]
            spec = cls(**data)
        except (TypeError, ValueError) as exc:
            raise InputError(f"malformed model description: {exc}", path) from None
        feature_set(spec.feature_set, path)
        return spec


def model_directory(path: str) -> str:
    """A model directory given as itself or as its ``model.yaml`` (what a workflow declares): the
    directory (an ``argparse`` type of the ``--model``/``--out`` options)."""
    return os.path.dirname(path) or "." if os.path.basename(path) == "model.yaml" else path


def read_model_spec(model_dir: str | os.PathLike) -> ModelSpec:
    """Read ``DIR/model.yaml``; component paths stay relative (see :func:`component_path`)."""
    path = pathlib.Path(model_dir) / "model.yaml"
    if not path.is_file():
        raise InputError("no model.yaml: not a model directory", model_dir)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise InputError(f"malformed YAML: {exc}", path) from None
    return ModelSpec.from_dict(data, path)


def write_model_spec(model_dir: str | os.PathLike, spec: ModelSpec) -> None:
    """Write ``DIR/model.yaml`` atomically."""
    from smtlib.io import atomic_output

    with atomic_output(pathlib.Path(model_dir) / "model.yaml") as out:
        yaml.safe_dump(spec.to_dict(), out, sort_keys=False, allow_unicode=True)


def prepare_input(spec: ModelSpec, line: str) -> str:
    """One input sentence treated as the training source text was (tokenized, lowercased)."""
    from smtlib.system.corpus import preprocess_line

    return preprocess_line(line, spec.source_lang, tokenizer=spec.tokenizer, lowercase=spec.lowercase)


def component_path(model_dir: str | os.PathLike, component: Component) -> pathlib.Path:
    """Absolute path of a component file."""
    return pathlib.Path(model_dir) / component.path


def default_weights_file(model_dir: str | os.PathLike) -> pathlib.Path:
    """The model directory's own weights: ``default.weights``, or ``weights.init`` in a directory
    written before the rename (whose results a finished workflow run keeps instead of rebuilding)."""
    model_dir = pathlib.Path(model_dir)
    new, old = model_dir / DEFAULT_WEIGHTS, model_dir / OLD_DEFAULT_WEIGHTS
    return old if old.is_file() and not new.is_file() else new
