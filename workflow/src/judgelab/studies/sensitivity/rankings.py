"""Beyond the paper: the spread over prompts carried to system rankings.

Each prompt's binary or graded labels of a dataset are qrels for the dataset's runs (a pair the
prompt did not label, or labelled out of scale, is unjudged: non-relevant, trec_eval's rule);
every run is scored under them and under the human qrels with the shared core's scoring
(:func:`judgelab.analysis.scores.topic_scores`, the ranking study's ir-measures conventions), and
the order of the systems by their mean over the topics both score is compared by Kendall's tau-b
(:func:`judgelab.analysis.rankcorr.align`, :func:`~judgelab.analysis.rankcorr.kendall_tau`):

* ``tau`` - against the order under the human qrels restricted to the same pairs (the pairs the
  prompt labelled): how far the prompt's labels move the order where the human labels are known;
* ``tau_full`` - against the order under the full human qrels, beside it;
* ``tau_sample`` - the restricted human qrels' order against the full one: what the sample of
  pairs alone moves (GPT-4o judged 1,854 of DL21's 10,828 pairs).

The reference of a binary prompt is the human grade binarised as the agreement table binarises it
(:func:`judgelab.data.labels.binarise`, grade >= 2 relevant), of a graded prompt the grade 0-3.
The committee over prompts (:data:`COMMITTEE`) is one more judge per model x type x dataset: the
majority of its human- and LLM-written prompts' labels per pair (UMBRELA's apart, as in the
spread; the live project prompts where there are no others), ties to the lower label, a pair
labelled when more than half of the prompts labelled it - the shared core's committee
(:func:`judgelab.analysis.committee.committee_labels`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from judgelab.analysis.committee import committee_labels
from judgelab.analysis.rankcorr import align, kendall_tau
from judgelab.analysis.scores import topic_scores
from judgelab.data.labels import binarise

#: the committee's prompt and group in the rankings table
COMMITTEE = "committee"

#: a cell of labels: (source, model, type, dataset, prompt, group)
Cell = tuple[str, str, str, str, str, str]

RANKING_COLUMNS = [
    "source",
    "model",
    "type",
    "dataset",
    "prompt",
    "group",
    "measure",
    "pairs",
    "n_systems",
    "n_topics",
    "tau",
    "tau_full",
    "tau_sample",
]

RANKING_SPREAD_COLUMNS = [
    "source",
    "model",
    "type",
    "dataset",
    "measure",
    "prompts",
    "tau_min",
    "tau_max",
    "tau_range",
    "tau_full_min",
    "tau_full_max",
    "tau_full_range",
    "umbrela_tau",
    "umbrela_tau_full",
    "committee_tau",
    "committee_tau_full",
]


def human_qrels(labels: pd.DataFrame, kind: str) -> pd.DataFrame:
    """The human qrels (qid, docid, relevance) of a table with the columns qid, docid, grade: the
    grade itself for ``graded``, binarised (grade >= 2) for ``binary``."""
    grade = labels["grade"].astype(int)
    relevance = binarise(grade) if kind == "binary" else grade.to_numpy()
    return pd.DataFrame(
        {"qid": labels["qid"].astype(str), "docid": labels["docid"].astype(str), "relevance": relevance}
    )


def judge_qrels(labels: pd.DataFrame) -> pd.DataFrame:
    """A prompt's qrels: its labels (qid, docid, label) as the relevance."""
    return pd.DataFrame(
        {
            "qid": labels["qid"].astype(str),
            "docid": labels["docid"].astype(str),
            "relevance": labels["label"].astype(int),
        }
    )


def committees(
    cells: Mapping[Cell, pd.DataFrame], grades: Mapping[str, Mapping[tuple[str, str], int]]
) -> dict:
    """Per (source, model, type, dataset) with at least two member prompts, the committee's cell
    and labels (qid, docid, grade, label; its labelled pairs only). Members: the cell's human- and
    LLM-written prompts, or, where it has none, its prompts other than UMBRELA's."""
    by_judge: dict[tuple[str, str, str, str], dict[str, tuple[str, pd.DataFrame]]] = {}
    for (source, model, kind, dataset, prompt, group), labels in cells.items():
        by_judge.setdefault((source, model, kind, dataset), {})[prompt] = (group, labels)
    out = {}
    for (source, model, kind, dataset), prompts in by_judge.items():
        written = {p: df for p, (g, df) in prompts.items() if g in ("human", "LLM")}
        members = written or {p: df for p, (g, df) in prompts.items() if g != "umbrela"}
        if len(members) < 2:
            continue
        table = committee_labels({p: df[["qid", "docid", "label"]] for p, df in members.items()}, "majority")
        kept = table[table["label"].notna()]
        human = grades[dataset]
        labels = pd.DataFrame(
            {
                "qid": kept["qid"].astype(str).to_numpy(),
                "docid": kept["docid"].astype(str).to_numpy(),
                "grade": [human[(q, d)] for q, d in zip(kept["qid"].astype(str), kept["docid"].astype(str))],
                "label": kept["label"].astype(int).to_numpy(),
            }
        )
        out[(source, model, kind, dataset, COMMITTEE, COMMITTEE)] = labels
    return out


