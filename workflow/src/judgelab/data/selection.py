"""Which pairs of a dataset table a run judges: an explicit query list, queries left out, a seeded
subset of whole topics matching published per-grade counts (:func:`match_topics`, exhaustive
for up to :data:`EXACT_TOPICS` topics), the first queries, a seeded per-grade sample
(:func:`select` applies them in that order)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.data.labels import GRADES
from judgelab.errors import InputError

log = logging.getLogger(__name__)


def select(
    table: pd.DataFrame,
    *,
    queries: list[str] | None = None,
    exclude_queries: list[str] | None = None,
    match_counts: dict | None = None,
    max_queries: int | None = None,
    per_grade: int | None = None,
    seed: int = 0,
    name: str | None = None,
) -> pd.DataFrame:
    """Subset a table, in this order: an explicit query list, the queries to leave out, a seeded
    subset of whole topics with given counts (``match_counts``: ``{topics, grades}``, see
    :func:`match_topics`), the first ``max_queries`` queries (file order), then a label-stratified
    sample of at most ``per_grade`` pairs per grade, drawn with ``seed``."""
    out = table

    def key(k: str) -> str:
        return f"datasets.{name}.{k}" if name else k

    for which, ids in (("queries", queries), ("exclude_queries", exclude_queries)):
        if not ids:
            continue
        known = set(out["qid"])
        missing = [q for q in ids if str(q) not in known]
        if missing:
            raise InputError(f"queries not in the dataset: {missing}", key=key(which))
        chosen = out["qid"].isin([str(q) for q in ids])
        out = out[chosen if which == "queries" else ~chosen]
    if match_counts:
        if max_queries or per_grade:
            raise InputError(
                "match_counts selects whole topics with the given pairs per grade; max_queries and "
                "per_grade would cut that subset (set them to null)",
                key=key("match_counts"),
            )
        qids, info = match_topics(
            out,
            int(match_counts["topics"]),
            [int(g) for g in match_counts["grades"]],
            seed,
            key=key("match_counts"),
        )
        log.info(
            "%s: %d topics with pairs per grade %s (seed %d; %s): %s",
            name or "dataset",
            len(qids),
            list(match_counts["grades"]),
            seed,
            info["how"],
            " ".join(qids),
        )
        out = out[out["qid"].isin(qids)]
    if max_queries:
        keep = list(dict.fromkeys(out["qid"]))[:max_queries]
        out = out[out["qid"].isin(keep)]
    if per_grade:
        # one seeded generator for every grade: each grade's draw is its own (a fresh
        # random_state=seed per grade drew the same positions in each, e.g. one query's pairs)
        rng = np.random.default_rng(seed)
        parts = [
            g.sample(n=min(per_grade, len(g)), random_state=rng) for _, g in out.groupby("grade", sort=True)
        ]
        out = pd.concat(parts) if parts else out.iloc[0:0]
    return out.sort_values(["qid", "docid"], kind="stable").reset_index(drop=True)


#: Up to this many topics the search is exhaustive (meet in the middle: 2 x 2^22 subset sums).
EXACT_TOPICS = 44


#: With more topics, each draw keeps a seeded EXACT_TOPICS of them and searches those exhaustively.
MAX_DRAWS = 20


def topic_grade_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Pairs per grade of every topic (rows: qid in string order, columns: the grades)."""
    counts = table.groupby(["qid", "grade"]).size().unstack(fill_value=0)
    counts = counts.reindex(columns=list(GRADES), fill_value=0)
    return counts.sort_index(key=lambda ix: ix.astype(str))


