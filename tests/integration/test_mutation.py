"""A fast subset of the mutation run (``tests/support/mutation.py``; the full run is
``tests/support/mutation_full.py``).

Random single edits of real files must be rejected at the edited line, or change nothing, or be one
of the few edits that make another valid file (then the parse must be what the edit means).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.mutation import (FAILURES, Case, decode_lattice, kbest_reader, kbest_score, lattice_reader, run_case,
                                    shared_cases, summarize)


def _check(outcomes) -> None:
    failures = [f"{o.result}: {o.detail}" for o in outcomes if o.result in FAILURES]
    assert not failures, "\n".join(failures[:20])
    counts = summarize(outcomes)["all"]
    assert counts["rejected"] > 0.6 * len(outcomes)  # the edits do damage


@pytest.mark.data
def test_mutations_of_shared_files_are_rejected_or_harmless(shared_data, tmp_path):
    rng = np.random.default_rng(11)
    outcomes = []
    for k, case in enumerate(shared_cases(shared_data, tmp_path / "derived", subset=True)):
        outcomes += run_case(case, tmp_path / str(k), rng, per_kind=2)
    kinds = {o.kind for o in outcomes}
    assert {"drop-sep", "dup-sep", "change-sep", "number", "id-change", "id-reorder", "id-offset", "id-gap",
            "delete-field", "utf8", "truncate", "truncate-plain", "empty-line", "misspell"} <= kinds
    misspelt = [o for o in outcomes if o.kind == "misspell"]
    assert len(misspelt) == 4 and all(o.result == "rejected" for o in misspelt), misspelt  # two weights cases
    _check(outcomes)


def test_mutations_of_a_decoded_lattice_are_rejected_or_harmless(tmp_path):
    lattice = decode_lattice(tmp_path / "lat" / "lat.gz")
    case = Case("toy lattice", "lattice", lattice, lattice_reader)
    outcomes = run_case(case, tmp_path / "work", np.random.default_rng(12), per_kind=3)
    _check(outcomes)


@pytest.mark.data
def test_id_offsets_and_gaps_give_pools_scored_on_their_own_sentences(shared_data, tmp_path):
    """Moses's test_scorer_data (ids 0-99, 2,000 reference lines): ids moved up (a held-out part of a
    list) or a sentence deleted give valid pools, read as the line parser reads them and scored on
    exactly their sentences; ids moved beyond the references are rejected at the first such line."""
    base = shared_data / "moses-mert-nbest" / "test_scorer_data"
    refs = [base / "reference.txt.gz"]
    case = Case("test_scorer_data", "kbest", base / "nbest.out.gz", kbest_reader(refs), 2000,
                kbest_reader(refs, fast=False), kbest_score(refs))
    outcomes = run_case(case, tmp_path / "work", np.random.default_rng(13), per_kind=3, kinds=("id-offset", "id-gap"))
    failures = [f"{o.result}: {o.detail}" for o in outcomes if o.result in FAILURES]
    assert not failures, "\n".join(failures)
    counts = summarize(outcomes)
    assert counts["id-offset"]["wellformed"] >= 2 and counts["id-gap"]["wellformed"] == 3, counts
