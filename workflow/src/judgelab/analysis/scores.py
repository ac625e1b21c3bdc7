"""Scoring runs with ir-measures under human qrels or under a judge's labels (the shared core: the
ranking study scores its judges with it, the prompt-sensitivity study each prompt's labels).

A *qrels table* has the columns :data:`QRELS_COLUMNS`: ``qid``, ``docid`` (str) and ``relevance``
(int), one row per judged pair. :func:`score_runs` scores every run under one qrels table with
ir-measures (measures named as :func:`ir_measures.parse_measure` reads them: ``nDCG@10``,
``P(rel=2)@10``, ``RBP(rel=2)``, ``R(rel=2)@100``, ...) and returns tidy rows
(:data:`SCORE_COLUMNS`) per run, measure and topic, plus a row with topic ``all``.

trec_eval's conventions, which ir-measures' pytrec_eval provider (trec_eval's own code) follows
for nDCG, P, R, AP, ...:

* a topic is scored when it is in both the run and the qrels; the ``all`` value is the mean over
  those topics. (ir-measures itself also yields the measure's default, 0, for every qrels topic
  the run lacks, as ``trec_eval -c`` would; those rows are dropped here.)
* unjudged documents count as non-relevant: a document absent from the qrels has gain 0;
* documents are ordered by score descending, ties by docid descending; the rank field is ignored.
  Runs are handed to ir-measures in that order (:func:`trec_order`)
  so that providers that sort stably by score alone (cwl_eval, which computes ``RBP``) break
  ties as trec_eval does;
* nDCG's gain is the relevance grade itself with a log2(rank + 1) discount (trec_eval
  ``ndcg_cut``), the ideal ranking built from all the topic's qrels.

Clarke's compatibility (``Compat``) is ir-measures' definition (its ``compat`` provider: the
run's order against the ideal order of the pairs with relevance above 0, sorted by relevance, ties
by the run's score; rank-biased overlap with persistence p, normalised by the ideal's own), computed
here in one pass over the ranking (:func:`compatibility`) instead of the provider's quadratic one:
63 runs under 20 judges' qrels took minutes there. ``tests/ranking/test_ranking_scores.py``
checks it against the provider.

``judged_at_k`` is the share of the run's first k documents of the topic (trec_eval order; k the
measure's cutoff, or 10 for a measure without one, e.g. RBP) that have a row in the qrels table:
judged / min(k, documents the run retrieved for the topic). The ``all`` row holds its mean over
the scored topics. (ir-measures' ``Judged@k`` divides by k instead; the two differ only on topics
with fewer than k documents.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import ir_measures
import numpy as np
import pandas as pd

from judgelab.errors import InputError

#: Columns of a qrels table.
QRELS_COLUMNS = ["qid", "docid", "relevance"]

#: Columns of :func:`score_runs`' output.
SCORE_COLUMNS = ["run", "measure", "topic", "value", "judged_at_k"]

#: Depth of ``judged_at_k`` for a measure without a cutoff.
DEFAULT_DEPTH = 10

#: The topic label of the mean row.
ALL = "all"


# --- trec_eval's order of a run ---------------------------------------------------------------


def trec_order(run: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``run`` in trec_eval's order (see :func:`top_k`): topics by qid (as strings),
    within a topic score descending, ties by docid descending; index reset."""
    return run.sort_values(
        ["qid", "score", "docid"], ascending=[True, False, False], kind="mergesort"
    ).reset_index(drop=True)


