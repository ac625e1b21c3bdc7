"""How much of a judge's distance from people is noise: each repeat's system ranking.

A live judge asked k times (``peras.repeats``, :mod:`judgelab.project.repeats`) gives k label
tables of the pool; each is a qrels (:func:`judgelab.studies.ranking.scores.qrels_from_labels`:
an unlabelled pair left out), every run of the dataset is scored under it, and its system order
is compared with the judge's reference order (the qrels of its comparison in correlations.tsv:
``human``, or ``human+<judge>`` with ``unjudged: fill``) by Kendall's tau-b, as correlations.tsv
compares the judge's own labels (:func:`judgelab.studies.ranking.correlation.kendall_tau` of the
systems' means over the topics both score). The majority of the k labels (the committee rule
``majority``: :func:`judgelab.analysis.consistency.majority`) is one more qrels.

Per judge x reference x measure (:data:`REPEAT_TAU_COLUMNS`): ``kendall_tau`` of the judge's own
labels (correlations.tsv's), ``tau_<s>`` of each repeat s = 0..k-1, their mean, SD (n - 1), min
and max, and ``majority_tau``. A spread as wide as the judge's distance from the reference
(1 - tau) says the distance is mostly the judge's noise; a narrow spread far below 1, that the
judge disagrees with people consistently.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgelab.studies.ranking.correlation import align, kendall_tau
from judgelab.studies.ranking.tables import topic_table

#: The name of the majority's qrels among a judge's repeats (:func:`repeat_qrels`).
MAJORITY = "majority"


def repeat_columns(k: int) -> list[str]:
    """The columns of a repeats table with k repeats."""
    return [
        "dataset",
        "judge",
        "reference",
        "measure",
        "n_systems",
        "repeats",
        "kendall_tau",
        *(f"tau_{s}" for s in range(k)),
        "tau_mean",
        "tau_sd",
        "tau_min",
        "tau_max",
        "majority_tau",
    ]


def repeat_qrels(wide: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each repeat's labels and their majority as label tables (qid, docid, label; a missing label
    left out of the qrels when scored), by name: the sample index as a string, then
    :data:`MAJORITY`. ``wide``: one row per pair, one label column per sample
    (:func:`judgelab.analysis.consistency.wide_labels`)."""
    from judgelab.analysis.consistency import majority

    out = {str(s): wide[s].rename("label").reset_index()[["qid", "docid", "label"]] for s in wide.columns}
    out[MAJORITY] = majority(wide)[["qid", "docid", "label"]]
    return out


def system_tau(scores: pd.DataFrame, reference: str, qrels: str, measure: str) -> float:
    """Kendall's tau-b of the systems' means under ``qrels`` against their means under
    ``reference`` on ``measure`` (``scores``: rows run, qrels, measure, topic, value), over the
    topics both score (as :func:`judgelab.studies.ranking.tables.compare`); NaN with no common
    topic."""
    ref = topic_table(scores, reference, measure)
    jud = topic_table(scores, qrels, measure)
    if not set(ref.index) & set(jud.index):
        return math.nan
    human, judge = align(ref, jud)
    return kendall_tau(human.mean(axis=0).to_numpy(), judge.mean(axis=0).to_numpy())


def spread(taus: Sequence[float]) -> dict[str, float]:
    """Mean, SD (n - 1; NaN below 2), min and max of the defined taus (NaN where none is)."""
    t = np.array([x for x in taus if not math.isnan(x)], dtype=float)
    if not len(t):
        return dict.fromkeys(("tau_mean", "tau_sd", "tau_min", "tau_max"), math.nan)
    return {
        "tau_mean": float(t.mean()),
        "tau_sd": float(t.std(ddof=1)) if len(t) > 1 else math.nan,
        "tau_min": float(t.min()),
        "tau_max": float(t.max()),
    }


def repeat_rows(
    scores: pd.DataFrame,
    repeat_scores: Mapping[str, pd.DataFrame],
    references: Sequence[tuple[str, str]],
    measures: Sequence[str],
    k: int,
) -> list[dict]:
    """One row per judge x reference x measure (:func:`repeat_columns` without ``dataset``).
    ``scores``: the dataset's scores table (the references' and the judges' own qrels);
    ``repeat_scores``: per judge, its runs scored under each of :func:`repeat_qrels` (the
    ``qrels`` column naming the repeat: ``0``..``k-1``, ``majority``)."""
    rows = []
    for judge, reference in references:
        own = scores[scores["qrels"].isin([judge, reference])]
        ref_rows = scores[scores["qrels"] == reference]
        mine = pd.concat([ref_rows, repeat_scores[judge]], ignore_index=True)
        for measure in measures:
            taus = [system_tau(mine, reference, str(s), measure) for s in range(k)]
            n = int(ref_rows.loc[ref_rows["measure"] == measure, "run"].nunique())
            rows.append(
                {
                    "judge": judge,
                    "reference": reference,
                    "measure": measure,
                    "n_systems": n,
                    "repeats": k,
                    "kendall_tau": system_tau(own, reference, judge, measure),
                    **{f"tau_{s}": t for s, t in enumerate(taus)},
                    **spread(taus),
                    "majority_tau": system_tau(mine, reference, MAJORITY, measure),
                }
            )
    return rows
