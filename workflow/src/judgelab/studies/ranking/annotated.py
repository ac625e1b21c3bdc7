"""The systems' scores estimated from the labels people collected (``ranking.annotated``): the
prediction-powered estimate of each system's mean metric with its interval, from the topics
annotators labelled (``judgelab annotate serve``) and a judge's labels on every topic.

Per dataset x judge x measure x system (:data:`ESTIMATE_COLUMNS`):

* ``judge_only``: the mean of the judge's per-topic values over the dataset's topics (no valid
  interval: its bias is unknown);
* ``ppi``, ``ppi_low``, ``ppi_high``: PPI++ (:func:`judgelab.analysis.ppi.ppi_mean`, checked
  against ``ppi_py.ppi_mean_ci``) with y the system's values under the annotated labels on the
  annotated topics, yhat the judge's on the same topics, and the judge's on the other topics as the
  unlabelled items; ``ppi_lambda`` its power-tuning weight;
* ``human_only``, ``human_low``, ``human_high``: the annotated topics alone, the classical normal
  interval (:func:`judgelab.analysis.ppi.classical_mean`).

The target is the system's mean over the dataset's topics under the people's labels. The
intervals assume the annotated topics are a uniform random sample of the dataset's topics: true
for ``judgelab annotate choose --strategy random`` (every topic's inclusion probability n / N);
with a chosen-pairs file whose topics were chosen with unequal probabilities the plain estimate
is refused (:func:`annotated_topics`). A system's value on an annotated topic is scored under the
annotated labels alone, trec_eval's way: a pool pair no one labelled counts as non-relevant, so
with a chosen-pairs file only the topics whose every chosen pair is labelled count (a topic
stopped half-way would score too low).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from judgelab.analysis.ppi import classical_mean, ppi_mean
from judgelab.annotate.labels import MERGE_RULE, covered_topics, uniform_inclusion
from judgelab.errors import InputError

log = logging.getLogger("judgelab")

#: Columns of ``ppi_estimate.tsv``.
ESTIMATE_COLUMNS = [
    "dataset",
    "judge",
    "measure",
    "system",
    "n_annotated",
    "n_topics",
    "judge_only",
    "ppi",
    "ppi_low",
    "ppi_high",
    "ppi_lambda",
    "human_only",
    "human_low",
    "human_high",
    "alpha",
    "annotators",
    "merge",
]


def annotated_topics(
    labels: pd.DataFrame, topics: Sequence[str], dataset: str, chosen: pd.DataFrame | None = None
) -> list[str]:
    """The topics of the dataset (``topics``) whose annotated labels (``labels``,
    :func:`judgelab.annotate.labels.read_annotated`) the estimate uses, in the dataset's order:
    every topic they label; with the chosen-pairs file ``chosen`` only those whose every chosen
    pair is labelled (partly labelled ones are logged and left out). Errors name the config key:
    labels of no topic of the dataset, a labelled topic the chosen file does not list, topics
    chosen with unequal probabilities."""
    key = f"ranking.annotated.{dataset}"
    covered = covered_topics(labels, topics, f"{key}.qrels", dataset)
    if chosen is None:
        return covered
    listed = set(chosen["qid"])
    stray = [t for t in covered if t not in listed]
    if stray:
        raise InputError(
            f"the annotated labels cover topic {stray[0]}, which the chosen-pairs file does not list: "
            "the labels of another choice?",
            key=f"{key}.chosen",
        )
    labelled = set(zip(labels["qid"], labels["docid"]))
    complete = []
    for t in covered:
        pairs = chosen[chosen["qid"] == t]
        done = sum((t, d) in labelled for d in pairs["docid"])
        if done == len(pairs):
            complete.append(t)
        else:
            log.info(
                "%s: topic %s has %d of its %d chosen pairs labelled: left out", dataset, t, done, len(pairs)
            )
    if not complete:
        raise InputError(
            f"no topic of dataset {dataset} has every chosen pair labelled (finish a topic, or label on)",
            key=f"{key}.chosen",
        )
    if not uniform_inclusion(chosen, complete):
        strategy = ", ".join(sorted(set(chosen["strategy"])))
        raise InputError(
            f"the topics were chosen with unequal probabilities (strategy {strategy}): the plain "
            "prediction-powered estimate assumes a uniform sample of topics (choose them with "
            "--strategy random)",
            key=f"{key}.chosen",
        )
    return complete


def estimate_systems(human: pd.DataFrame, judge: pd.DataFrame, alpha: float, key: str) -> pd.DataFrame:
    """Per system (a column of both): judge-only, PPI++ and human-only estimates of its mean over
    the topics of ``judge`` (topics x systems, every topic of the dataset the judge scores) from
    ``human`` (annotated topics x systems). ``key``: the config key named when there are too few
    annotated or unannotated topics."""
    systems = list(judge.columns)
    labelled = [t for t in human.index if t in judge.index]
    rest = [t for t in judge.index if t not in set(labelled)]
    if len(labelled) < 2 or not rest:
        raise InputError(
            f"{len(labelled)} annotated topics of the {len(judge.index)} the judge scores: the estimate "
            "needs at least 2 annotated topics and one more that only the judge labels",
            key=key,
        )
    y = human.loc[labelled, systems].to_numpy(float).T  # systems x topics
    yhat = judge.loc[labelled, systems].to_numpy(float).T
    yu = judge.loc[rest, systems].to_numpy(float).T
    ppi = ppi_mean(y, yhat, yu, alpha)
    classical = classical_mean(y, alpha)
    return pd.DataFrame(
        {
            "system": systems,
            "n_annotated": len(labelled),
            "n_topics": len(judge.index),
            "judge_only": judge[systems].to_numpy(float).mean(0),
            "ppi": ppi.estimate,
            "ppi_low": ppi.low,
            "ppi_high": ppi.high,
            "ppi_lambda": ppi.lam,
            "human_only": classical.estimate,
            "human_low": classical.low,
            "human_high": classical.high,
            "alpha": alpha,
        }
    )


def human_matrix(
    scored: pd.DataFrame, measure: str, topics: Sequence[str], systems: Sequence[str]
) -> pd.DataFrame:
    """The topics x systems values of one measure from :func:`judgelab.studies.ranking.scores.score_runs`'
    rows under the annotated labels; a system without documents on a topic scores 0 there
    (trec_eval -c, as :func:`judgelab.studies.ranking.tables.topic_table`)."""
    sel = scored[(scored["measure"] == measure) & (scored["topic"].isin(list(topics)))]
    wide = sel.pivot(index="topic", columns="run", values="value")
    return wide.reindex(index=list(topics), columns=list(systems)).fillna(0.0).astype(float)


def estimate_rows(
    dataset: str,
    judge: str,
    measure: str,
    human: pd.DataFrame,
    judged: pd.DataFrame,
    alpha: float,
    annotators: Sequence[str],
) -> list[dict[str, Any]]:
    """The rows (:data:`ESTIMATE_COLUMNS`) of one dataset x judge x measure."""
    table = estimate_systems(human, judged, alpha, f"ranking.annotated.{dataset}")
    ids = {"dataset": dataset, "judge": judge, "measure": measure}
    extra = {"annotators": ", ".join(annotators), "merge": MERGE_RULE}
    return [{**ids, **row, **extra} for row in table.to_dict("records")]


def estimate_markdown(table: pd.DataFrame) -> str:
    """ppi_estimate.md: per dataset x judge x measure, each system's judge-only score, PPI
    estimate with its interval and the human-only estimate with its interval."""
    from judgelab.analysis.render import fmt, markdown_table

    parts = []
    for (dataset, judge, measure), group in table.groupby(["dataset", "judge", "measure"], sort=False):
        first = group.iloc[0]
        level = f"{1 - float(first['alpha']):.0%}"
        head = [
            "system",
            "judge-only",
            "PPI++",
            f"PPI++ {level} interval",
            "human-only",
            f"human-only {level} interval",
        ]
        rows = [
            [
                str(r.system),
                fmt(r.judge_only, 4),
                fmt(r.ppi, 4),
                f"[{fmt(r.ppi_low, 4)}, {fmt(r.ppi_high, 4)}]",
                fmt(r.human_only, 4),
                f"[{fmt(r.human_low, 4)}, {fmt(r.human_high, 4)}]",
            ]
            for r in group.itertuples()
        ]
        parts.append(
            f"## {dataset}: {judge}, {measure}\n\n"
            f"{first['n_annotated']} of {first['n_topics']} topics annotated ({first['annotators']}; "
            f"a pair's label: the {first['merge']}); the judge labels the rest.\n\n"
            + markdown_table(head, rows)
        )
    note = (
        "\nPPI++: the annotated labels on the annotated topics rectify the judge's values on every topic "
        "(ppi_py.ppi_mean_ci); human-only: the annotated topics alone; judge-only: the judge's mean over all "
        "topics, with no valid interval. The intervals assume the annotated topics are a uniform random "
        "sample of the dataset's topics.\n"
    )
    return "\n\n".join(parts) + ("\n" + note if parts else "")


def systems_of(matrix: pd.DataFrame) -> list[str]:
    return [str(c) for c in matrix.columns]


def check_same_runs(runs: Mapping[str, Any], judged: pd.DataFrame, judge: str) -> None:
    """The judge's per-topic table scores the job's runs (else the scores table is not this
    dataset's)."""
    missing = sorted(set(runs) - set(systems_of(judged)))
    if missing:
        raise ValueError(f"the scores table has no values of {judge} for the runs {missing}")