def subsets_with_counts(counts: np.ndarray, topics: int, grades: Sequence[int]) -> list[tuple[int, ...]]:
    """Every subset of ``topics`` rows of ``counts`` (topics x grades, pairs per grade) whose
    column sums are exactly ``grades``, as sorted row-index tuples in ascending order. Exhaustive
    meet in the middle: the cardinality and the per-grade sums are packed into one integer (each
    in a field wide enough for the total over all rows, so sums never carry into the next field),
    the subset sums of each half are enumerated, pruned where a field exceeds its target, and the
    halves are joined on sum = target. Fine up to about :data:`EXACT_TOPICS` rows."""
    counts = np.asarray(counts, dtype=np.int64)
    n = len(counts)
    target = [int(topics), *(int(g) for g in grades)]
    caps = [n, *(int(c) for c in counts.sum(axis=0))]
    if any(t < 0 or t > c for t, c in zip(target, caps)):
        return []
    widths = [max(1, c.bit_length()) for c in caps]
    if sum(widths) > 63:
        raise ValueError(f"too many pairs per grade ({caps[1:]}) to pack into 63 bits")
    shifts = np.cumsum([0, *widths[:-1]]).tolist()
    fields = list(zip(shifts, [(1 << w) - 1 for w in widths], target))
    packed = [sum(int(v) << s for v, s in zip((1, *row), shifts)) for row in counts.tolist()]
    goal = np.int64(sum(t << s for t, s in zip(target, shifts)))

    def half(values: list[int]) -> tuple[np.ndarray, np.ndarray]:
        sums, masks = np.zeros(1, np.int64), np.zeros(1, np.int64)
        for bit, v in enumerate(values):
            grown = sums + np.int64(v)
            keep = np.ones(len(grown), dtype=bool)
            for shift, mask, limit in fields:
                keep &= ((grown >> shift) & mask) <= limit
            sums = np.concatenate([sums, grown[keep]])
            masks = np.concatenate([masks, masks[keep] | np.int64(1 << bit)])
        return sums, masks

    h = n // 2
    left, left_masks = half(packed[:h])
    right, right_masks = half(packed[h:])
    order = np.argsort(right)
    right, right_masks = right[order], right_masks[order]
    need = goal - left
    by_need = np.argsort(need)  # sorted queries: searchsorted walks `right` once
    lo = np.empty_like(by_need)
    lo[by_need] = np.searchsorted(right, need[by_need], "left")
    hit = np.flatnonzero(right[np.minimum(lo, len(right) - 1)] == need)
    found = []
    for i in hit:
        j = lo[i]
        while j < len(right) and right[j] == need[i]:
            m = int(left_masks[i]) | (int(right_masks[j]) << h)
            found.append(tuple(k for k in range(n) if m >> k & 1))
            j += 1
    return sorted(found)


def match_topics(
    table: pd.DataFrame, topics: int, grades: Sequence[int], seed: int, *, key: str = "match_counts"
) -> tuple[list[str], dict]:
    """A seeded subset of ``topics`` whole topics of ``table`` whose pairs per grade are exactly
    ``grades`` (grades 0, 1, 2, 3): the PERAS paper's Table 4 gives such counts but not the topic lists.
    With at most :data:`EXACT_TOPICS` topics every matching subset is found
    (:func:`subsets_with_counts`) and one is drawn with ``seed``, uniformly; with more, each of up
    to :data:`MAX_DRAWS` seeded draws keeps :data:`EXACT_TOPICS` topics and searches those
    exhaustively, and one subset of the first draw that has any is drawn with ``seed``. Returns
    the topic ids (string order) and what the search did (``how``, ``matching``: the subsets found
    among the topics searched, ``exhaustive``). No subset is an error naming ``key``."""
    if len(grades) != len(GRADES):
        raise InputError(f"expected {len(GRADES)} pair counts (grades 0-3), got {list(grades)}", key=key)
    counts = topic_grade_counts(table)
    qids, matrix = [str(q) for q in counts.index], counts.to_numpy()
    n = len(qids)
    want = (
        f"{topics} topics with {list(grades)} pairs per grade (of {n} topics, {matrix.sum(axis=0).tolist()})"
    )
    if topics > n or any(g > t for g, t in zip(grades, matrix.sum(axis=0))):
        raise InputError(f"cannot take {want}: not enough topics or pairs", key=key)
    rng = np.random.RandomState(seed)  # the legacy generator: its streams never change
    if n <= EXACT_TOPICS:
        found = subsets_with_counts(matrix, topics, grades)
        if not found:
            raise InputError(f"no subset of {want} (exhaustive search)", key=key)
        pick = found[rng.randint(len(found))]
        how = f"{len(found)} matching subsets of the {n} topics (exhaustive), one drawn"
        return sorted(qids[i] for i in pick), {"how": how, "matching": len(found), "exhaustive": True}
    for draw in range(1, MAX_DRAWS + 1):
        keep = np.sort(rng.choice(n, EXACT_TOPICS, replace=False))
        found = subsets_with_counts(matrix[keep], topics, grades)
        if found:
            pick = found[rng.randint(len(found))]
            how = (
                f"draw {draw}: {len(found)} matching subsets of {EXACT_TOPICS} seeded topics of the "
                f"{n} (exhaustive among them), one drawn"
            )
            chosen = sorted(qids[keep[i]] for i in pick)
            return chosen, {"how": how, "matching": len(found), "exhaustive": False}
    raise InputError(
        f"no subset of {want} in {MAX_DRAWS} seeded draws of {EXACT_TOPICS} topics each (not an "
        "exhaustive search: the counts may be unreachable; check them or try another seed)",
        key=key,
    )
