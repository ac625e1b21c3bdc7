"""Table rendering shared by every study: Markdown, LaTeX (booktabs) and HTML, one missing-value rule.

* :func:`fmt` - a number with a fixed number of decimals; a missing or undefined value (None,
  ``pd.NA``, NaN, +-inf) is :data:`MISSING` (``n/a``), never 0.
* :func:`tex_escape` - the one TeX escaper (``\\ _ & % #`` and the symbols the tables use).
* :func:`markdown_table`, :func:`latex_table`, :func:`html_table` - a table from a header and rows
  of already formatted cells (a study decides which cells, e.g. the paper's column groups);
  :func:`markdown_frame` a whole DataFrame with floats rounded.

The TSV beside every rendered table is written by :func:`judgelab.data.tables.write_tsv`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.data.tables import write_tsv

#: How a missing or undefined value is shown in every table.
MISSING = "n/a"

_TEX = (
    ("\\", r"\textbackslash{}"),
    ("_", r"\_"),
    ("&", r"\&"),
    ("%", r"\%"),
    ("#", r"\#"),
    ("κ", r"$\kappa$"),
    ("α", r"$\alpha$"),
    ("→", r"$\to$"),
    ("↑", r"$\uparrow$"),
    (">", r"$>$"),
)


def is_missing(value) -> bool:
    """None, ``pd.NA``, NaN or an infinite number."""
    if value is None or value is pd.NA:
        return True
    if isinstance(value, (float, np.floating)):
        return not math.isfinite(float(value))
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def fmt(value, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals, or :data:`MISSING`."""
    return MISSING if is_missing(value) else f"{float(value):.{digits}f}"


def tex_escape(text) -> str:
    """``text`` safe inside a LaTeX table cell."""
    s = str(text)
    for a, b in _TEX:
        s = s.replace(a, b)
    return s


def _md_cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], align: Sequence[str] | None = None
) -> str:
    """A GitHub-style Markdown table; ``align``: per column ``"l"`` (default) or ``"r"``."""
    align = list(align) if align is not None else ["l"] * len(header)
    lines = ["| " + " | ".join(_md_cell(h) for h in header) + " |"]
    lines.append("|" + "".join("---:|" if a == "r" else "---|" for a in align))
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def markdown_frame(df: pd.DataFrame, digits: int = 3) -> str:
    """A DataFrame as a Markdown table: floats with ``digits`` decimals (missing: :data:`MISSING`),
    anything else as text."""

    def cell(v) -> str:
        return fmt(v, digits) if isinstance(v, (float, np.floating)) else str(v)

    rows = [[cell(v) for v in row] for row in df.itertuples(index=False)]
    return markdown_table([str(c) for c in df.columns], rows)


def spans(keys: Sequence) -> list[tuple[object, int]]:
    """Runs of equal consecutive keys, in order: (key, length) - the header cells that span the
    columns under one group (a group that comes back later is another run)."""
    out: list[tuple[object, int]] = []
    for k in keys:
        if out and out[-1][0] == k:
            out[-1] = (k, out[-1][1] + 1)
        else:
            out.append((k, 1))
    return out


#: The files of one rendered table, in order: the data, then its three renderings.
TABLE_FORMATS = ("tsv", "md", "tex", "html")


def write_table(df: pd.DataFrame, render: Callable[[str], str], out: Mapping[str, str]) -> None:
    """One table as its four files: ``df`` as the TSV ``out["tsv"]`` (no index), ``render(fmt)`` as
    the ``md``, ``tex`` and ``html`` files of ``out``."""
    write_tsv(df, out["tsv"])
    for fmt in TABLE_FORMATS[1:]:
        Path(out[fmt]).write_text(render(fmt), encoding="utf-8")


def multicolumn(n: int, text: str, align: str = "c") -> str:
    """A LaTeX header cell spanning ``n`` columns (``text`` escaped by the caller)."""
    return rf"\multicolumn{{{n}}}{{{align}}}{{{text}}}"


def latex_table(colspec: str, head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A booktabs ``tabular``: ``head`` lines (each already joined with ``&``) above the rule, one
    line per row of cells below it; cells are escaped by the caller (:func:`tex_escape`)."""
    out = [r"\begin{tabular}{" + colspec + "}", r"\toprule"]
    out += [line + r" \\" for line in head]
    out.append(r"\midrule")
    out += [" & ".join(row) + r" \\" for row in rows]
    out += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(out) + "\n"


def html_table(df: pd.DataFrame, caption: str = "") -> str:
    """A DataFrame as an HTML table (no index; missing cells empty), the caption above it."""
    body = df.to_html(index=False, border=0, na_rep="")
    return (f"<p>{html.escape(caption, quote=False)}</p>\n" if caption else "") + body


def id_cells(df: pd.DataFrame, ids: Sequence[str], *, nested: bool = True):
    """Each row of ``df`` with the id cells to show in it: ``nested`` - an id is shown where it or
    an id before it changes (the overrating paper's tables); otherwise every id is shown on the first row of
    a run of rows with the same ids and left empty below it (PERAS Table 5)."""
    prev: list[str] | None = None
    for _, r in df.iterrows():
        key = [str(r[k]) for k in ids]
        if nested:
            shown, changed = [], False
            for i, k in enumerate(key):
                changed = changed or prev is None or k != prev[i]
                shown.append(k if changed else "")
        else:
            shown = [""] * len(key) if key == prev else list(key)
        yield shown, r
        prev = key