def top_k(run: pd.DataFrame, k: int) -> pd.DataFrame:
    """Each topic's first ``k`` documents in trec_eval's order, topics sorted by qid (as strings).

    trec_eval (``form_res_rels.c``, ``comp_sim_docno``: ``sim`` descending, then
    ``strcmp(p2->docno, p1->docno)``) orders a topic's documents by score descending and breaks
    ties by docid descending (byte order; the same as Python's order of ``str`` for UTF-8 text);
    the ``rank`` field is ignored. That is what this function does. Checked against trec_eval's
    source (usnistgov/trec_eval ``form_res_rels.c``) and against pytrec_eval through ir-measures
    in ``tests/ranking/test_ranking_runs.py`` (a tie broken the other way changes P@1 and nDCG@1).
    The rows keep the columns of ``run``."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, not {k!r}")
    return trec_order(run).groupby("qid", sort=False).head(k).reset_index(drop=True)


# --- scoring -------------------------------------------------------------------------------------


def parse_measures(names: Iterable[str], key: str | None = None) -> dict[str, ir_measures.Measure]:
    """Measure name -> ir-measures measure (:func:`ir_measures.parse_measure`), in the given order,
    a name given twice kept once. A name ir-measures cannot read is an error naming it (and the
    config key ``key`` when given)."""
    parsed: dict[str, ir_measures.Measure] = {}
    for name in names:
        try:
            parsed.setdefault(str(name), ir_measures.parse_measure(str(name)))
        except (ValueError, NameError, SyntaxError, TypeError, AttributeError) as exc:
            raise InputError(
                f"ir-measures cannot read the measure {name!r} ({exc}); e.g. nDCG@10, "
                "P(rel=2)@10, RBP(rel=2), R(rel=2)@100",
                key=key,
            ) from None
    if not parsed:
        raise InputError("no measure given", key=key)
    return parsed


def measure_depth(measure) -> int:
    """The measure's cutoff (``@k``), or :data:`DEFAULT_DEPTH` when it has none."""
    cutoff = measure.params.get("cutoff")
    return int(cutoff) if isinstance(cutoff, int) and not isinstance(cutoff, bool) else DEFAULT_DEPTH


def check_qrels(qrels: pd.DataFrame, what: str = "qrels table") -> pd.DataFrame:
    """``qrels`` with the columns :data:`QRELS_COLUMNS` as str, str, int64; a missing column, a
    relevance that is not an integer, or a (qid, docid) listed twice is an error."""
    missing = [c for c in QRELS_COLUMNS if c not in qrels.columns]
    if missing:
        raise InputError(f"the {what} has no column(s) {missing}")
    out = qrels[QRELS_COLUMNS].astype({"qid": str, "docid": str})
    numeric = pd.to_numeric(out["relevance"], errors="coerce")
    bad = numeric.isna() | (np.floor(numeric) != numeric)
    if bad.any():
        row = out[bad].iloc[0]
        shown = row["relevance"].item() if hasattr(row["relevance"], "item") else row["relevance"]
        raise InputError(
            f"the {what} gives the pair (qid {row['qid']}, docid {row['docid']}) the "
            f"relevance {shown!r}, not an integer"
        )
    out["relevance"] = numeric.astype("int64")
    dup = out.duplicated(["qid", "docid"], keep=False)
    if dup.any():
        row = out[dup].iloc[0]
        raise InputError(f"the {what} lists the pair (qid {row['qid']}, docid {row['docid']}) twice")
    return out.reset_index(drop=True)


def qrels_from_labels(labels: pd.DataFrame, label: str = "label") -> pd.DataFrame:
    """The qrels table of a judge's label table (columns qid, docid and ``label``), applying
    trec_eval's rule for what the judge did not label: a pair whose label is missing (None, NaN,
    pd.NA) is left out of the qrels, so an unlabelled document of a run counts as non-relevant,
    exactly as a document outside the pool does. Labels must be integers (e.g. 0-3, or 0/1); a
    pair labelled twice is an error."""
    missing = [c for c in ("qid", "docid", label) if c not in labels.columns]
    if missing:
        raise InputError(f"the label table has no column(s) {missing}")
    kept = labels[labels[label].notna()]
    qrels = kept[["qid", "docid"]].assign(relevance=kept[label])
    return check_qrels(qrels, "label table")


