"""Every table one rule hands to the next: column specs, dtypes, readers and writers.

All tables are tab-separated with a header, written by :func:`write_tsv`. Readers give the ids
(``qid``, ``docid``, ``dataset``, ...) as strings and labels as nullable integers, so a missing
label stays missing (``<NA>``) and never becomes a grade.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

#: The normalised dataset table (``{results}/datasets/{dataset}.tsv``).
DATASET_COLUMNS = ["dataset", "qid", "query", "docid", "passage", "grade"]

#: How an answer was read and who gave it, the last columns of every judgment table (PERAS, the
#: perturbations, ranking, overrating): cut by the bound, the rule that read it, the finish
#: reason, served model and system fingerprint as the response gave them, and the decoding
#: parameters it was asked with (``decoding``: ``key=value`` pairs of the answer bound
#: ``max_tokens`` and the backend's sampling parameters of the cache key, e.g. ``temperature``,
#: ``top_p``; :func:`judgelab.llm.client.decoding`).
ANSWER_COLUMNS = [
    "truncated",
    "parse_rule",
    "finish_reason",
    "served_model",
    "system_fingerprint",
    "decoding",
]


def truthy(column: pd.Series) -> pd.Series:
    """A flag column as booleans, whether read from a table (``True``/``False``/``1``/``0``
    strings, empty for missing) or built in memory (bool)."""
    return column.astype(str).str.lower().isin(["true", "1"])


def missing_split(table: pd.DataFrame) -> dict[str, int]:
    """The missing labels (``label``) of a judgment table split in two: ``n_truncated`` (the
    answer was cut by the token bound: its ``truncated`` flag) and ``n_unparsable`` (written but
    not readable); without a ``truncated`` column every missing label is unparsable."""
    missing = table["label"].isna().to_numpy()
    cut = missing & truthy(table["truncated"]).to_numpy() if "truncated" in table else missing & False
    return {"n_truncated": int(cut.sum()), "n_unparsable": int(missing.sum() - cut.sum())}


#: One judgment job's table: one row per pair, in the dataset table's order; ``parse_rule``: how
#: the label was read (an answer rule of :mod:`judgelab.llm.answers`, ``logits``, ``imported``;
#: empty when missing); ``truncated``: the answer was cut by the token bound (its finish reason;
#: false for a label read from the logits, whose one-token answer is the design); who answered:
#: the finish reason, the served model and the system fingerprint as the response gave them
#: (empty where the backend reports none, and in rows of answers cached before they were kept).
JUDGMENT_COLUMNS = [
    "dataset",
    "qid",
    "docid",
    "label",
    "parsed",
    "answer",
    "p0",
    "p1",
    "p2",
    "p3",
    "label_mass",
    "expected_grade",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "cache_hit",
    *ANSWER_COLUMNS,
]

#: One confidence job's table: one row per pair; ``asked`` only where the label parsed; the
#: answer's :data:`ANSWER_COLUMNS` as in a judgment table (``parse_rule``: the confidence rule).
CONFIDENCE_COLUMNS = [
    "dataset",
    "qid",
    "docid",
    "label",
    "asked",
    "confidence",
    "parsed",
    "answer",
    "latency_s",
    "cache_hit",
    *ANSWER_COLUMNS,
]


def label_tables(table: pd.DataFrame, parse_rule: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The judgment and confidence tables (:data:`JUDGMENT_COLUMNS`, :data:`CONFIDENCE_COLUMNS`) of a
    judge that gives labels and perhaps confidences but no answer text or label distribution (an
    imported judge, a committee): ``table`` has dataset, qid, docid, label (missing: unlabelled)
    and confidence (0-100, missing: none), one row per pair in the dataset's order; ``parse_rule``
    names where a present value came from."""
    has = table["label"].notna()
    conf = table["confidence"]
    j = pd.DataFrame(
        {
            "dataset": table["dataset"],
            "qid": table["qid"],
            "docid": table["docid"],
            "label": table["label"],
            "parsed": has,
            "answer": table["label"].astype("string"),
            "truncated": False,
            "parse_rule": has.map({True: parse_rule, False: None}),
        },
        columns=JUDGMENT_COLUMNS,
    )
    for col in ("p0", "p1", "p2", "p3", "label_mass", "expected_grade", "latency_s"):
        j[col] = pd.array([pd.NA] * len(j), dtype="Float64")
    j["label"] = j["label"].astype("Int64")
    c = pd.DataFrame(
        {
            "dataset": table["dataset"],
            "qid": table["qid"],
            "docid": table["docid"],
            "label": table["label"],
            "asked": has,
            "confidence": conf,
            "parsed": conf.notna(),
            "answer": conf.astype("string"),
            "truncated": False,
            "parse_rule": conf.notna().map({True: parse_rule, False: None}),
        },
        columns=CONFIDENCE_COLUMNS,
    )
    c["label"] = c["label"].astype("Int64")
    c["confidence"] = c["confidence"].astype("Float64")
    return j, c


#: Id columns of the metrics tables, read as strings.
ID_COLUMNS = ("dataset", "model", "template", "persona")


def read_tsv(
    path: str | Path, dtype: Any = None, *, missing: Sequence[str] | Mapping[str, Sequence[str]] = ("",)
) -> pd.DataFrame:
    """A tab-separated table as the workflow writes them (:func:`write_tsv`): ``dtype`` as pandas
    takes it (one type, or column -> type), and missing only the cells in ``missing`` (a blank
    cell; a mapping: per column; empty: none) - never the text ``NA``, ``null`` or ``nan``,
    which are ids, labels or answers here."""
    return pd.read_csv(path, sep="\t", dtype=dtype, keep_default_na=False, na_values=missing)


def write_tsv(df: pd.DataFrame, path: str | Path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, sep="\t", index=False)


def write_dataset(table: pd.DataFrame, path: str | Path) -> None:
    write_tsv(table[DATASET_COLUMNS], path)


def read_dataset(path: str | Path) -> pd.DataFrame:
    return read_tsv(
        path,
        {"qid": str, "docid": str, "query": str, "passage": str, "dataset": str, "grade": "Int64"},
        missing=(),
    )


def read_judgments(path: str | Path) -> pd.DataFrame:
    df = read_tsv(path, {"qid": str, "docid": str, "dataset": str, "answer": str})
    df["label"] = df["label"].astype("Int64")
    return df


def read_confidence(path: str | Path) -> pd.DataFrame:
    df = read_judgments(path)
    df["confidence"] = df["confidence"].astype("Float64")
    return df


def read_ids_table(path: str | Path) -> pd.DataFrame:
    """A metrics-like table whose id columns (dataset, model, template, persona) are strings."""
    return pd.read_csv(path, sep="\t", dtype={k: str for k in ID_COLUMNS})


def concat_ids_tables(paths: Sequence[str | Path]) -> pd.DataFrame:
    return pd.concat([read_ids_table(p) for p in paths], ignore_index=True)


def labels_with_confidence(judgments: pd.DataFrame, confidence: pd.DataFrame) -> pd.DataFrame:
    """qid, docid, label and confidence of one judge (the confidence missing where not asked)."""
    return judgments[["qid", "docid", "label"]].merge(
        confidence[["qid", "docid", "confidence"]], on=["qid", "docid"], how="left", validate="one_to_one"
    )


def read_labelled(judgments: str | Path, confidence: str | Path) -> pd.DataFrame:
    """:func:`labels_with_confidence` of a judgment and a confidence file."""
    return labels_with_confidence(read_judgments(judgments), read_confidence(confidence))
