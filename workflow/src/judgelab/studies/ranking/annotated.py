"""The systems' scores estimated from the labels people collected (``ranking.annotated``): the
prediction-powered estimate of each system's mean metric with its interval, from the topics
annotators labelled (``judgelab annotate serve``) and a judge's labels on every topic.

Per dataset x judge x measure x system (:data:`ESTIMATE_COLUMNS`):

* ``judge_only``: the mean of the judge's per-topic values over the dataset's topics (no valid
  interval: its bias is unknown);
* ``ppi``, ``ppi_low``, ``ppi_high``: with y the system's values under the annotated labels on the
  annotated topics, yhat the judge's on the same topics and the judge's on every topic, the
  prediction-powered estimate named in ``estimator`` - ``ppi``: PPI++
  (:func:`judgelab.analysis.ppi.ppi_mean`, checked against ``ppi_py.ppi_mean_ci``, the judge's
  values on the other topics as the unlabelled items); ``weighted_ppi``: the inverse-probability
  weighted estimate (:func:`judgelab.analysis.ppi.weighted_ppi_mean`); ``ppi_lambda`` its weight;
* ``human_only``, ``human_low``, ``human_high``: the annotated topics alone - with ``ppi`` the
  classical normal interval (:func:`judgelab.analysis.ppi.classical_mean`), with ``weighted_ppi``
  the Horvitz-Thompson estimate (``weighted_ppi_mean`` with lambda 0);
* ``strategy``: the chosen-pairs file's strategy (``none`` without one).

The target is the system's mean over the dataset's topics under the people's labels. A system's
value on an annotated topic is scored under the annotated labels alone, trec_eval's way: a pool
pair no one labelled counts as non-relevant, so with a chosen-pairs file only the topics whose
every chosen pair is labelled count (a topic stopped half-way would score too low).

**Which estimator** (:func:`topic_sample`). Without a chosen-pairs file, or with one whose topics
all have the same inclusion probability (``judgelab annotate choose --strategy random``: n / N
each), the annotated topics are taken as a uniform random sample of the dataset's topics and the
plain PPI++ applies (``estimator`` ``ppi``). With one whose topics were chosen with unequal
probabilities (``stratified``, ``active``), each annotated topic is weighted by 1 / its inclusion
probability (``weighted_ppi``); it needs at least 3 annotated topics (on 2 its weight lambda,
fitted to them, leaves no residual: an interval of width 0).

**The inclusion probability of an annotated topic** is not the file's ``topic_inclusion`` alone:
a topic counts only once every one of its chosen pairs is labelled, so it is in the estimate when
it was chosen *and* finished. The estimate takes m of the n topics the file lists finished and
uses pi_t x m / n for each finished topic t (summing to m, as the finished topics number m). That
is exact when **which chosen topics get finished does not depend on their values** (the systems'
scores under the people's or the judge's labels): e.g. an annotator who works through the file's
topics in its order - a random permutation (``choose`` lists them so) - and stops after m, m not
depending on what they saw; then the finished topics are a uniform subsample of the chosen ones
and each is finished with probability m / n given the choice. An annotator who skips the topics
that are hard to judge, or whose stopping depends on the labels, breaks it, and nothing here can
detect that; the same assumption already underlies the plain estimate with a half-finished file.
The probabilities are those of ``choose``'s candidates: the estimate further assumes every topic
of the dataset was one (no topic excluded, each with a known passage), since a topic that could
not be chosen has no weight to stand for it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from judgelab.analysis.ppi import classical_mean, ppi_mean, weighted_ppi_mean
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
    "estimator",
    "strategy",
    "annotators",
    "merge",
]

#: ``strategy`` without a chosen-pairs file.
NO_CHOICE = "none"


@dataclass(frozen=True)
class TopicSample:
    """How the annotated topics were sampled: the chosen-pairs file's ``strategy`` (:data:`NO_CHOICE`
    without one) and, for topics chosen with unequal probabilities, each annotated topic's
    inclusion probability in the estimate (None: a uniform sample, the plain estimate)."""

    strategy: str
    inclusion: pd.Series | None = None

    @property
    def estimator(self) -> str:
        return "ppi" if self.inclusion is None else "weighted_ppi"


def annotated_topics(
    labels: pd.DataFrame, topics: Sequence[str], dataset: str, chosen: pd.DataFrame | None = None
) -> list[str]:
    """The topics of the dataset (``topics``) whose annotated labels (``labels``,
    :func:`judgelab.annotate.labels.read_annotated`) the estimate uses, in the dataset's order:
    every topic they label; with the chosen-pairs file ``chosen`` only those whose every chosen
    pair is labelled (partly labelled ones are logged and left out). Errors name the config key:
    labels of no topic of the dataset, a labelled topic the chosen file does not list, no topic
    finished. Which estimate the topics take: :func:`topic_sample`."""
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
    return complete


def topic_sample(chosen: pd.DataFrame | None, used: Sequence[str], dataset: str) -> TopicSample:
    """The sample of the annotated topics ``used`` (:func:`annotated_topics`) for the chosen-pairs
    file ``chosen`` (None: none): equal inclusion probabilities over the file's topics, or no file,
    give the plain estimate; unequal ones each used topic's ``topic_inclusion`` x m / n, m the
    topics used of the n the file lists (the module's assumption: which chosen topics get finished
    does not depend on their values). A topic whose rows give different probabilities is an error
    naming the config key."""
    if chosen is None:
        return TopicSample(NO_CHOICE)
    strategy = ", ".join(sorted(set(chosen["strategy"].astype(str))))
    spread = chosen.groupby("qid")["topic_inclusion"].agg(lambda p: p.max() - p.min())
    if (spread > 1e-12).any():
        raise InputError(
            f"topic {spread[spread > 1e-12].index[0]} has different topic_inclusion values in the "
            "chosen-pairs file (one probability per topic)",
            key=f"ranking.annotated.{dataset}.chosen",
        )
    listed = chosen.drop_duplicates("qid").set_index("qid")["topic_inclusion"].astype(float)
    if uniform_inclusion(chosen, list(listed.index)):
        return TopicSample(strategy)
    inclusion = listed.loc[list(used)] * (len(used) / len(listed))
    return TopicSample(strategy, inclusion)


def estimate_systems(
    human: pd.DataFrame, judge: pd.DataFrame, alpha: float, key: str, inclusion: pd.Series | None = None
) -> pd.DataFrame:
    """Per system (a column of both): judge-only, prediction-powered and human-only estimates of
    its mean over the topics of ``judge`` (topics x systems, every topic of the dataset the judge
    scores) from ``human`` (annotated topics x systems). ``inclusion`` (annotated topic -> its
    inclusion probability): None for a uniform sample (PPI++ and the classical interval), else the
    inverse-probability weighted estimates (:func:`judgelab.analysis.ppi.weighted_ppi_mean`; lambda
    0 for human-only; at least 3 annotated topics). ``key``: the config key named when there are too
    few annotated or unannotated topics."""
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
    if inclusion is None:
        yu = judge.loc[rest, systems].to_numpy(float).T
        ppi = ppi_mean(y, yhat, yu, alpha)
        classical = classical_mean(y, alpha)
    else:
        if len(labelled) < 3:
            raise InputError(
                f"{len(labelled)} annotated topics chosen with unequal probabilities: the weighted estimate "
                "needs at least 3 (on 2 its weight lambda, fitted to them, leaves no residual and the "
                "interval would have width 0)",
                key=key,
            )
        everywhere = judge[systems].to_numpy(float).T
        pi = inclusion.loc[labelled].to_numpy(float)
        ppi = weighted_ppi_mean(y, yhat, everywhere, pi, alpha)
        classical = weighted_ppi_mean(y, yhat, everywhere, pi, alpha, lam=0.0)
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
    sample: TopicSample,
) -> list[dict[str, Any]]:
    """The rows (:data:`ESTIMATE_COLUMNS`) of one dataset x judge x measure; ``sample``:
    :func:`topic_sample`."""
    table = estimate_systems(human, judged, alpha, f"ranking.annotated.{dataset}", sample.inclusion)
    ids = {"dataset": dataset, "judge": judge, "measure": measure}
    extra = {
        "estimator": sample.estimator,
        "strategy": sample.strategy,
        "annotators": ", ".join(annotators),
        "merge": MERGE_RULE,
    }
    return [{**ids, **row, **extra} for row in table.to_dict("records")]


#: The name of each estimator in ppi_estimate.md.
ESTIMATOR_NAMES = {"ppi": "PPI++", "weighted_ppi": "weighted PPI"}


def estimate_markdown(table: pd.DataFrame) -> str:
    """ppi_estimate.md: per dataset x judge x measure, each system's judge-only score, PPI
    estimate with its interval and the human-only estimate with its interval, the estimator and
    the chosen file's strategy named."""
    from judgelab.analysis.render import fmt, markdown_table

    parts = []
    for (dataset, judge, measure), group in table.groupby(["dataset", "judge", "measure"], sort=False):
        first = group.iloc[0]
        level = f"{1 - float(first['alpha']):.0%}"
        name = ESTIMATOR_NAMES[str(first["estimator"])]
        head = [
            "system",
            "judge-only",
            name,
            f"{name} {level} interval",
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
        strategy = str(first["strategy"])
        design = (
            "no chosen-pairs file: taken as a uniform sample"
            if strategy == NO_CHOICE
            else f"topics chosen by `{strategy}`"
            + (", unequal probabilities: weighted" if first["estimator"] == "weighted_ppi" else "")
        )
        parts.append(
            f"## {dataset}: {judge}, {measure}\n\n"
            f"{first['n_annotated']} of {first['n_topics']} topics annotated ({first['annotators']}; "
            f"a pair's label: the {first['merge']}); the judge labels the rest. Estimator: {name} "
            f"({design}).\n\n" + markdown_table(head, rows)
        )
    notes = {
        "ppi": (
            "PPI++: the annotated labels on the annotated topics rectify the judge's values on every topic "
            "(ppi_py.ppi_mean_ci); human-only: the annotated topics alone. The intervals assume the "
            "annotated topics are a uniform random sample of the dataset's topics."
        ),
        "weighted_ppi": (
            "Weighted PPI: the topics were chosen with unequal probabilities, so each annotated topic's "
            "rectifier is weighted by 1 / its inclusion probability (Horvitz-Thompson, Hansen-Hurwitz "
            "variance, Student's t); human-only: the Horvitz-Thompson estimate of the annotated topics alone. "
            "An annotated topic's inclusion probability is its topic_inclusion x the share of the chosen "
            "topics finished: this assumes which chosen topics get finished does not depend on their values."
        ),
    }
    used = [notes[e] for e in ESTIMATOR_NAMES if e in set(table["estimator"])]
    note = "\n" + " ".join(used) + " Judge-only: the judge's mean over all topics, with no valid interval.\n"
    return "\n\n".join(parts) + ("\n" + note if parts else "")


def systems_of(matrix: pd.DataFrame) -> list[str]:
    return [str(c) for c in matrix.columns]


def check_same_runs(runs: Mapping[str, Any], judged: pd.DataFrame, judge: str) -> None:
    """The judge's per-topic table scores the job's runs (else the scores table is not this
    dataset's)."""
    missing = sorted(set(runs) - set(systems_of(judged)))
    if missing:
        raise ValueError(f"the scores table has no values of {judge} for the runs {missing}")
