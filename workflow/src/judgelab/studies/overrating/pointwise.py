"""Pointwise judging (binary 0/1 or graded 0-3) and its diagnostics: overrate / underrate shares,
mean bias, kappa, token confidence by TP / FP / TN / FN and the human -> LLM transition matrix.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.analysis.agreement import cohen_kappa, krippendorff_alpha, transitions
from judgelab.data.imported import JudgeFile, confidence_as_probability, read_judge_file
from judgelab.data.labels import GRADES, SCALES, binarise
from judgelab.data.tables import missing_split
from judgelab.errors import InputError
from judgelab.llm.backends.base import Request
from judgelab.llm.client import CachedClient
from judgelab.llm.judge import Judge
from judgelab.llm.readings import Prompt, pointwise_columns, pointwise_requests, run_pointwise, typed_readings
from judgelab.studies.overrating.prompts import effective_scale

log = logging.getLogger(__name__)


OUTCOMES = ("TP", "FP", "TN", "FN")


def pointwise_judge_requests(pairs: pd.DataFrame, judge: Judge) -> list[Request]:
    """:func:`pointwise_requests` of a pointwise judge (its template, labels and answer bound):
    the requests its job sends."""
    return pointwise_requests(pairs, Prompt.of(judge), max_tokens=judge.max_tokens)


def run_pointwise_judge(
    pairs: pd.DataFrame, judge: Judge, client: CachedClient, *, progress: bool = True, desc: str = "pointwise"
) -> pd.DataFrame:
    """:func:`run_pointwise` of a pointwise judge (its template, labels and answer bound)."""
    return run_pointwise(
        pairs, Prompt.of(judge), client, max_tokens=judge.max_tokens, progress=progress, desc=desc
    )


def imported_pointwise(
    pairs: pd.DataFrame,
    path: str | Path | JudgeFile,
    scale: str | None,
    confidence_scale: str | None = None,
) -> pd.DataFrame:
    """The pointwise judgments table of an imported judge file, or of one already read
    (:func:`judgelab.data.imported.read_judge`) - no LLM call: labels on the judge's declared ``scale``
    (None: not declared, read as graded unless every label is 0/1, which fails; see
    :mod:`judgelab.data.imported`), the file's confidences as probabilities 0-1, no label
    distribution (its one confidence is both ``confidence`` and ``confidence_renorm``: there is
    no distribution to renormalise over). Pairs of the selection the file does not label are
    missing."""
    labels = SCALES[effective_scale(scale)]
    read = (
        path.labels
        if isinstance(path, JudgeFile)
        else read_judge_file(path, pairs, scale=scale, confidence_scale=confidence_scale)
    )
    merged = pairs[["dataset", "qid", "docid"]].merge(
        read, on=["qid", "docid"], how="left", validate="one_to_one"
    )
    confidence = confidence_as_probability(merged["confidence"], confidence_scale)
    out = pd.DataFrame(
        {
            "dataset": merged["dataset"],
            "qid": merged["qid"],
            "docid": merged["docid"],
            "label": merged["label"],
            "parsed": merged["label"].notna(),
            "answer": merged["label"].astype("string"),
            "confidence": confidence,
            "confidence_renorm": confidence,
        },
        columns=pointwise_columns(labels),
    )
    return typed_readings(out, labels)


def _rates(human: np.ndarray, llm: np.ndarray, labels: Sequence[int]) -> dict[str, float]:
    n = len(human)
    if not n:
        return {
            "overrate_pct": math.nan,
            "underrate_pct": math.nan,
            "mean_bias": math.nan,
            "kappa": math.nan,
            "alpha": math.nan,
        }
    return {
        "overrate_pct": 100.0 * float((llm > human).mean()),
        "underrate_pct": 100.0 * float((llm < human).mean()),
        "mean_bias": float((llm - human).mean()),
        "kappa": cohen_kappa(list(human), list(llm), list(labels)),
        "alpha": krippendorff_alpha(list(human), list(llm), "ordinal", list(labels)),
    }


def confusion_outcome(human_bin: np.ndarray, llm_bin: np.ndarray) -> np.ndarray:
    """TP / FP / TN / FN of binarised labels (positive = relevant)."""
    return np.where(llm_bin == 1, np.where(human_bin == 1, "TP", "FP"), np.where(human_bin == 1, "FN", "TN"))


def pointwise_metrics(pairs: pd.DataFrame, scale: str) -> dict[str, float]:
    """Metrics of one pointwise run. ``pairs``: one row per judged pair with ``grade`` (human
    0-3), ``label`` (LLM label on ``scale``, nullable: missing) and ``confidence`` (token
    confidence 0-1 in the full distribution, nullable), optionally ``confidence_renorm`` (the
    renormalised one) and ``truncated`` (the missing labels then split into ``n_truncated``, cut
    by the answer bound, and ``n_unparsable``). Confidence metrics: ``conf_TP``.. and ``mean_confidence`` of
    ``confidence``, ``conf_renorm_TP``.. and ``mean_confidence_renorm`` of ``confidence_renorm``
    (NaN without the column)."""
    if scale not in SCALES:
        raise InputError(f"unknown scale {scale!r} (binary or graded)", key="overrating.pointwise.scales")
    n = len(pairs)
    parsed = pairs[pairs["label"].notna()]
    human = parsed["grade"].astype(int).to_numpy()
    llm = parsed["label"].astype(int).to_numpy()
    if scale == "binary" and len(llm) and llm.max() > 1:
        raise ValueError("binary run with labels above 1")
    out: dict[str, float] = {
        "n_pairs": n,
        "n_parsed": len(parsed),
        "coverage": len(parsed) / n if n else math.nan,
        **missing_split(pairs),
    }
    human_native = binarise(human) if scale == "binary" else human
    out.update(_rates(human_native, llm, [int(x) for x in SCALES[scale]]))
    hb, lb = binarise(human), (llm if scale == "binary" else binarise(llm))
    out.update({f"bin_{k}": v for k, v in _rates(hb, lb, [0, 1]).items()})
    outcome = confusion_outcome(hb, lb)
    for o in OUTCOMES:
        out[f"n_{o}"] = int((outcome == o).sum())
    for column, suffix in (("confidence", ""), ("confidence_renorm", "_renorm")):
        conf = parsed[column].astype(float).to_numpy() if column in parsed else np.full(len(parsed), np.nan)
        known = np.isfinite(conf)
        out[f"n_confidence{suffix}"] = int(known.sum())
        out[f"mean_confidence{suffix}"] = float(conf[known].mean()) if known.any() else math.nan
        for o in OUTCOMES:
            sel = (outcome == o) & known
            out[f"conf{suffix}_{o}"] = float(conf[sel].mean()) if sel.any() else math.nan
    return out


def transition_matrix(pairs: pd.DataFrame, scale: str) -> pd.DataFrame:
    """Tidy human -> LLM transition matrix: one row per human grade 0-3 and LLM label of the
    scale, with ``n`` and ``share`` (of the human grade's parsed pairs; NaN without any), and
    ``n_missing`` (that grade's pairs whose answer is missing)."""
    labels = [int(x) for x in SCALES[scale]]
    counts, missing = transitions(pairs["grade"].astype(int), pairs["label"], GRADES, labels)
    rows = []
    for i, g in enumerate(GRADES):
        parsed = int(counts[i].sum())
        for j, lab in enumerate(labels):
            k = int(counts[i, j])
            rows.append(
                {
                    "human": g,
                    "llm": lab,
                    "n": k,
                    "share": k / parsed if parsed else math.nan,
                    "n_missing": int(missing[i]),
                }
            )
    return pd.DataFrame(rows)
