"""A run built by the judge (circularity): does an evaluation by a judge reward the system that uses
that judge as its re-ranker?

Clarke and Dietz ("LLM-based relevance assessment still can't replace human relevance
assessment", arXiv 2412.17156) simulate systems that use the judge (UMBRELA) as their final
re-ranker and show how the system ranking under the judge's labels then distorts. Here, per
dataset x judge, one such system is built from a *base run* (``ranking.circularity.base``; null:
the run the human qrels score highest on the first measure, :func:`best_run`) by
:func:`judge_order`: each topic's top ``depth`` documents (trec_eval's order) re-ordered by the
judge's labels - a stable sort by label, highest first, ties keeping the base order, the
documents the judge did not label kept in base order below the labelled ones -, the documents
below ``depth`` as the base has them. A judge that gives scores, not labels, re-orders by its score
(``by="score"``), the same way. :func:`write_judge_run` writes it as a TREC run file whose
scores descend with the new order (distinct, so trec_eval's order is that order).

The new run is scored under every qrels of the dataset and ranked among the dataset's runs
(:func:`circularity_rows`), and reported in its own table (``circularity.tsv``): the study's
scores, correlations and leaderboard do not include it. Per judge x measure: its score and rank
under the judge's reference (``human``, or ``human+<judge>`` with ``unjudged: fill``, as in
``correlations.tsv``) and under the judge's own labels, the rank gap (reference rank minus judge
rank: how many places the judge lifts its own run above where the reference puts it), the base
run's ranks, Kendall's tau, tau_ap and Spearman's rho of the two system rankings with the new run
added and without it (:mod:`judgelab.studies.ranking.correlation`), and the share of its top k
the human assessors judged (``judged_at_k`` under ``human``: a run that promotes the passages
the assessors judged gains under the human qrels too).

Ranks: 1 = best, over the dataset's runs and the new one, by the mean over the topics both qrels
score (a run without documents for a topic scores 0 there, as ``trec_eval -c``), ties by run
name (:func:`judgelab.studies.ranking.tables.ranks`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgelab.data.readers import RUN_COLUMNS
from judgelab.errors import InputError
from judgelab.studies.ranking.correlation import align, kendall_tau, ranking_order, spearman, tau_ap
from judgelab.studies.ranking.runs import top_k, trec_order
from judgelab.studies.ranking.scores import ALL
from judgelab.studies.ranking.tables import ranks, topic_table

#: The name of the human qrels (as :data:`judgelab.studies.ranking.judges.HUMAN`).
HUMAN = "human"

#: Columns of ``circularity.tsv``.
CIRCULARITY_COLUMNS = [
    "dataset",
    "judge",
    "reference",
    "measure",
    "base",
    "run",
    "depth",
    "n_systems",
    "n_topics",
    "labelled_at_depth",
    "reference_score",
    "reference_rank",
    "judge_score",
    "judge_rank",
    "rank_gap",
    "base_reference_rank",
    "base_judge_rank",
    "kendall_tau",
    "tau_ap",
    "spearman",
    "kendall_tau_without",
    "tau_ap_without",
    "spearman_without",
    "judged_at_k",
]


def built_name(base: str, judge: str) -> str:
    """The judge-built run's name: the base run's, then ``+`` and the judge's."""
    return f"{base}+{judge}"


def best_run(scores: pd.DataFrame, measure: str, qrels: str = HUMAN) -> str:
    """The run ``qrels`` scores highest on ``measure`` (mean over the topics, a topic a run has no
    document for scoring 0; ties by run name)."""
    means = topic_table(scores, qrels, measure).mean(axis=0)
    if means.empty:
        raise InputError(f"no run is scored under {qrels!r} on {measure!r}")
    return ranking_order(means)[0]


