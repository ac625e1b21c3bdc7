"""Choosing what a person labels next: topics by a strategy, then each chosen topic's pool pairs.

:func:`choose` takes a dataset's pool - the pairs of its runs' top documents with their query and
passage (the ranking study's :func:`judgelab.studies.ranking.pool.pool_table`; ``judgelab annotate
choose`` builds it from the dataset table and the run files) - and a judge's labels, and picks
``n`` topics among the candidates (the pool's topics with at least one pair whose passage text is
known, minus those excluded, e.g. already labelled):

* ``random``: ``n`` candidates drawn uniformly without replacement (the PPI table's draws); each
  candidate's inclusion probability is n / N.
* ``stratified``: the candidates ordered by the judge's **label mix**, the mean of its labels on
  the topic's pool pairs (ties by qid), cut into ``n`` strata of consecutive topics whose sizes
  differ by at most one (``numpy.array_split``), one topic drawn uniformly from each: topics from
  the judge's least to its most relevant-looking, each stratum represented once. A topic of
  stratum h is chosen with probability 1 / |h|. Every candidate needs a judge label on its pool.

The chosen topics are listed in a random order (a person who stops half-way has labelled a random
subset of them, not the first strata). A chosen topic's pairs are its pool pairs with a known
passage; more than ``cap``: ``cap`` of them drawn uniformly, each kept with probability
cap / (its topic's pairs). Both probabilities are written beside each pair (``topic_inclusion``,
``pair_inclusion``) for an estimate that weights by them. One ``numpy`` generator seeded with
``seed`` makes every draw: the same inputs and seed give the same file."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.data.readers import read_qrels
from judgelab.data.tables import read_tsv
from judgelab.errors import InputError

STRATEGIES = ("random", "stratified")

#: Pairs per chosen topic at most by default: about a DL21 topic's pool at depth 10.
DEFAULT_CAP = 200

#: The columns of the pairs file :func:`choose` writes (the first four are what the server reads).
CHOSEN_COLUMNS = ["qid", "docid", "query", "passage", "strategy", "topic_inclusion", "pair_inclusion"]


def read_labels(path: str | Path) -> pd.DataFrame:
    """A judge's labels (qid, docid, label) from a table with a header naming those columns (a
    judgment table of a judge job: a missing label stays missing) or a TREC qrels file (an
    imported judge's, an annotator's)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        header = fh.readline().rstrip("\r\n").split("\t")
    if {"qid", "docid", "label"} <= set(header):
        table = read_tsv(path, {"qid": str, "docid": str})
        try:
            table["label"] = table["label"].astype("Int64")
        except (TypeError, ValueError):
            raise InputError(
                "the label column holds a value that is not an integer", path=str(path)
            ) from None
        return table[["qid", "docid", "label"]]
    lines = read_qrels(path)
    return pd.DataFrame(
        {"qid": [q.qid for q in lines], "docid": [q.docid for q in lines], "label": [q.grade for q in lines]}
    ).astype({"label": "Int64"})


def label_mix(pool: pd.DataFrame, labels: pd.DataFrame) -> pd.Series:
    """qid -> the mean of the judge's labels (``labels``: qid, docid, label; missing labels
    ignored) on the topic's pool pairs; topics without one are absent."""
    have = labels.dropna(subset=["label"])[["qid", "docid", "label"]].astype({"qid": str, "docid": str})
    on_pool = pool[["qid", "docid"]].merge(have, on=["qid", "docid"], how="inner")
    return on_pool.groupby("qid")["label"].mean().astype(float)


def _candidates(pool: pd.DataFrame, exclude: Iterable[str]) -> list[str]:
    known = pool[pool["text_known"].astype(bool)]
    skip = {str(q) for q in exclude}
    return sorted(q for q in known["qid"].astype(str).unique() if q not in skip)


def choose_topics(
    pool: pd.DataFrame,
    labels: pd.DataFrame,
    n: int,
    strategy: str,
    rng: np.random.Generator,
    exclude: Iterable[str] = (),
) -> dict[str, float]:
    """The chosen topics (in the order to label them) -> their inclusion probability."""
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r} (one of {', '.join(STRATEGIES)})")
    candidates = _candidates(pool, exclude)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= len(candidates):
        raise InputError(
            f"{n} topics asked for: between 1 and the {len(candidates)} candidate topics (the pool's topics "
            "with a known passage text, less those excluded)"
        )
    if strategy == "random":
        picked = [candidates[i] for i in rng.choice(len(candidates), size=n, replace=False)]
        chosen = {q: n / len(candidates) for q in picked}
    else:
        mix = label_mix(pool, labels)
        unlabelled = [q for q in candidates if q not in mix.index]
        if unlabelled:
            raise InputError(
                f"the stratified strategy orders topics by the judge's labels, and it labels none of the pool "
                f"pairs of {len(unlabelled)} candidate topics (e.g. {', '.join(unlabelled[:5])}): label them "
                "or use the random strategy"
            )
        ordered = sorted(candidates, key=lambda q: (mix[q], q))
        chosen = {}
        for stratum in np.array_split(np.array(ordered, dtype=object), n):
            chosen[str(stratum[rng.integers(len(stratum))])] = 1 / len(stratum)
    order = rng.permutation(len(chosen))
    items = list(chosen.items())
    return dict(items[i] for i in order)


def choose(
    pool: pd.DataFrame,
    labels: pd.DataFrame,
    n: int,
    strategy: str,
    seed: int,
    cap: int = DEFAULT_CAP,
    exclude: Iterable[str] = (),
) -> pd.DataFrame:
    """The pairs file (:data:`CHOSEN_COLUMNS`) of ``n`` topics chosen by ``strategy``: each chosen
    topic's pool pairs with a known passage (at most ``cap``, drawn uniformly, in pool order),
    topics in the order to label them. ``pool``: qid, docid, query, passage, text_known;
    ``labels``: the judge's qid, docid, label."""
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise InputError(f"cap {cap!r}: the pairs per topic must be a positive integer")
    rng = np.random.default_rng(seed)
    topics = choose_topics(pool, labels, n, strategy, rng, exclude)
    known = pool[pool["text_known"].astype(bool)].astype({"qid": str, "docid": str})
    parts = []
    for qid, p_topic in topics.items():
        pairs = known[known["qid"] == qid]
        keep = np.sort(rng.choice(len(pairs), size=cap, replace=False)) if len(pairs) > cap else slice(None)
        parts.append(
            pairs.iloc[keep].assign(
                strategy=strategy, topic_inclusion=p_topic, pair_inclusion=min(1.0, cap / len(pairs))
            )
        )
    return pd.concat(parts, ignore_index=True)[CHOSEN_COLUMNS]
