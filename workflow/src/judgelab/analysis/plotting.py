"""Plotting helpers shared by every study's figures: matplotlib on the Agg backend (no screen) and
one way to write a figure.

Every figure is written as PNG (150 dpi) and PDF by :func:`save`; the PDF carries no creation date,
so the same figure is the same file on every run. A study's figures import ``plt`` from here, so
the backend is chosen before pyplot is first imported.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["plt", "save"]


def save(fig, out_png: str | Path, out_pdf: str | Path | None = None) -> None:
    """Write ``fig`` as PNG (150 dpi) and PDF, then close it. The PDF carries no creation date,
    so the same figure is the same file on every run."""
    Path(out_png).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_png, dpi=150, bbox_inches="tight")
    if out_pdf:
        Path(out_pdf).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out_pdf, bbox_inches="tight", metadata={"CreationDate": None})
    plt.close(fig)