def judge_order(base: pd.DataFrame, labels: pd.DataFrame, depth: int, by: str = "label") -> pd.DataFrame:
    """The base run re-ordered by the judge: per topic, its top ``depth`` documents (trec_eval's
    order: score descending, ties by docid descending) sorted by the judge's label, highest first,
    a stable sort (ties keep the base order); the documents the judge did not label (no row in
    ``labels``, or a missing label) follow the labelled ones in base order; the documents below
    ``depth`` keep the base order. ``labels``: qid, docid, label (a pair listed twice is an error);
    ``by="score"``: a judge that gives scores, sorted by its ``score`` column instead.

    Returns the run's rows in the new order (topics by qid as strings) with the columns qid,
    docid, label (Int64, missing where unlabelled; with ``by="score"`` the score, Float64),
    base_rank (1-based position in the base order) and rank (1-based position in the new order)."""
    if isinstance(depth, bool) or int(depth) < 1:
        raise ValueError(f"depth must be a positive integer, not {depth!r}")
    lab = labels[["qid", "docid", by]].rename(columns={by: "label"}).astype({"qid": str, "docid": str})
    dup = lab.duplicated(["qid", "docid"], keep=False)
    if dup.any():
        row = lab[dup].iloc[0]
        raise InputError(f"the judge's labels list the pair (qid {row['qid']}, docid {row['docid']}) twice")
    ordered = trec_order(base)[["qid", "docid"]]
    ordered["base_rank"] = ordered.groupby("qid", sort=False).cumcount() + 1
    key = pd.MultiIndex.from_frame(ordered[["qid", "docid"]])
    label = lab.set_index(["qid", "docid"])["label"].reindex(key)
    ordered["label"] = pd.array(label.to_numpy(), dtype="Int64" if by == "label" else "Float64")
    top = ordered["base_rank"] <= int(depth)
    # the sort key inside the top: labelled first, by label descending; then base order
    unlabelled = ordered["label"].isna() | ~top
    ordered["_band"] = np.where(top, 0, 1)
    ordered["_unlabelled"] = unlabelled.to_numpy()
    ordered["_neg_label"] = -ordered["label"].fillna(0).astype("float64").where(top & ~unlabelled, 0.0)
    out = ordered.sort_values(
        ["qid", "_band", "_unlabelled", "_neg_label", "base_rank"], kind="mergesort"
    ).reset_index(drop=True)
    out["rank"] = out.groupby("qid", sort=False).cumcount() + 1
    return out[["qid", "docid", "label", "base_rank", "rank"]]


def base_top(base: pd.DataFrame, depth: int) -> pd.DataFrame:
    """The (qid, docid) of each topic's first ``depth`` documents of the base run, trec_eval's
    order (the documents :func:`judge_order` re-orders)."""
    return top_k(base, int(depth))[["qid", "docid"]].astype(str).reset_index(drop=True)


