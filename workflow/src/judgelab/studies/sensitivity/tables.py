"""The study's tables as Markdown, LaTeX and HTML (numbers with three decimals, ``n/a`` for an
undefined value: :mod:`judgelab.analysis.render`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from judgelab.analysis import render


def renderer(df: pd.DataFrame, caption: str) -> Callable[[str], str]:
    """``render(fmt)`` of :func:`judgelab.analysis.render.write_table` for a whole frame; a missing
    whole number (``Int64``) is :data:`judgelab.analysis.render.MISSING` like a missing float."""
    df = df.copy()
    for c in df.columns:
        if str(df[c].dtype) == "Int64":
            df[c] = [render.MISSING if v is pd.NA else str(v) for v in df[c]]

    def cell(v) -> str:
        return render.fmt(v) if isinstance(v, (float, np.floating)) else str(v)

    def rendered(fmt: str) -> str:
        if fmt == "md":
            return render.markdown_frame(df)
        if fmt == "html":
            return render.html_table(df, caption)
        rows = [[render.tex_escape(cell(v)) for v in row] for row in df.itertuples(index=False)]
        head = [" & ".join(render.tex_escape(c) for c in df.columns)]
        return render.latex_table("l" * len(df.columns), head, rows)

    return rendered
