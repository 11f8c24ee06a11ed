"""Where the repository is, for the tests and their support modules: the one place that knows how deep
this folder lies below the root, so a test that moves does not have to count ``parents`` again."""

from __future__ import annotations

import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]


def config_readme_defaults(section: str) -> dict[str, str]:
    """The defaults config/README.md states for ``section``'s keys, from its table rows
    ``| `section.a`, `section.b` | `default a`, `default b` | ... |`` (one backquoted default per key)."""
    documented = {}
    for line in (REPO / "config/README.md").read_text(encoding="utf-8").splitlines():
        if not line.startswith(f"| `{section}."):
            continue
        keys, defaults = line.split("|")[1:3]
        names, values = re.findall(rf"`{section}\.(\w+)`", keys), re.findall(r"`([^`]*)`", defaults)
        assert len(names) == len(values), f"config/README.md: {keys.strip()} has {len(values)} defaults"
        documented.update(zip(names, values))
    return documented
