"""The study's numbers: each file's agreement with the human labels, the spread of a judge's
agreement over prompts, and human-written against LLM-written prompts.

* :func:`pointwise_row` - coverage, Cohen's kappa, Krippendorff's alpha and (graded) the quadratic
  weighted kappa of one binary or graded file. The binary reference is the human grade binarised
  by TREC's rule (grade >= 2 relevant; the source's readme states no rule); graded labels are
  compared with the grade 0-3 itself, alpha at the ordinal level.
* :func:`pairwise_row` - the shares of a pairwise file's outcomes (agree / disagree / tie with
  the human order), over the pairs it holds, and its coverage of the dataset's pair list (a live
  judge's pairwise table: :func:`judgelab.studies.sensitivity.pairwise.pairwise_row`).
* :func:`spread` - per judge x type x dataset: min, max, mean, SD (n - 1) and range of the
  measure over the prompts, UMBRELA's prompt apart (its value, and how many prompts beat it).
* :func:`groups` - per judge x type x dataset: the mean of the human-written and of the
  LLM-written prompts, their difference, and a percentile bootstrap interval of the difference,
  resampling prompts with replacement within each group (seeded).

Every metric is the shared core's (:mod:`judgelab.analysis.agreement`,
:mod:`judgelab.analysis.bootstrap`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judgelab.analysis.agreement import cohen_kappa, krippendorff_alpha
from judgelab.analysis.bootstrap import percentile_interval, resample_indices
from judgelab.data.labels import GRADES, binarise
from judgelab.studies.sensitivity.published import OUTCOMES, SCALES, Pairwise, Pointwise

#: the measure each type's spread and groups are over
MEASURE = {"binary": "kappa", "graded": "kappa", "pairwise": "agree"}
#: a spread or a comparison of groups is over the prompts of one judge (published or live), type
#: and dataset
KEYS = ["source", "model", "type", "dataset"]

#: the agreement table's counts (whole numbers)
COUNT_COLUMNS = ("lines", "dropped", "repeats", "n")

AGREEMENT_COLUMNS = [
    "source",
    "model",
    "type",
    "dataset",
    "prompt",
    "group",
    "lines",
    "dropped",
    "repeats",
    "n",
    "coverage",
    "kappa",
    "weighted_kappa",
    "alpha",
    "agree",
    "disagree",
    "tie",
    # pairwise, live judges only: the ties decided by position alone (the first passage won in
    # both orders, the second won in both); the published files hold one outcome per pair
    "first_both",
    "second_both",
]


def pointwise_row(kind: str, read: Pointwise, judged: int) -> dict:
    """The agreement of one binary or graded file: ``n`` pairs with an in-scale label,
    ``coverage`` = n / ``judged`` (the pairs the judge was given, as far as its files show: the
    distinct pairs of every file read of the same model, type and dataset), kappa, alpha, and for
    graded the quadratic weighted kappa."""
    labels = read.labels
    predicted = labels["label"].astype(int).tolist()
    if kind == "binary":
        human = binarise(labels["grade"].astype(int)).tolist()
        scale: tuple[int, ...] = SCALES["binary"]
        weighted = math.nan
        level = "nominal"
    else:
        human = labels["grade"].astype(int).tolist()
        scale = GRADES
        weighted = cohen_kappa(human, predicted, scale, "quadratic")
        level = "ordinal"
    return {
        "lines": read.lines,
        "dropped": read.dropped,
        "repeats": read.repeats,
        "n": len(labels),
        "coverage": len(labels) / judged if judged else math.nan,
        "kappa": cohen_kappa(human, predicted, scale),
        "weighted_kappa": weighted,
        "alpha": krippendorff_alpha(human, predicted, level, list(scale)) if len(labels) else math.nan,  # type: ignore[arg-type]
    }


def pairwise_row(read: Pairwise, n_pairs: int) -> dict:
    """The shares of a pairwise file's outcomes (agree / disagree / tie) over its lines, and its
    coverage of the dataset's ``n_pairs`` pairs (distinct pairs judged / n_pairs)."""
    outcomes = read.outcomes["outcome"]
    n = len(outcomes)
    counts = outcomes.value_counts()
    shares = {o: (int(counts.get(o, 0)) / n if n else math.nan) for o in OUTCOMES}
    distinct = n - read.repeats
    return {
        "lines": n,
        "dropped": 0,
        "repeats": read.repeats,
        "n": n,
        "coverage": distinct / n_pairs if n_pairs else math.nan,
        **shares,
    }


