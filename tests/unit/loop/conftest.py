"""A k-best pool of the fake decoder (every candidate of its 12 dev sentences) for the tests of a loop step."""

from __future__ import annotations

import pytest

from smtlib.bleu.references import read_references
from smtlib.kbest.pool import KBestPool, read_pool
from tests.support import fake_decoder


@pytest.fixture(scope="module")
def example_pool(tmp_path_factory) -> tuple[KBestPool, list[list[str]]]:
    """(pool with BLEU statistics, references): the fake decoder's 8-best lists under its initial weights."""
    folder = tmp_path_factory.mktemp("loop-pool")
    paths = fake_decoder.write_example(folder)
    nbest = folder / "dev.nbest"
    assert fake_decoder.main(["--weights", paths["init.weights"], "-i", paths["dev.src"], "-n-best-list", str(nbest),
                              "8"]) == 0
    references = read_references([paths["dev.en"]])
    pool = read_pool(nbest, n_sentences=len(references[0]))
    pool.compute_stats(references)
    return pool, references
