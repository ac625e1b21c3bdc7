"""Agreement of annotators on the pairs they share, from their qrels files.

For every two annotators, on the pairs both labelled: their number, Cohen's kappa (unweighted and
quadratic), macro F1 and Krippendorff's ordinal alpha (:func:`judgelab.analysis.agreement.agreement`,
the agreement row of every study's tables); and one row for all annotators together,
Krippendorff's ordinal alpha over every pair two or more of them labelled
(:func:`judgelab.analysis.agreement.krippendorff_alpha_raters`: a pair one annotator labelled is
not pairable, so it counts for nothing)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgelab.analysis.agreement import agreement, krippendorff_alpha_raters
from judgelab.data.labels import GRADES
from judgelab.data.readers import read_qrels, unique_pairs
from judgelab.errors import InputError

COLUMNS = ["first", "second", "shared", "kappa", "qwk", "macro_f1", "alpha"]


def annotator_of(path: str | Path) -> str:
    """An annotator's name from their qrels file (``<folder>/<annotator>.qrels``)."""
    return Path(path).name.removesuffix(".qrels")


def read_labels(path: str | Path) -> dict[tuple[str, str], int]:
    """(qid, docid) -> grade of one qrels file; a pair listed twice is an error at its line."""
    lines = read_qrels(path)
    unique_pairs(lines, path)
    return {(q.qid, q.docid): q.grade for q in lines}


def annotator_agreement(paths: Sequence[str | Path], values: Sequence[int] = GRADES) -> pd.DataFrame:
    """One row per two annotators (their shared pairs and agreement) and a last row ``all``
    (Krippendorff's alpha of every annotator, ``shared``: the pairs two or more labelled)."""
    if len(paths) < 2:
        raise InputError(f"agreement needs two annotators' qrels files or more, got {len(paths)}")
    names = [annotator_of(p) for p in paths]
    if len(set(names)) != len(names):
        raise InputError(f"two qrels files of the same annotator name: {names}")
    labels = [read_labels(p) for p in paths]
    rows = []
    for (a, la), (b, lb) in itertools.combinations(zip(names, labels), 2):
        shared = [k for k in la if k in lb]
        row = agreement([la[k] for k in shared], [lb[k] for k in shared], values)
        rows.append({"first": a, "second": b, "shared": len(shared), **row})
    union = list(dict.fromkeys(k for lab in labels for k in lab))
    pairable = [k for k in union if sum(k in lab for lab in labels) >= 2]
    alpha = (
        krippendorff_alpha_raters([[lab.get(k) for k in pairable] for lab in labels], "ordinal", list(values))
        if pairable
        else math.nan
    )
    rows.append(
        {
            "first": "all",
            "second": "",
            "shared": len(pairable),
            "kappa": math.nan,
            "qwk": math.nan,
            "macro_f1": math.nan,
            "alpha": alpha,
        }
    )
    return pd.DataFrame(rows, columns=COLUMNS)
