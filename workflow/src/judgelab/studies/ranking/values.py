"""Value agreement of the ranking study: does the judge score systems as high as the reference
does, not only in the same order? Bland-Altman's bias, 95% limits of agreement and
proportional-bias slope (:func:`judgelab.analysis.blandaltman.bland_altman`) of the judge's score
against the reference's, per dataset x judge x reference x measure, at two levels:

* ``system``: one point per run, its mean over the topics both qrels score (the systems of
  :func:`judgelab.studies.ranking.tables.compare`);
* ``response``: one point per run x topic (the per-topic scores; a run without documents for a
  topic scores 0 there, trec_eval -c).

Values are read on the measure's own range (:func:`judgelab.analysis.blandaltman.measure_range`):
``range_low``, ``range_high`` (0 and 1 for nDCG, P, AP, RBP, R, RR, ...), and ``range_known``
False for a measure outside the table (its values are never rescaled; the figure's axes then
follow the data and its title says so).

``bland_altman.tsv`` has :data:`BLAND_ALTMAN_COLUMNS`; the system level's bias and limits are also
in ``correlations.tsv`` (:data:`SYSTEM_COLUMNS`), the leaderboard and the robustness table.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from judgelab.analysis.blandaltman import BLAND_ALTMAN_KEYS, bland_altman, measure_range
from judgelab.data.tables import read_tsv
from judgelab.studies.ranking.correlation import align
from judgelab.studies.ranking.tables import VALUE_COLUMNS, topic_table

#: The two levels of the points: one per run (its mean), one per run x topic.
LEVELS = ("system", "response")

#: Columns of ``bland_altman.tsv``.
BLAND_ALTMAN_COLUMNS = [
    "dataset",
    "judge",
    "reference",
    "measure",
    "level",
    *BLAND_ALTMAN_KEYS,
    "range_low",
    "range_high",
    "range_known",
]

#: The system level's columns in ``correlations.tsv`` (and the leaderboard, the robustness table):
#: its bias and 95% limits of agreement.
SYSTEM_COLUMNS = VALUE_COLUMNS


def paired_values(scores: pd.DataFrame, reference: str, judge: str, measure: str) -> dict[str, pd.DataFrame]:
    """Per level, the (reference, judge) value pairs of one measure: ``system`` indexed by run,
    ``response`` by (topic, run); columns ``reference`` and ``judge``. Empty frames when the two
    qrels share no topic (the judge labels nothing the reference scores)."""
    ref, jud = topic_table(scores, reference, measure), topic_table(scores, judge, measure)
    empty = pd.DataFrame(columns=["reference", "judge"], dtype=float)
    if not len(set(ref.index) & set(jud.index)):
        return {"system": empty, "response": empty}
    ref, jud = align(ref, jud)
    system = pd.DataFrame({"reference": ref.mean(axis=0), "judge": jud.mean(axis=0)})
    response = pd.DataFrame({"reference": ref.stack(), "judge": jud.stack()})
    return {"system": system, "response": response}


def range_cells(measure: str) -> dict[str, Any]:
    """``range_low``, ``range_high``, ``range_known`` of a measure (NaN, NaN, False outside the
    table of ranges)."""
    known = measure_range(measure)
    low, high = known if known else (math.nan, math.nan)
    return {"range_low": low, "range_high": high, "range_known": known is not None}


def value_agreement(scores: pd.DataFrame, reference: str, judge: str, measure: str) -> list[dict[str, Any]]:
    """The rows of ``bland_altman.tsv`` (without the dataset) of one comparison and measure, one
    per level of :data:`LEVELS`: the judge's values against the reference's."""
    pairs = paired_values(scores, reference, judge, measure)
    rows = []
    for level in LEVELS:
        p = pairs[level]
        stats = bland_altman(p["judge"].to_numpy(float), p["reference"].to_numpy(float))
        rows.append(
            {"judge": judge, "reference": reference, "measure": measure, "level": level}
            | stats
            | range_cells(measure)
        )
    return rows


def system_cells(rows: list[dict[str, Any]]) -> dict[str, float]:
    """:data:`SYSTEM_COLUMNS` of :func:`value_agreement`'s rows (its ``system`` row)."""
    row = next(r for r in rows if r["level"] == "system")
    return {"ba_bias": row["bias"], "ba_loa_low": row["loa_low"], "ba_loa_high": row["loa_high"]}


def read_bland_altman(path) -> pd.DataFrame:
    """A ``bland_altman.tsv`` (ids as strings)."""
    table = read_tsv(path, {"dataset": str, "judge": str, "reference": str, "measure": str, "level": str})
    table["range_known"] = table["range_known"].map(lambda v: str(v).strip().lower() == "true")
    return table


def bland_altman_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows of :func:`value_agreement` (with ``dataset``) as the table, its columns in order."""
    table = pd.DataFrame(rows, columns=BLAND_ALTMAN_COLUMNS)
    table["n"] = table["n"].astype(int) if len(table) else table["n"]
    return table
