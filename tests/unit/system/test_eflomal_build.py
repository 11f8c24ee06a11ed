"""smtlib.system.eflomal_build: the portable aligner's refusals (no network needed)."""

from __future__ import annotations

import hashlib

import pytest

from smtlib.system import eflomal_build


def test_an_unknown_release_is_refused(monkeypatch):
    with pytest.raises(eflomal_build.AlignerBuildError, match="knows release"):
        eflomal_build.fetch_sdist("0.0.1")


def test_a_source_with_another_digest_is_refused(tmp_path, monkeypatch):
    fake = tmp_path / "eflomal-2.0.0.tar.gz"
    fake.write_bytes(b"not the release")
    monkeypatch.setenv("SMTLIB_EFLOMAL_SDIST", str(fake))
    with pytest.raises(eflomal_build.AlignerBuildError, match=hashlib.sha256(b"not the release").hexdigest()):
        eflomal_build.fetch_sdist("2.0.0")


def test_a_user_binary_must_be_executable(tmp_path, monkeypatch):
    pytest.importorskip("eflomal")
    monkeypatch.setenv("SMTLIB_EFLOMAL", str(tmp_path / "missing"))
    with pytest.raises(eflomal_build.AlignerBuildError, match="not an executable file"):
        eflomal_build.eflomal_binary()
    binary = tmp_path / "eflomal"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setenv("SMTLIB_EFLOMAL", str(binary))
    found = eflomal_build.eflomal_binary()
    assert found.path == binary and found.describe()["build"] == "user"