def _tau(reference: pd.DataFrame, judged: pd.DataFrame, measure: str) -> tuple[float, int, int]:
    """Kendall's tau-b of the systems' means under ``judged`` against ``reference`` (per-topic
    tables of several measures), over the topics both score; with the systems and topics."""
    ref = reference[reference["measure"] == measure]
    got = judged[judged["measure"] == measure]
    if ref.empty or got.empty:
        return math.nan, 0, 0
    h, j = align(ref, got)
    return kendall_tau(h.mean(axis=0).to_numpy(), j.mean(axis=0).to_numpy()), h.shape[1], h.shape[0]


def ranking_rows(
    cells: Mapping[Cell, pd.DataFrame],
    full: Mapping[str, pd.DataFrame],
    runs: Mapping[str, Mapping[str, dict]],
    measures: Sequence[str],
) -> pd.DataFrame:
    """One row per cell x measure (:data:`RANKING_COLUMNS`). ``cells``: labels (qid, docid, grade,
    label) per cell, the committees among them; ``full``: the human table (qid, docid, grade) of
    each dataset; ``runs``: each dataset's runs prepared
    (:func:`judgelab.analysis.scores.prepared_runs`); ``measures`` by ir-measures name."""
    full_scores: dict[tuple[str, str], pd.DataFrame] = {}
    sample_scores: dict[tuple[str, str, frozenset], pd.DataFrame] = {}
    rows = []
    for cell, labels in cells.items():
        source, model, kind, dataset, prompt, group = cell
        prepared = runs[dataset]
        if (dataset, kind) not in full_scores:
            full_scores[(dataset, kind)] = topic_scores(prepared, human_qrels(full[dataset], kind), measures)
        pairs = frozenset(zip(labels["qid"].astype(str), labels["docid"].astype(str)))
        if (dataset, kind, pairs) not in sample_scores:
            sample_scores[(dataset, kind, pairs)] = topic_scores(
                prepared, human_qrels(labels, kind), measures
            )
        judged = topic_scores(prepared, judge_qrels(labels), measures)
        reference, sample = full_scores[(dataset, kind)], sample_scores[(dataset, kind, pairs)]
        for measure in measures:
            tau, n_systems, n_topics = _tau(sample, judged, measure)
            tau_full, _, _ = _tau(reference, judged, measure)
            tau_sample, _, _ = _tau(reference, sample, measure)
            rows.append(
                {
                    "source": source,
                    "model": model,
                    "type": kind,
                    "dataset": dataset,
                    "prompt": prompt,
                    "group": group,
                    "measure": measure,
                    "pairs": len(labels),
                    "n_systems": n_systems,
                    "n_topics": n_topics,
                    "tau": tau,
                    "tau_full": tau_full,
                    "tau_sample": tau_sample,
                }
            )
    return pd.DataFrame(rows, columns=RANKING_COLUMNS)


def ranking_spread(rows: pd.DataFrame) -> pd.DataFrame:
    """Per source x model x type x dataset x measure: the range of ``tau`` and ``tau_full`` over the
    human- and LLM-written prompts (where a judge has none, its prompts other than UMBRELA's),
    UMBRELA's and the committee's beside them (:data:`RANKING_SPREAD_COLUMNS`)."""
    out = []
    keys = ["source", "model", "type", "dataset", "measure"]
    for key, df in rows.groupby(keys, sort=True):
        written = df[df["group"].isin(["human", "LLM"])]
        prompts = written if len(written) else df[~df["group"].isin(["umbrela", COMMITTEE])]

        def one(group: str, column: str, df: pd.DataFrame = df) -> float:
            v = df.loc[df["group"] == group, column].astype(float)
            return float(v.iloc[0]) if len(v) else math.nan

        row = dict(zip(keys, key, strict=True))
        row["prompts"] = len(prompts)
        for column in ("tau", "tau_full"):
            v = prompts[column].astype(float).dropna()
            row[f"{column}_min"] = v.min() if len(v) else math.nan
            row[f"{column}_max"] = v.max() if len(v) else math.nan
            row[f"{column}_range"] = v.max() - v.min() if len(v) else math.nan
            row[f"umbrela_{column}"] = one("umbrela", column)
            row[f"committee_{column}"] = one(COMMITTEE, column)
        out.append(row)
    return pd.DataFrame(out, columns=RANKING_SPREAD_COLUMNS)
