"""The typo check of weight names: its shortcuts (a length filter, an alignment that stops past the
limit) give exactly the answers of the full Damerau-Levenshtein alignment."""

from __future__ import annotations

import random

import pytest

from smtlib.errors import InputError
from smtlib.weights import check_weight_names, closest_dense, edit_distance, typo_distance

DENSE = ["LM0_0", "tm_1", "WordPenalty0_0", "Distortion0_0", "TranslationModel0_3", "PhrasePenalty0_0"]


def full_closest(name: str, dense_names: list[str]) -> tuple[str, int] | None:
    """:func:`closest_dense` without its shortcuts."""
    best = None
    for dense in dense_names:
        distance = edit_distance(name.lower(), dense.lower())
        if distance <= typo_distance(dense) and (best is None or distance < best[1]):
            best = (dense, distance)
    return best


def mutate(rng: random.Random, name: str) -> str:
    """``name`` after 0-3 random edits (insert, delete, substitute, swap neighbours)."""
    chars = list(name)
    for _ in range(rng.randint(0, 3)):
        op, i = rng.randrange(4), rng.randrange(len(chars) + 1)
        if op == 0:
            chars.insert(i, rng.choice("aeLMt_0"))
        elif chars and op == 1:
            del chars[min(i, len(chars) - 1)]
        elif chars and op == 2:
            chars[min(i, len(chars) - 1)] = rng.choice("aeLMt_0")
        elif len(chars) > 1:
            j = min(i, len(chars) - 2)
            chars[j], chars[j + 1] = chars[j + 1], chars[j]
    return "".join(chars)


def test_a_limited_alignment_is_exact_up_to_the_limit():
    rng = random.Random(5)
    for _ in range(20_000):
        a = "".join(rng.choice("ab_c0") for _ in range(rng.randint(0, 9)))
        b = "".join(rng.choice("ab_c0") for _ in range(rng.randint(0, 9)))
        full = edit_distance(a, b)
        for limit in (0, 1, 2, 3):
            got = edit_distance(a, b, limit=limit)
            assert got == full if full <= limit else got > limit, (a, b, limit, full, got)


def test_closest_dense_is_the_full_alignments_answer():
    rng = random.Random(11)
    names = [mutate(rng, rng.choice(DENSE)) for _ in range(5_000)]
    names += ["id_der_the", "tgt_Haus", "ng_LM0_x", "lm0", "Distorsion0_0", "tmm_1", ""]
    for name in names:
        assert closest_dense(name, DENSE) == full_closest(name, DENSE), name


def test_many_unknown_sparse_names_pass_and_a_misspelt_dense_one_is_caught():
    """A template model's weights: sparse names of other folds pass, a dense typo among them fails."""
    weights = {name: 0.1 for name in DENSE}
    weights.update({f"id_w{i}_x{i % 97}": 0.01 for i in range(20_000)})
    check_weight_names(weights, DENSE, sparse_names=["id_w0_x0"])
    weights["Distorsion0_0"] = 0.2
    with pytest.raises(InputError, match="one edit from its dense value 'Distortion0_0'"):
        check_weight_names(weights, DENSE, sparse_names=["id_w0_x0"])
