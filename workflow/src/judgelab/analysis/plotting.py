"""Plotting helpers shared by every study's figures: matplotlib on the Agg backend (no screen) and
one way to write a figure.

Every figure is written as PNG (150 dpi) and PDF by :func:`save`; the PDF carries no creation date,
so the same figure is the same file on every run. A study's figures import ``plt`` from here, so
the backend is chosen before pyplot is first imported.

:func:`annotated_heatmap` is the one annotated heatmap of every study (transition, confusion and
agreement matrices): a NaN cell is masked (the axes' grey shows) and says ``n/a``, never 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from judgelab.analysis.render import MISSING  # noqa: E402

__all__ = ["annotated_heatmap", "plt", "save"]


def save(fig, out_png: str | Path, out_pdf: str | Path | None = None) -> None:
    """Write ``fig`` as PNG (150 dpi) and PDF, then close it. The PDF carries no creation date,
    so the same figure is the same file on every run."""
    Path(out_png).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_png, dpi=150, bbox_inches="tight")
    if out_pdf:
        Path(out_pdf).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out_pdf, bbox_inches="tight", metadata={"CreationDate": None})
    plt.close(fig)


def annotated_heatmap(
    ax,
    values,
    texts: Sequence[Sequence[str]],
    *,
    cmap: str = "Blues",
    vmin: float = 0.0,
    vmax: float = 1.0,
    fontsize: float = 8,
    white_above: float | None = 0.6,
    missing: str | None = MISSING,
    aspect: str | None = None,
    background: str = "0.85",
    lines: str | None = None,
):
    """Draw the matrix ``values`` on ``ax`` as an image (row 0 on top), each finite cell annotated
    with ``texts[i][j]`` - white where the value is above ``white_above`` (None: where the cell's
    colour is dark, relative luminance below 0.408 as seaborn decides; for maps dark at the low
    end), black elsewhere - and each NaN cell masked (``background`` shows) and annotated with
    ``missing`` in grey (None: left blank, for a caller that marks it itself). ``lines``: the
    colour of thin lines between the cells, the frame left out (None: no lines, framed). Returns the image (for a colour bar)."""
    values = np.asarray(values, dtype=float)
    ax.set_facecolor(background)  # NaN cells are masked: the background shows
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=vmin, vmax=vmax, aspect=aspect)
    for (i, j), v in np.ndenumerate(values):
        if np.isfinite(v):
            if white_above is None:
                from seaborn.utils import relative_luminance

                white = relative_luminance(image.cmap(image.norm(v))) < 0.408
            else:
                white = v > white_above
            ax.text(
                j,
                i,
                texts[i][j],
                ha="center",
                va="center",
                fontsize=fontsize,
                color="white" if white else "black",
            )
        elif missing is not None:
            ax.text(j, i, missing, ha="center", va="center", fontsize=fontsize, color="0.3")
    if lines is not None:
        rows, cols = values.shape
        ax.set_xticks(np.arange(cols + 1) - 0.5, minor=True)
        ax.set_yticks(np.arange(rows + 1) - 0.5, minor=True)
        ax.grid(which="minor", color=lines, linewidth=1.0)
        ax.tick_params(which="minor", length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
    return image
