"""Where the repository is, for the tests and their support modules: the one place that knows how deep
this folder lies below the root, so a test that moves does not have to count ``parents`` again."""

from __future__ import annotations

import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
