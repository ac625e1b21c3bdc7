"""Re-judging and its outcomes: transition matrices, label shifts, label distributions after each
insertion, the kept fraction of each rewrite.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from judgelab.analysis.agreement import transitions
from judgelab.data.labels import GRADES
from judgelab.data.tables import missing_split, truthy
from judgelab.errors import InputError
from judgelab.studies.perturbations.insertions import INSERTION_VARIANTS
from judgelab.studies.perturbations.rewrites import REASONS, REWRITE_VARIANTS

#: the graded labels 0-3 (a judge's answer tokens)


VARIANTS = REWRITE_VARIANTS + INSERTION_VARIANTS


#: How the meaning check filters the rewrites (``perturbations.rewrite_filter``): each variant on
#: its own, or only the passages whose every rewrite variant was kept.
REWRITE_FILTERS = ("per_variant", "all_variants")


def kept_by_all(rewrites: Iterable[pd.DataFrame], variants: Sequence[str]) -> pd.DataFrame:
    """The (dataset, qid, docid) whose rewrites of every one of ``variants`` were kept."""
    keys = ["dataset", "qid", "docid"]
    kept_sets = {}
    for t in rewrites:
        for v, g in t.groupby("variant", sort=False):
            kept_sets[v] = g.loc[g["kept"], keys]
    missing = [v for v in variants if v not in kept_sets]
    if missing:
        raise ValueError(f"no rewrites table of the variants {missing}")
    common = None
    for v in variants:
        part = kept_sets[v].drop_duplicates()
        common = part if common is None else common.merge(part, on=keys, how="inner")
    return (common if common is not None else pd.DataFrame(columns=keys)).reset_index(drop=True)


def rejudge_pairs(
    sample: pd.DataFrame, variants: pd.DataFrame, variant: str, common: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The pairs one judge re-judges on ``variant``: its own sampled pairs that have a kept
    rewrite (rewrite variants) or a valid insertion (insertion variants: only its grade-0,
    label-0 pairs), with the variant text as ``passage`` and its original label. ``common``
    (rewrite variants only; ``rewrite_filter: all_variants``): keep only these passages
    (:func:`kept_by_all`), so every rewrite variant is compared on the same passages."""
    flag = "kept" if variant in REWRITE_VARIANTS else "ok"
    if variant not in VARIANTS:
        raise InputError(
            f"unknown variant {variant!r}; known: {list(VARIANTS)}", key="perturbations.variants"
        )
    own = sample
    if variant in INSERTION_VARIANTS:
        own = sample[(sample["grade"] == 0) & (sample["label"] == 0)]
    usable = variants[variants[flag] & (variants["variant"] == variant)]
    if common is not None and variant in REWRITE_VARIANTS:
        usable = usable.merge(
            common[["dataset", "qid", "docid"]], on=["dataset", "qid", "docid"], how="inner"
        )
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
    counts, missing = transitions(orig, lab, GRADES)
    return pd.DataFrame(
        np.column_stack([counts, missing]),
        index=pd.Index(GRADES, name="original_label"),
        columns=[*GRADES, "missing"],
    )


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
    """Per judge and variant: pairs re-judged, parsed, the missing ones split (``n_truncated``:
    cut by the answer bound, ``n_unparsable``), and over the parsed the mean label shift
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
                **missing_split(g),
                "coverage": n / len(g) if len(g) else np.nan,
                "mean_shift": float(d.mean()) if n else np.nan,
                "share_up": float((d > 0).mean()) if n else np.nan,
                "share_same": float((d == 0).mean()) if n else np.nan,
                "share_down": float((d < 0).mean()) if n else np.nan,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "judge",
            "variant",
            "n",
            "n_parsed",
            "n_truncated",
            "n_unparsable",
            "coverage",
            "mean_shift",
            "share_up",
            "share_same",
            "share_down",
        ],
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
                    "coverage": len(parsed) / len(g) if len(g) else np.nan,
                }
            )
    return pd.DataFrame(
        rows, columns=["judge", "variant", "label", "count", "share", "n_parsed", "n_missing", "coverage"]
    )


def kept_table(rewrites: Iterable[pd.DataFrame], rewrite_filter: str) -> pd.DataFrame:
    """Per rewrite variant: rewrites, kept, each rejection reason, the kept fraction, and (either
    filter) ``kept_all_variants``: the passages whose rewrites of every variant of the table were
    kept - the passages ``rewrite_filter: all_variants`` re-judges; ``rejudged`` says how many
    of the variant's kept rewrites the filter passes on to the re-judging."""
    tables = list(rewrites)
    variants = list(dict.fromkeys(v for t in tables for v in t["variant"]))
    common = kept_by_all(tables, variants) if tables else pd.DataFrame()
    rows = []
    for t in tables:
        for variant, g in t.groupby("variant", sort=False):
            reasons = g["reason"].fillna("")
            row = {"variant": variant, "n": len(g), "kept": int(g["kept"].sum())}
            row.update({r: int((reasons == r).sum()) for r in REASONS})
            row["truncated"] = int(truthy(g["truncated"]).sum())
            row["kept_fraction"] = row["kept"] / len(g) if len(g) else np.nan
            row["kept_all_variants"] = len(common)
            row["rejudged"] = len(common) if rewrite_filter == "all_variants" else row["kept"]
            row["rewrite_filter"] = rewrite_filter
            rows.append(row)
    return pd.DataFrame(
        rows,
        columns=[
            "variant",
            "n",
            "kept",
            *REASONS,
            "truncated",
            "kept_fraction",
            "kept_all_variants",
            "rejudged",
            "rewrite_filter",
        ],
    )


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


def pool_transitions(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """:func:`transition_table` rows of several datasets pooled: counts and row totals summed per
    judge, variant, original and new label; shares recomputed (NaN for a row with no parsed
    re-judgment)."""
    cols = ["judge", "variant", "original_label", "new_label", "count", "share", "row_parsed", "row_missing"]
    if not tables:
        return pd.DataFrame(columns=cols)
    keys = ["judge", "variant", "original_label", "new_label"]
    allrows = pd.concat(tables, ignore_index=True)
    out = allrows.groupby(keys, sort=False, as_index=False)[["count", "row_parsed", "row_missing"]].sum()
    out["share"] = out["count"] / out["row_parsed"].where(out["row_parsed"] > 0)
    return out[cols]


def pool_distributions(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """:func:`distribution_table` rows of several datasets pooled: counts, parsed and missing
    summed per judge, variant and label; shares and coverage recomputed."""
    cols = ["judge", "variant", "label", "count", "share", "n_parsed", "n_missing", "coverage"]
    if not tables:
        return pd.DataFrame(columns=cols)
    keys = ["judge", "variant", "label"]
    allrows = pd.concat(tables, ignore_index=True)
    out = allrows.groupby(keys, sort=False, as_index=False)[["count", "n_parsed", "n_missing"]].sum()
    parsed = out["n_parsed"].where(out["n_parsed"] > 0)
    out["share"] = out["count"] / parsed
    total = (out["n_parsed"] + out["n_missing"]).where(lambda t: t > 0)
    out["coverage"] = out["n_parsed"] / total
    return out[cols]
