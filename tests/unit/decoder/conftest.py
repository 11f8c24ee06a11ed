"""Fixtures of the decoder's tests."""

from __future__ import annotations

import pathlib

import pytest

from tests.support.decoder_toy import write_toy_model


@pytest.fixture(scope="module", params=["small", "medium", "big"])
def brute_force_toy(request, tmp_path_factory) -> pathlib.Path:
    """A toy model directory of each feature set, small enough for the brute-force search of
    ``tests/support/decoder_reference.py`` (the stack and cube-pruning tests); one per test module."""
    d = tmp_path_factory.mktemp(f"toy-{request.param}")
    write_toy_model(d, request.param, seed=7, n_words=10, n_multi=25)
    return d