SPREAD_COLUMNS = [
    "source",
    "model",
    "type",
    "dataset",
    "measure",
    "prompts",
    "min",
    "max",
    "mean",
    "sd",
    "range",
    "umbrela",
    "above_umbrela",
]


def _prompts_of(df: pd.DataFrame, measure: str) -> pd.DataFrame:
    return df[df["group"] != "umbrela"].dropna(subset=[measure])


def live_read(judged: pd.DataFrame, grades: dict[tuple[str, str], int]) -> Pointwise:
    """A live judge's table (qid, docid, label; no label: the answer did not parse) as a file
    read: its parsed labels with the human grades, every pair, unparsed answers as ``dropped``."""
    rows, pairs = [], set()
    for q, d, label in zip(judged["qid"].astype(str), judged["docid"].astype(str), judged["label"]):
        pairs.add((q, d))
        if not pd.isna(label):
            rows.append((q, d, grades[(q, d)], int(label)))
    labels = pd.DataFrame(rows, columns=["qid", "docid", "grade", "label"])
    return Pointwise(labels, frozenset(pairs), len(judged), len(judged) - len(rows), 0)


def spread(agreement: pd.DataFrame) -> pd.DataFrame:
    """Per model x type x dataset, the spread of the type's measure (:data:`MEASURE`) over the
    human- and LLM-written prompts; UMBRELA's prompt is not among them but beside them (its value,
    and how many of the prompts score above it; blank where it has no file)."""
    rows = []
    for (source, model, kind, dataset), df in agreement.groupby(KEYS, sort=True):
        measure = MEASURE[str(kind)]
        values = _prompts_of(df, measure)[measure].astype(float)
        umbrela = df.loc[df["group"] == "umbrela", measure].astype(float).dropna()
        u = float(umbrela.iloc[0]) if len(umbrela) else math.nan
        rows.append(
            {
                "source": source,
                "model": model,
                "type": kind,
                "dataset": dataset,
                "measure": measure,
                "prompts": len(values),
                "min": values.min() if len(values) else math.nan,
                "max": values.max() if len(values) else math.nan,
                "mean": values.mean() if len(values) else math.nan,
                "sd": values.std(ddof=1) if len(values) > 1 else math.nan,
                "range": values.max() - values.min() if len(values) else math.nan,
                "umbrela": u,
                "above_umbrela": int((values > u).sum()) if not math.isnan(u) else pd.NA,
            }
        )
    out = pd.DataFrame(rows, columns=SPREAD_COLUMNS)
    out["above_umbrela"] = out["above_umbrela"].astype("Int64")
    return out


GROUP_COLUMNS = [
    "source",
    "model",
    "type",
    "dataset",
    "measure",
    "human_prompts",
    "human_mean",
    "llm_prompts",
    "llm_mean",
    "difference",
    "low",
    "high",
]


def difference_interval(
    human: np.ndarray, llm: np.ndarray, resamples: int, seed: int, level: float
) -> tuple[float, float]:
    """The ``level`` percentile bootstrap interval of mean(human) - mean(llm), each group's prompts
    resampled with replacement within the group (the human group's draws from ``seed``, the LLM
    group's from ``seed + 1``)."""
    if len(human) == 0 or len(llm) == 0:
        return math.nan, math.nan
    h = human[resample_indices(len(human), resamples, seed)].mean(axis=1)
    g = llm[resample_indices(len(llm), resamples, seed + 1)].mean(axis=1)
    return percentile_interval(h - g, 1.0 - level)


def groups(agreement: pd.DataFrame, resamples: int, seed: int, level: float) -> pd.DataFrame:
    """Per model x type x dataset: human-written against LLM-written prompts (UMBRELA's in
    neither), their means, the difference (human - LLM) and its bootstrap interval."""
    rows = []
    for (source, model, kind, dataset), df in agreement.groupby(KEYS, sort=True):
        measure = MEASURE[str(kind)]
        values = _prompts_of(df, measure)
        human = values.loc[values["group"] == "human", measure].to_numpy(dtype=float)
        llm = values.loc[values["group"] == "LLM", measure].to_numpy(dtype=float)
        low, high = difference_interval(human, llm, resamples, seed, level)
        hm = float(human.mean()) if len(human) else math.nan
        lm = float(llm.mean()) if len(llm) else math.nan
        rows.append(
            {
                "source": source,
                "model": model,
                "type": kind,
                "dataset": dataset,
                "measure": measure,
                "human_prompts": len(human),
                "human_mean": hm,
                "llm_prompts": len(llm),
                "llm_mean": lm,
                "difference": hm - lm,
                "low": low,
                "high": high,
            }
        )
    return pd.DataFrame(rows, columns=GROUP_COLUMNS)
