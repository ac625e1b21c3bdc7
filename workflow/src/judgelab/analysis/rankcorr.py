"""Systems' orders under two sets of labels: the per-topic tables of one measure aligned into topic x
run matrices (:func:`align`), the order of systems (:func:`ranking_order`) and the rank
correlations of their mean scores (:func:`kendall_tau`, :func:`spearman`) - the shared core the
ranking study's correlations (:mod:`judgelab.studies.ranking.correlation`) and the
prompt-sensitivity study's rankings build on.

A *per-topic table* is either tidy, with columns ``run``, ``topic``, ``value`` (the rows of
:func:`judgelab.analysis.scores.score_runs` for one measure; rows with topic ``all`` are dropped),
or wide: index = topics, columns = runs. Kendall's tau-b and Spearman's rho are scipy's
(:func:`scipy.stats.kendalltau`, :func:`scipy.stats.spearmanr`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.errors import InputError


def scipy_stats():
    """scipy.stats, imported where a statistic is computed (not by the jobs that only read the
    tables this module's constants describe)."""
    from scipy import stats

    return stats


# --- inputs -----------------------------------------------------------------------------------


def topic_matrix(per_topic: pd.DataFrame, what: str = "per-topic table") -> pd.DataFrame:
    """The topic x run matrix of a per-topic table: tidy when it has columns ``run`` and ``topic``
    (and ``value``), else already wide (index topics, columns runs); a topic ``all`` (the mean
    row of :func:`judgelab.analysis.scores.score_runs`) is dropped. A tidy table with more
    than one ``measure``, or a (run, topic) listed twice, is an error."""
    if not {"run", "topic"} <= set(per_topic.columns):
        wide = per_topic.copy()
        wide.index = wide.index.astype(str)
        wide.columns = wide.columns.astype(str)
        return wide.loc[wide.index != "all"].astype(float)
    if "value" not in per_topic.columns:
        raise InputError(f"the {what} has columns 'run' and 'topic' but no 'value'")
    tidy = per_topic[per_topic["topic"].astype(str) != "all"]
    if "measure" in tidy.columns and tidy["measure"].nunique() > 1:
        raise InputError(
            f"the {what} holds several measures ({sorted(tidy['measure'].unique())}); give one measure's rows"
        )
    dup = tidy.duplicated(["run", "topic"], keep=False)
    if dup.any():
        first = tidy[dup].iloc[0]
        raise InputError(f"the {what} lists run {first['run']} on topic {first['topic']} twice")
    wide = tidy.pivot(index="topic", columns="run", values="value")
    wide.index = wide.index.astype(str)
    wide.columns = wide.columns.astype(str)
    return wide.astype(float)


def align(per_topic_human: pd.DataFrame, per_topic_judge: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The human and judge topic x run matrices over the same runs (sorted by name) and the topics
    both tables score (sorted as strings). Errors: the tables name different runs, no topic is
    common, or a run has no value on a common topic (name the run and the topic)."""
    human = topic_matrix(per_topic_human, "human per-topic table")
    judge = topic_matrix(per_topic_judge, "judge per-topic table")
    if set(human.columns) != set(judge.columns):
        only_h = sorted(set(human.columns) - set(judge.columns))
        only_j = sorted(set(judge.columns) - set(human.columns))
        raise InputError(
            f"the human and judge tables score different runs (only human: {only_h}; only judge: {only_j})"
        )
    runs = sorted(human.columns)
    topics = sorted(set(human.index) & set(judge.index))
    if not topics:
        raise InputError("the human and judge tables have no topic in common")
    human, judge = human.loc[topics, runs], judge.loc[topics, runs]
    for what, m in (("human", human), ("judge", judge)):
        if m.isna().to_numpy().any():
            i, c = np.argwhere(m.isna().to_numpy())[0]
            topic, run = m.index[i], m.columns[c]
            raise InputError(
                f"the {what} table has no value for run {run} on topic {topic} "
                "(every run must be scored on every common topic)"
            )
    return human, judge


def ranking_order(scores: pd.Series) -> list[str]:
    """Run names by score descending, ties by run name ascending (best first)."""
    frame = pd.DataFrame({"run": scores.index.astype(str), "score": scores.to_numpy(float)})
    return frame.sort_values(["score", "run"], ascending=[False, True], kind="mergesort")["run"].tolist()


# --- rank correlations ------------------------------------------------------------------------


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b of two score vectors over the same systems (scipy.stats.kendalltau,
    variant ``b``): (C - D) / sqrt((C + D + T_x)(C + D + T_y)), C / D the concordant / discordant
    pairs, T_x (T_y) the pairs tied only in x (y). NaN when either vector is constant."""
    if len(x) < 2:
        return float("nan")
    return float(scipy_stats().kendalltau(x, y, variant="b").statistic)


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho (scipy.stats.spearmanr): Pearson's correlation of the ranks, ties given
    their average rank. NaN when either vector is constant."""
    if len(x) < 2:
        return float("nan")
    return float(scipy_stats().spearmanr(x, y).statistic)
