"""Sampling ("When LLM Judges Inflate Scores", section 3): each judge's sample of its original
judgment, and the pool of the judges' samples (each passage rewritten once per variant).
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Iterable

import numpy as np
import pandas as pd

from judgelab.data.labels import GRADES
from judgelab.data.tables import read_tsv, truthy
from judgelab.errors import InputError

log = logging.getLogger(__name__)


SAMPLE_COLUMNS = ["dataset", "judge", "qid", "query", "docid", "passage", "grade", "label"]


POOL_COLUMNS = ["dataset", "qid", "query", "docid", "passage", "grade"]


def _group_seed(seed: int, qid: str, label: int) -> list[int]:
    return [int(seed), zlib.crc32(str(qid).encode("utf-8")), int(label)]


def sample_judged(
    pairs: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    judge: str,
    per_label: int,
    seed: int,
    source: str = "judgments",
) -> pd.DataFrame:
    """Per query at most ``per_label`` passages per label the judge predicted, drawn with ``seed``.

    ``pairs``: the dataset table (dataset, qid, query, docid, passage, grade); ``judgments``: the
    judge's judgment table on it (qid, docid, label, parsed, ...). Rows whose label did not parse
    are never sampled. Within a (query, label) group the candidates are ordered by docid and
    drawn with a generator seeded by (seed, crc32(qid), label), so the draw does not depend on row
    order or on the other groups. Columns :data:`SAMPLE_COLUMNS`, sorted by qid, label, docid.
    """
    for col in ("qid", "docid", "label", "parsed"):
        if col not in judgments.columns:
            raise InputError(f"judgment table has no column {col!r}", path=source)
    judged = judgments[["qid", "docid", "label", "parsed"]]
    merged = pairs.merge(judged, on=["qid", "docid"], how="inner", validate="one_to_one")
    if len(merged) != len(judged):
        raise InputError(
            f"{len(judged) - len(merged)} judged pairs are not in the dataset table", path=source
        )
    parsed = truthy(merged["parsed"]) & merged["label"].notna()
    usable = merged[parsed].copy()
    usable["label"] = usable["label"].astype(int)
    bad = usable[~usable["label"].isin(GRADES)]
    if len(bad):
        raise InputError(
            f"label {bad['label'].iloc[0]} outside 0-3 (qid {bad['qid'].iloc[0]}, "
            f"docid {bad['docid'].iloc[0]})",
            path=source,
        )
    parts = []
    for (qid, label), group in usable.groupby(["qid", "label"], sort=True):
        group = group.sort_values("docid", kind="stable")
        k = min(int(per_label), len(group))
        pick = np.random.default_rng(_group_seed(seed, qid, label)).choice(len(group), k, replace=False)
        parts.append(group.iloc[np.sort(pick)])
    out = pd.concat(parts, ignore_index=True) if parts else usable.iloc[0:0]
    out = out.assign(judge=judge)[SAMPLE_COLUMNS]
    out["grade"] = out["grade"].astype("Int64")
    out["label"] = out["label"].astype("Int64")
    log.info(
        "%s: %d judged pairs, %d unparsed (never sampled), %d sampled (at most %d per query "
        "and label); labels %s",
        judge,
        len(merged),
        int((~parsed).sum()),
        len(out),
        per_label,
        out["label"].value_counts().sort_index().to_dict(),
    )
    return out.reset_index(drop=True)


def pool_samples(samples: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """The union of the judges' sampled passages, one row per (dataset, qid, docid)."""
    frames = [s[POOL_COLUMNS] for s in samples]
    if not frames:
        return pd.DataFrame(columns=POOL_COLUMNS)
    allrows = pd.concat(frames, ignore_index=True)
    pool = (
        allrows.drop_duplicates(["dataset", "qid", "docid"])
        .sort_values(["dataset", "qid", "docid"], kind="stable")
        .reset_index(drop=True)
    )
    if len(allrows.drop_duplicates()) != len(pool):
        raise ValueError(
            "the samples disagree on the query, passage or grade of a pair "
            "(were they drawn from different dataset tables?)"
        )
    return pool


def read_sample(path: str) -> pd.DataFrame:
    df = read_tsv(
        path,
        {"dataset": str, "judge": str, "qid": str, "query": str, "docid": str, "passage": str},
        missing={"grade": [""], "label": [""]},
    )
    missing = [c for c in SAMPLE_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(f"not a sample table: no columns {missing}", path=str(path))
    df["grade"] = df["grade"].astype("Int64")
    df["label"] = df["label"].astype("Int64")
    return df