def _rbo(ranking: Sequence[str], ideal: Sequence[str], p: float, depth: int) -> float:
    """Rank-biased overlap of the two orders to ``depth`` as ir-measures' compat provider sums it
    (the overlap of the two prefixes / (i + 1), weighted p^i, over the weights' sum), the overlap
    kept up to date as each prefix grows by one."""
    seen_r: set[str] = set()
    seen_i: set[str] = set()
    overlap, score, normalizer, weight = 0, 0.0, 0.0, 1.0
    for i in range(depth):
        if i < len(ranking):
            doc = ranking[i]
            if doc not in seen_r:
                overlap += doc in seen_i
                seen_r.add(doc)
        if i < len(ideal):
            doc = ideal[i]
            if doc not in seen_i:
                overlap += doc in seen_r
                seen_i.add(doc)
        score += weight * overlap / (i + 1)
        normalizer += weight
        weight *= p
    return score / normalizer


def compatibility(qrels: Mapping[str, int], run: Mapping[str, float], p: float, normalize: bool) -> float:
    """Clarke's compatibility of one topic's run (docid -> score) with its qrels (docid ->
    relevance), as ir-measures' compat provider defines it, in time linear in the depth."""
    ranking = sorted(run)
    ranking.sort(key=lambda d: run[d], reverse=True)
    ideal = [d for d in qrels if qrels[d] > 0]
    ideal.sort(key=lambda d: run.get(d, 0.0), reverse=True)
    ideal.sort(key=lambda d: qrels[d], reverse=True)
    depth = max(len(ranking), len(ideal))
    score = _rbo(ranking, ideal, p, depth)
    if normalize:
        best = _rbo(ideal, ideal, p, depth)
        if best > 0.0:
            score /= best
    return score


class _Evaluator:
    """ir-measures' evaluator for every measure but ``Compat``, which :func:`compatibility`
    computes on the same converted qrels and runs: ``iter_calc(run)`` yields both's metrics."""

    def __init__(self, measures: Sequence[ir_measures.Measure], qrels: pd.DataFrame) -> None:
        self.compat = [m for m in measures if m.NAME == "Compat"]
        others = [m for m in measures if m.NAME != "Compat"]
        self.others = ir_measures.evaluator(others, qrels) if others else None
        self.qrels = ir_measures.util.QrelsConverter(qrels).as_dict_of_dict() if self.compat else {}

    def iter_calc(self, run: dict[str, dict[str, float]]):
        """The metrics of ``run`` (qid -> docid -> score, :func:`_to_irm_run`)."""
        if self.others is not None:
            yield from self.others.iter_calc(run)
        for measure in self.compat:
            p, normalize = measure["p"], measure["normalize"]
            for qid, docs in run.items():
                if qid in self.qrels:
                    value = compatibility(self.qrels[qid], docs, p, normalize)
                    yield ir_measures.Metric(query_id=qid, measure=measure, value=value)


def _to_irm_qrels(qrels: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "query_id": qrels["qid"].to_numpy(),
            "doc_id": qrels["docid"].to_numpy(),
            "relevance": qrels["relevance"].to_numpy("int64"),
        }
    )


def _to_irm_run(run: pd.DataFrame) -> dict[str, dict[str, float]]:
    """The run as ir-measures takes it, qid -> docid -> score, each topic's documents inserted in
    trec_eval's order (:func:`trec_order`), made straight from the
    columns: ir-measures' own conversion of a frame builds a tuple per row, most of the time of
    scoring a run."""
    ordered = trec_order(run)
    out: dict[str, dict[str, float]] = {}
    for qid, doc, score in zip(
        ordered["qid"].tolist(), ordered["docid"].tolist(), ordered["score"].astype("float64").tolist()
    ):
        out.setdefault(qid, {})[doc] = score
    return out


def judged_share(
    run: pd.DataFrame, qrels: pd.DataFrame, k: int, judged: pd.MultiIndex | None = None
) -> pd.Series:
    """Per topic of ``run`` (index qid): the share of its first ``k`` documents (trec_eval order)
    that have a row in ``qrels``, i.e. judged / min(k, documents retrieved). ``judged``: the
    (qid, docid) index of ``qrels``, when the caller made it once for many runs."""
    top = top_k(run, k)[["qid", "docid"]]
    if judged is None:
        judged = pd.MultiIndex.from_frame(qrels[["qid", "docid"]])
    flags = pd.MultiIndex.from_frame(top).isin(judged)
    return pd.Series(flags, index=top["qid"].to_numpy()).groupby(level=0).mean().rename("judged_at_k")


