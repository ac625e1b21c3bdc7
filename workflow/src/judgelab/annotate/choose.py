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
* ``active``: topics drawn with probability proportional to the judge's **shortfall** on them (1 -
  the systems' mean score under the judge's labels: where the judge finds the systems weakest, the
  gap between its scores and people's is widest), mixed with the uniform design by a ``floor``
  (every topic keeps at least floor x n / N), by randomised systematic pi-ps sampling: exact
  inclusion probabilities, n distinct topics (:func:`active_design`). An estimate weights the
  chosen topics by 1 / inclusion (:func:`judgelab.analysis.ppi.weighted_ppi_mean`).

The chosen topics are listed in a random order (a person who stops half-way has labelled a random
subset of them, not the first strata). A chosen topic's pairs are its pool pairs with a known
passage; more than ``cap``: ``cap`` of them drawn uniformly, each kept with probability
cap / (its topic's pairs). Both probabilities are written beside each pair (``topic_inclusion``,
``pair_inclusion``) for an estimate that weights by them. One ``numpy`` generator seeded with
``seed`` makes every draw: the same inputs and seed give the same file."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.data.readers import read_qrels
from judgelab.data.tables import read_tsv
from judgelab.errors import InputError

STRATEGIES = ("random", "stratified", "active")

#: The strategy of ``judgelab annotate choose`` by default: the one the DL21 simulation
#: (``workflow/benchmarks/choose_strategies.py``, docs/annotate.md) found narrowest among those
#: whose systems' intervals cover at least the nominal level less 0.02 at every n.
DEFAULT_STRATEGY = "random"

#: Below this many topics no strategy's 95% interval covered 0.93 in the DL21 simulation:
#: ``judgelab annotate choose`` warns.
MIN_TOPICS = 10

#: The active strategy's share of uniform probability by default (docs/annotate.md).
DEFAULT_FLOOR = 0.5

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


@dataclass(frozen=True)
class Design:
    """A sampling design of ``n`` of T candidates: each candidate's exact first-order inclusion
    probability (``inclusion``, summing to n), and how one sample is drawn (:meth:`draw`)."""

    strategy: str
    n: int
    inclusion: np.ndarray
    strata: tuple[np.ndarray, ...] = ()

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """One sample: the chosen candidates' indices, in the order drawn (``n`` distinct)."""
        if self.strategy == "random":
            return rng.choice(len(self.inclusion), size=self.n, replace=False)
        if self.strategy == "stratified":
            return np.array([s[rng.integers(len(s))] for s in self.strata], dtype=int)
        return systematic_pps(self.inclusion, rng)


def random_design(n_candidates: int, n: int) -> Design:
    """``n`` of ``n_candidates`` uniformly without replacement: inclusion n / T each."""
    _check_n(n, n_candidates)
    return Design("random", n, np.full(n_candidates, n / n_candidates))


def stratified_design(mix: np.ndarray, n: int) -> Design:
    """The candidates ordered by ``mix`` (the judge's label mix; ties by position, i.e. by qid when
    the candidates are sorted so), cut into ``n`` strata of consecutive candidates whose sizes
    differ by at most one, one drawn from each: inclusion 1 / |stratum|."""
    mix = np.asarray(mix, dtype=float)
    _check_n(n, len(mix))
    ordered = np.lexsort((np.arange(len(mix)), mix))
    strata = tuple(np.array_split(ordered, n))
    inclusion = np.empty(len(mix))
    for s in strata:
        inclusion[s] = 1.0 / len(s)
    return Design("stratified", n, inclusion, strata)


def pps_inclusion(size: np.ndarray, n: int, floor: float) -> np.ndarray:
    """Inclusion probabilities proportional to ``size`` (>= 0) mixed with the uniform design:
    pi_t = n ((1 - floor) size_t / sum(size) + floor / T), every candidate > 0 for ``floor`` in
    (0, 1]; a pi above 1 is set to 1 and the others rescaled to keep the sum n, until none is
    (the certainty units of pi-ps sampling). All sizes 0: uniform."""
    size = np.asarray(size, dtype=float)
    big_t = len(size)
    _check_n(n, big_t)
    if not 0.0 < floor <= 1.0:
        raise InputError(f"the active strategy's floor must lie in (0, 1], not {floor}")
    if (size < 0).any() or not np.isfinite(size).all():
        raise InputError("the active strategy's topic sizes must be finite and non-negative")
    share = size / size.sum() if size.sum() > 0 else np.full(big_t, 1.0 / big_t)
    pi = n * ((1.0 - floor) * share + floor / big_t)
    certain = np.zeros(big_t, dtype=bool)
    while (pi[~certain] > 1.0 + 1e-12).any():
        certain |= pi >= 1.0
        pi[certain] = 1.0
        rest = ~certain
        pi[rest] *= (n - certain.sum()) / pi[rest].sum()
    return np.minimum(pi, 1.0)