def unlabelled_pairs(top: pd.DataFrame, labelled: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The pairs of ``top`` (qid, docid) a live judge still has to label: not among ``labelled``
    (its pool labels) and with a known passage text (``table``: the dataset table; the columns the
    judgment builders read: dataset, qid, query, docid, passage, in ``top``'s order)."""
    seen = pd.MultiIndex.from_frame(labelled[["qid", "docid"]].astype(str))
    rest = top[~pd.MultiIndex.from_frame(top[["qid", "docid"]]).isin(seen)]
    queries = table.drop_duplicates("qid").set_index("qid")["query"]
    texts = table.drop_duplicates("docid").set_index("docid")["passage"]
    rest = rest[rest["docid"].isin(texts.index) & rest["qid"].isin(queries.index)]
    dataset = str(table["dataset"].iloc[0]) if len(table) else ""
    return pd.DataFrame(
        {
            "dataset": dataset,
            "qid": rest["qid"].to_numpy(),
            "query": queries.reindex(rest["qid"]).to_numpy(),
            "docid": rest["docid"].to_numpy(),
            "passage": texts.reindex(rest["docid"]).to_numpy(),
        }
    )


def as_run(order: pd.DataFrame, tag: str) -> pd.DataFrame:
    """The run table (:data:`~judgelab.data.readers.RUN_COLUMNS`) of :func:`judge_order`'s rows:
    ranks 1..n per topic and scores n, n-1, ..., 1 (distinct and descending, so trec_eval's order,
    score descending, is the new order)."""
    n = order.groupby("qid", sort=False)["rank"].transform("max")
    run = pd.DataFrame(
        {
            "qid": order["qid"],
            "docid": order["docid"],
            "rank": order["rank"].astype("int64"),
            "score": (n - order["rank"] + 1).astype("float64"),
            "tag": tag,
        }
    )
    return run[RUN_COLUMNS]


def write_judge_run(run: pd.DataFrame, path: str | Path) -> None:
    """A run table as a TREC run file (``qid Q0 docid rank score tag``, in the table's order)."""
    from judgelab.studies.ranking.systems import write_run

    write_run(run, path)


def labelled_share(order: pd.DataFrame, depth: int, topics: Sequence[str]) -> float:
    """The mean over ``topics`` (those the run retrieves for) of the share of the top ``depth``
    documents of the base run the judge labelled."""
    top = order[(order["base_rank"] <= depth) & order["qid"].isin(set(topics))]
    if top.empty:
        return float("nan")
    return float(top.assign(known=top["label"].notna()).groupby("qid")["known"].mean().mean())


def circularity_rows(
    scores: pd.DataFrame,
    built: pd.DataFrame,
    run: str,
    base: str,
    judge: str,
    reference: str,
    measures: Sequence[str],
) -> list[dict[str, Any]]:
    """Per measure, the judge-built run ``run`` (its rows of every qrels in ``built``, columns of
    ``scores.tsv``) ranked among the runs of ``scores`` under ``reference`` and under ``judge``
    (module docstring): the keys of :data:`CIRCULARITY_COLUMNS` from ``measure`` on, less
    ``depth`` and ``labelled_at_depth`` (the caller's)."""
    if run in set(scores["run"]):
        raise InputError(f"the judge-built run's name {run!r} is the name of one of the dataset's runs")
    both = pd.concat([scores, built[built["run"] == run]], ignore_index=True)
    rows = []
    for measure in measures:
        row: dict[str, Any] = {"measure": measure, "base": base, "run": run}
        ref_all, jud_all = align(topic_table(both, reference, measure), topic_table(both, judge, measure))
        ref_m, jud_m = ref_all.mean(axis=0), jud_all.mean(axis=0)
        ref_r, jud_r = ranks(ref_m), ranks(jud_m)
        row.update(
            n_systems=int(ref_all.shape[1]),
            n_topics=int(ref_all.shape[0]),
            reference_score=float(ref_m[run]),
            reference_rank=int(ref_r[run]),
            judge_score=float(jud_m[run]),
            judge_rank=int(jud_r[run]),
            rank_gap=int(ref_r[run] - jud_r[run]),
            base_reference_rank=int(ref_r[base]),
            base_judge_rank=int(jud_r[base]),
        )
        row.update(_agreement(ref_m, jud_m, ""))
        others = [c for c in ref_m.index if c != run]
        row.update(_agreement(ref_m[others], jud_m[others], "_without"))
        judged = built[
            (built["run"] == run)
            & (built["qrels"] == HUMAN)
            & (built["measure"] == measure)
            & (built["topic"] == ALL)
        ]["judged_at_k"]
        row["judged_at_k"] = float(judged.iloc[0]) if len(judged) else float("nan")
        rows.append(row)
    return rows


def _agreement(reference: pd.Series, judge: pd.Series, suffix: str) -> dict[str, float]:
    return {
        f"kendall_tau{suffix}": kendall_tau(reference.to_numpy(), judge.to_numpy()),
        f"tau_ap{suffix}": tau_ap(ranking_order(reference), ranking_order(judge)),
        f"spearman{suffix}": spearman(reference.to_numpy(), judge.to_numpy()),
    }


#: (title, column, digits) of the rendered table.
TABLE_COLUMNS = [
    ("Judge", "judge", None),
    ("Reference", "reference", None),
    ("Measure", "measure", None),
    ("Base run", "base", None),
    ("Depth", "depth", None),
    ("Systems", "n_systems", None),
    ("Rank (reference)", "reference_rank", None),
    ("Rank (judge)", "judge_rank", None),
    ("Rank gap", "rank_gap", None),
    ("Score (reference)", "reference_score", 3),
    ("Score (judge)", "judge_score", 3),
    ("Kendall's τ", "kendall_tau", 3),
    ("τ_AP", "tau_ap", 3),
    ("Spearman's ρ", "spearman", 3),
    ("τ without it", "kendall_tau_without", 3),
    ("Judged@k (human)", "judged_at_k", 3),
]


def render_circularity(table: pd.DataFrame, fmt: str) -> str:
    """``circularity.tsv`` as ``md`` or ``html`` (undefined values ``n/a``)."""
    from judgelab.analysis import render

    titles = [t for t, _, _ in TABLE_COLUMNS]
    cells = [
        [render.fmt(r[c], d) if d is not None else str(r[c]) for _, c, d in TABLE_COLUMNS]
        for _, r in table.iterrows()
    ]
    if fmt == "md":
        align_ = ["l"] * 4 + ["r"] * (len(TABLE_COLUMNS) - 4)
        return render.markdown_table(titles, cells, align_)
    if fmt == "html":
        return render.html_table(
            pd.DataFrame(cells, columns=titles),
            caption="The run built by each judge (its base run re-ordered by the judge's labels), "
            "ranked among the systems under the reference and under the judge",
        )
    raise ValueError(f"unknown table format {fmt!r} (md or html)")