def _score_one(
    name: str,
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    evaluator,
    measures: dict[str, ir_measures.Measure],
    judged_pairs: pd.MultiIndex,
) -> list[tuple]:
    names = {measure: label for label, measure in measures.items()}
    topics = set(run["qid"])
    values: dict[str, dict[str, float]] = {label: {} for label in measures}
    for metric in evaluator.iter_calc(_to_irm_run(run)):
        if metric.query_id in topics:  # drop ir-measures' 0 for qrels topics the run lacks
            values[names[metric.measure]][metric.query_id] = float(metric.value)
    rows = []
    for label, measure in measures.items():
        per_topic = values[label]
        judged = judged_share(run, qrels, measure_depth(measure), judged_pairs)
        for topic in sorted(per_topic):
            rows.append((name, label, topic, per_topic[topic], float(judged.get(topic, 0.0))))
        scored = sorted(per_topic)
        mean = float(np.mean([per_topic[t] for t in scored])) if scored else float("nan")
        mean_judged = float(judged.reindex(scored).fillna(0.0).mean()) if scored else float("nan")
        rows.append((name, label, ALL, mean, mean_judged))
    return rows


def score_runs(
    runs: Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame,
    measures: Iterable[str],
    key: str | None = None,
) -> pd.DataFrame:
    """Every run of ``runs`` (name -> run table) scored with ``measures`` under ``qrels`` (a qrels
    table): rows (:data:`SCORE_COLUMNS`) run, measure (the name as given), topic (a qid, or
    ``all`` for the mean), value, judged_at_k, ordered by run (as given), measure (as given) and
    topic (as strings, ``all`` last). Conventions: see the module docstring. A run with no topic in
    the qrels gets only its ``all`` row, with NaN value and judged_at_k. ``key`` names the config
    key of ``measures`` in errors."""
    parsed = parse_measures(measures, key)
    qrels = check_qrels(qrels)
    evaluator = _Evaluator(list(parsed.values()), _to_irm_qrels(qrels))
    judged_pairs = pd.MultiIndex.from_frame(qrels[["qid", "docid"]])  # once, not per run and measure
    rows = []
    for name, run in runs.items():
        rows.extend(_score_one(str(name), run, qrels, evaluator, parsed, judged_pairs))
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


def prepared_runs(runs: Mapping[str, pd.DataFrame]) -> dict[str, dict[str, dict[str, float]]]:
    """Every run of ``runs`` (name -> run table) as ir-measures takes it (qid -> docid -> score, in
    trec_eval's order), once, for :func:`topic_scores` under many qrels tables: the conversion
    takes most of the time of scoring a run."""
    return {str(name): _to_irm_run(run) for name, run in runs.items()}


def topic_scores(
    runs: Mapping[str, dict[str, dict[str, float]]],
    qrels: pd.DataFrame,
    measures: Iterable[str],
    key: str | None = None,
) -> pd.DataFrame:
    """The per-topic values of :func:`score_runs` (columns run, measure, topic, value; no ``all``
    row and no ``judged_at_k``) of runs already converted by :func:`prepared_runs`: the same
    evaluator, the same rule for topics (a topic in both the run and the qrels)."""
    parsed = parse_measures(measures, key)
    evaluator = _Evaluator(list(parsed.values()), _to_irm_qrels(check_qrels(qrels)))
    names = {measure: label for label, measure in parsed.items()}
    rows = []
    for name, run in runs.items():
        for metric in evaluator.iter_calc(run):
            if metric.query_id in run:
                rows.append((name, names[metric.measure], metric.query_id, float(metric.value)))
    return pd.DataFrame(rows, columns=["run", "measure", "topic", "value"])
