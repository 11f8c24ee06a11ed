"""Drawing and writing the workflow's figures (matplotlib, imported only when a figure is drawn)."""

from __future__ import annotations

import os

from smtlib.io import atomic_output


def pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: str | os.PathLike, dpi: int = 120, tight: bool = True) -> None:
    """Write ``fig`` atomically in the format of ``path``'s extension (PNG without one), then close it.

    ``tight`` crops the canvas to the drawn content (``bbox_inches="tight"``).
    """
    path = os.fspath(path)
    with atomic_output(path, binary=True, compress=False) as out:
        fig.savefig(out, format=os.path.splitext(path)[1].lstrip(".") or "png", dpi=dpi,
                    bbox_inches="tight" if tight else None)
    pyplot().close(fig)