def systematic_pps(inclusion: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One sample of randomised systematic pi-ps sampling (Goodman and Kish 1950; Hartley and Rao
    1962): the candidates in a random order, their inclusion probabilities laid end to end on
    [0, n), the candidates under the points u, u + 1, ..., u + n - 1 (u uniform on [0, 1)). Each
    candidate is chosen with exactly its inclusion probability (each <= 1, summing to the integer
    n), never twice."""
    pi = np.asarray(inclusion, dtype=float)
    n = int(round(pi.sum()))
    order = rng.permutation(len(pi))
    ends = np.cumsum(pi[order])
    points = rng.random() + np.arange(n)
    at = np.minimum(np.searchsorted(ends, points, side="right"), len(pi) - 1)
    return order[at]


def active_design(shortfall: np.ndarray, n: int, floor: float) -> Design:
    """Topics drawn with probability proportional to the judge's **shortfall**, 1 - the systems'
    mean score on the topic under the judge's labels (a measure in [0, 1]), mixed with the uniform
    design by ``floor`` (:func:`pps_inclusion`), by randomised systematic sampling
    (:func:`systematic_pps`)."""
    short = np.clip(np.asarray(shortfall, dtype=float), 0.0, None)
    return Design("active", n, pps_inclusion(short, n, floor))


def _check_n(n: int, n_candidates: int) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= n_candidates:
        raise InputError(
            f"{n} topics asked for: between 1 and the {n_candidates} candidate topics (the pool's topics "
            "with a known passage text, less those excluded)"
        )


def _per_candidate(values: pd.Series, candidates: list[str], strategy: str, what: str) -> np.ndarray:
    missing = [q for q in candidates if q not in values.index]
    if missing:
        raise InputError(
            f"the {strategy} strategy needs {what} on every candidate topic, and {len(missing)} have none "
            f"(e.g. {', '.join(missing[:5])}): label them or use the random strategy"
        )
    return values.loc[candidates].to_numpy(float)


def choose_topics(
    pool: pd.DataFrame,
    labels: pd.DataFrame,
    n: int,
    strategy: str,
    rng: np.random.Generator,
    exclude: Iterable[str] = (),
    topic_scores: pd.Series | None = None,
    floor: float = DEFAULT_FLOOR,
) -> dict[str, float]:
    """The chosen topics (in the order to label them) -> their inclusion probability.
    ``topic_scores`` (active only): qid -> the systems' mean score on the topic under the judge's
    labels."""
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r} (one of {', '.join(STRATEGIES)})")
    candidates = _candidates(pool, exclude)
    _check_n(n, len(candidates))
    if strategy == "random":
        design = random_design(len(candidates), n)
    elif strategy == "stratified":
        mix = _per_candidate(label_mix(pool, labels), candidates, strategy, "a judge label on its pool")
        design = stratified_design(mix, n)
    else:
        if topic_scores is None:
            raise InputError("the active strategy needs the systems' scores under the judge's labels")
        scores = pd.Series(topic_scores, dtype=float)
        scores.index = scores.index.astype(str)
        means = _per_candidate(scores.dropna(), candidates, strategy, "the systems' scores under the judge")
        design = active_design(1.0 - means, n, floor)
    picked = design.draw(rng)
    chosen = {candidates[i]: float(design.inclusion[i]) for i in picked}
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
    topic_scores: pd.Series | None = None,
    floor: float = DEFAULT_FLOOR,
) -> pd.DataFrame:
    """The pairs file (:data:`CHOSEN_COLUMNS`) of ``n`` topics chosen by ``strategy``: each chosen
    topic's pool pairs with a known passage (at most ``cap``, drawn uniformly, in pool order),
    topics in the order to label them. ``pool``: qid, docid, query, passage, text_known;
    ``labels``: the judge's qid, docid, label; ``topic_scores`` and ``floor``: the active
    strategy's (:func:`choose_topics`)."""
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise InputError(f"cap {cap!r}: the pairs per topic must be a positive integer")
    rng = np.random.default_rng(seed)
    topics = choose_topics(pool, labels, n, strategy, rng, exclude, topic_scores, floor)
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
