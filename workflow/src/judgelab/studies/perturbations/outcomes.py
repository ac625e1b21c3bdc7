"""Re-judging and its outcomes: transition matrices, label shifts, label distributions after each
insertion, the kept fraction of each rewrite.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from ...errors import InputError
from ...labels import GRADES
from .insertions import INSERTION_VARIANTS
from .rewrites import REASONS, REWRITE_VARIANTS

#: the graded labels 0-3 (a judge's answer tokens)


VARIANTS = REWRITE_VARIANTS + INSERTION_VARIANTS


def rejudge_pairs(sample: pd.DataFrame, variants: pd.DataFrame, variant: str) -> pd.DataFrame:
    """The pairs one judge re-judges on ``variant``: its own sampled pairs that have a kept
    rewrite (rewrite variants) or a valid insertion (insertion variants: only its grade-0,
    label-0 pairs), with the variant text as ``passage`` and its original label."""
    flag = "kept" if variant in REWRITE_VARIANTS else "ok"
    if variant not in VARIANTS:
        raise InputError(
            f"unknown variant {variant!r}; known: {list(VARIANTS)}", key="perturbations.variants"
        )
    own = sample
    if variant in INSERTION_VARIANTS:
        own = sample[(sample["grade"] == 0) & (sample["label"] == 0)]
    usable = variants[variants[flag] & (variants["variant"] == variant)]
    merged = own.merge(
        usable[["dataset", "qid", "docid", "text"]],
        on=["dataset", "qid", "docid"],
        how="inner",
        validate="one_to_one",
    )
    out = merged.rename(columns={"label": "original_label"}).assign(passage=merged["text"])
    return out[
        ["dataset", "judge", "qid", "query", "docid", "passage", "grade", "original_label"]
    ].reset_index(drop=True)


def transition_counts(original: Sequence, new: Sequence) -> pd.DataFrame:
    """4 x 4 counts (rows: original label 0-3, columns: label on the variant 0-3) plus a
    ``missing`` column counting variants whose label did not parse (None / NA)."""
    orig = pd.array(list(original), dtype="Int64")
    lab = pd.array(list(new), dtype="Int64")
    if len(orig) != len(lab):
        raise ValueError("original and new labels differ in length")
    if orig.isna().any():
        raise ValueError("every re-judged pair must have an original label")
    mat = pd.DataFrame(0, index=pd.Index(GRADES, name="original_label"), columns=[*GRADES, "missing"])
    for o, n in zip(orig, lab):
        mat.loc[int(o), "missing" if pd.isna(n) else int(n)] += 1
    return mat


def transition_table(rejudged: pd.DataFrame) -> pd.DataFrame:
    """Tidy transitions per judge and variant: count and ``share`` of each original -> new label
    among the row's parsed re-judgments (NaN for a row with none), with the row's totals."""
    rows = []
    for (judge, variant), g in rejudged.groupby(["judge", "variant"], sort=False):
        mat = transition_counts(g["original_label"], g["label"])
        for o in GRADES:
            parsed = int(mat.loc[o, GRADES].sum())
            for n in GRADES:
                c = int(mat.loc[o, n])
                rows.append(
                    {
                        "judge": judge,
                        "variant": variant,
                        "original_label": o,
                        "new_label": n,
                        "count": c,
                        "share": c / parsed if parsed else np.nan,
                        "row_parsed": parsed,
                        "row_missing": int(mat.loc[o, "missing"]),
                    }
                )
    return pd.DataFrame(
        rows,
        columns=[
            "judge",
            "variant",
            "original_label",
            "new_label",
            "count",
            "share",
            "row_parsed",
            "row_missing",
        ],
    )


def shift_table(rejudged: pd.DataFrame) -> pd.DataFrame:
    """Per judge and variant: pairs re-judged, parsed, and over the parsed the mean label shift
    (new - original) and the shares of labels raised, kept and lowered."""
    rows = []
    for (judge, variant), g in rejudged.groupby(["judge", "variant"], sort=False):
        p = g[g["label"].notna()]
        d = (p["label"].astype(int) - p["original_label"].astype(int)).to_numpy()
        n = len(d)
        rows.append(
            {
                "judge": judge,
                "variant": variant,
                "n": len(g),
                "n_parsed": n,
                "mean_shift": float(d.mean()) if n else np.nan,
                "share_up": float((d > 0).mean()) if n else np.nan,
                "share_same": float((d == 0).mean()) if n else np.nan,
                "share_down": float((d < 0).mean()) if n else np.nan,
            }
        )
    return pd.DataFrame(
        rows,
        columns=["judge", "variant", "n", "n_parsed", "mean_shift", "share_up", "share_same", "share_down"],
    )


def distribution_table(rejudged: pd.DataFrame) -> pd.DataFrame:
    """Per judge and variant: count and share (among parsed) of each label 0-3, with the totals."""
    rows = []
    for (judge, variant), g in rejudged.groupby(["judge", "variant"], sort=False):
        parsed = g["label"].dropna().astype(int)
        for lab in GRADES:
            c = int((parsed == lab).sum())
            rows.append(
                {
                    "judge": judge,
                    "variant": variant,
                    "label": lab,
                    "count": c,
                    "share": c / len(parsed) if len(parsed) else np.nan,
                    "n_parsed": len(parsed),
                    "n_missing": int(g["label"].isna().sum()),
                }
            )
    return pd.DataFrame(
        rows, columns=["judge", "variant", "label", "count", "share", "n_parsed", "n_missing"]
    )


def kept_table(rewrites: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Per rewrite variant: rewrites, kept, each rejection reason, and the kept fraction."""
    rows = []
    for t in rewrites:
        for variant, g in t.groupby("variant", sort=False):
            reasons = g["reason"].fillna("")
            row = {"variant": variant, "n": len(g), "kept": int(g["kept"].sum())}
            row.update({r: int((reasons == r).sum()) for r in REASONS})
            row["truncated"] = int(g["truncated"].astype(str).str.lower().isin(["true", "1"]).sum())
            row["kept_fraction"] = row["kept"] / len(g) if len(g) else np.nan
            rows.append(row)
    return pd.DataFrame(rows, columns=["variant", "n", "kept", *REASONS, "truncated", "kept_fraction"])


def insertion_table(insertions: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Per insertion variant: candidate passages and queries, and how many got a valid sentence."""
    rows = []
    for t in insertions:
        for variant, g in t.groupby("variant", sort=False):
            q = g.drop_duplicates("qid")
            rows.append(
                {
                    "variant": variant,
                    "n_passages": len(g),
                    "n_ok": int(g["ok"].sum()),
                    "n_queries": len(q),
                    "n_queries_ok": int(q["ok"].sum()),
                }
            )
    return pd.DataFrame(rows, columns=["variant", "n_passages", "n_ok", "n_queries", "n_queries_ok"])
