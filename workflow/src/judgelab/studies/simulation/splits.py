"""Per-evaluator demonstration pool and validation set (PersonaJudge section 4.4), leakage groups and the
leakage check.

For each evaluator the items it judged are split into a demonstration pool (default 40 items)
and a disjoint validation set (default 60). Simulated judgments are scored on the validation set
only; demonstrations are drawn only from the pool.

* **Leakage groups, not ids.** Items that would let a demonstration give a validation item away
  form one group, and a group goes wholly to the pool or wholly to the validation set
  (``group_by``, :data:`GROUPINGS`):

  - ``content``: items with the same context and responses under different ids (PandaLM has 71
    such groups);
  - ``twins``: those, and swapped-response twins - the same context with response A and B
    exchanged (PandaLM has 70 twin pairs);
  - ``context`` (strict, the default): every item sharing its context (the instruction and its
    input; twins and identical items are among them). PandaLM has 170 distinct instructions for
    999 items: under ``content`` grouping, 5 of the paper split's 60 validation items share an
    instruction with a pool item, and 8 of 30 split seeds put a swapped twin on both sides.

  :func:`split_report` counts what was grouped and what the split leaves across pool and
  validation (identical items, twins, shared contexts), per evaluator.
* **Neutral labels on both sides** (``balance_neutral``, default on): neutral judgments cluster
  in few contexts (PandaLM: about 10% of its labels, in 50 of its 170 instructions), so a plain
  seeded order of whole groups can leave a pool without a single neutral label - every evaluator
  then direction-only, PersonaJudge's round 1 never asked (PandaLM's paper split at seed 0 did). The
  seeded order is therefore interleaved: the groups with a neutral label and those without keep
  their seeded order, and the next group is taken from the first kind while the running share of
  neutral labels is below the evaluator set's share, else from the second - so the validation set
  and the pool each get about the set's share. Off: the plain seeded order.
* **Order.** ``mode="coordinated"`` (default) draws one seeded order of all groups and gives
  each evaluator its first groups in that order as validation items, then the next ones as
  pool; evaluators who judged the same items (PandaLM's three annotators judged all of them)
  then share their validation items, so the Base Judge (whose prompt does not depend on the
  evaluator) is asked once per item and the cross-evaluator control (section 14.5) is matched
  on every validation item. ``mode="independent"`` draws a separate seeded order per evaluator.
  Either way, walking the order, a group joins the validation set while it fits in
  ``validation`` items, then the pool while it fits in ``pool``, else it is left unused - except
  where that choice would leave the two sizes impossible to fill exactly with the groups still
  to come (a subset-sum check over them), then the next choice is taken. Where the plain walk
  fills both sizes, the check changes nothing.
* **Leakage.** :func:`check_splits` and :func:`check_demonstrations` verify in code (by item id,
  by leakage group and by content) that no validation item of an evaluator is in its pool or
  among the demonstrations of its prompts, and raise :class:`LeakageError` otherwise.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.data.tables import read_tsv, write_tsv
from judgelab.errors import InputError
from judgelab.studies.simulation.data import Record

log = logging.getLogger(__name__)

SPLIT_COLUMNS = ["evaluator", "item", "role", "order", "group"]
MODES = ("coordinated", "independent")
#: what makes items one leakage group (``simulation.datasets.<name>.group_by``), strictest first
GROUPINGS = ("context", "twins", "content")
#: the subset-sum check of the fill holds (groups + 1) x (validation + 1) x (pool + 1) booleans;
#: above this the plain walk is used alone (it fails with an error where it cannot fill)
MAX_FILL_CELLS = 50_000_000
REPORT_COLUMNS = ["scope", "evaluator", "measure", "count", "of", "note"]


class LeakageError(RuntimeError):
    """A validation item of an evaluator appears in its demonstration pool or its prompts."""


def stable_seed(*parts: object) -> int:
    """A 32-bit seed derived from ``parts`` (stable across processes, unlike ``hash``)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big")


def _union_find(items: Iterable[str], links: Iterable[tuple[str, str]]) -> dict[str, str]:
    """item -> group id (the smallest item id of its connected component)."""
    parent = {i: i for i in items}

    def find(i: str) -> str:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in links:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {i: find(i) for i in parent}


def _items_by(records: Iterable[Record], key) -> dict[tuple, list[str]]:
    out: dict[tuple, list[str]] = defaultdict(list)
    for rec in records:
        k = key(rec)
        if rec.item not in out[k]:
            out[k].append(rec.item)
    return out


def twin_pairs(records: Iterable[Record]) -> list[tuple[str, str]]:
    """Swapped-response twins: item pairs (smaller id first) with the same context and response A
    and B exchanged (responses that differ)."""
    records = list(records)
    by_content = _items_by(records, Record.content_key)
    pairs = set()
    for (context, a, b), items in by_content.items():
        if a == b:
            continue
        for i in items:
            for j in by_content.get((context, b, a), []):
                pairs.add((min(i, j), max(i, j)))
    return sorted(pairs)


def leakage_groups(records: Iterable[Record], by: str) -> dict[str, str]:
    """item id -> leakage group id (the smallest item id of the group), grouping by ``by``
    (:data:`GROUPINGS`): ``content`` identical items, ``twins`` also swapped-response twins,
    ``context`` every item sharing its context."""
    if by not in GROUPINGS:
        raise InputError(f"unknown grouping {by!r}; known: {', '.join(GROUPINGS)}", key="simulation.group_by")
    records = list(records)
    items = sorted({r.item for r in records})
    key = (lambda r: (r.context,)) if by == "context" else Record.content_key
    links = [(g[0], i) for g in _items_by(records, key).values() for i in g[1:]]
    if by == "twins":
        links += twin_pairs(records)
    return _union_find(items, links)


def content_groups(records: Iterable[Record]) -> dict[str, str]:
    """item id -> group id (the smallest item id with the same context and responses)."""
    return leakage_groups(records, "content")


def _fill(sizes: Sequence[int], validation: int, pool: int) -> list[str | None] | None:
    """The role of each group (in order): validation while it fits, then pool while it fits,
    else unused - a choice that would leave the remaining sizes impossible to reach exactly with
    the groups after it is skipped for the next one. None when no choice fills both exactly."""
    n = len(sizes)
    if (n + 1) * (validation + 1) * (pool + 1) > MAX_FILL_CELLS:
        reach = None
    else:
        # reach[i][v, p]: the groups i.. can fill exactly v validation and p pool items
        reach = np.zeros((n + 1, validation + 1, pool + 1), dtype=bool)
        reach[n, 0, 0] = True
        for i in range(n - 1, -1, -1):
            s, nxt = sizes[i], reach[i + 1]
            r = nxt.copy()
            if s <= validation:
                r[s:, :] |= nxt[: validation + 1 - s, :]
            if s <= pool:
                r[:, s:] |= nxt[:, : pool + 1 - s]
            reach[i] = r
        if not reach[0][validation, pool]:
            return None
    roles: list[str | None]
    v, p, roles = validation, pool, []
    for i, s in enumerate(sizes):
        nxt = None if reach is None else reach[i + 1]
        if s <= v and (nxt is None or nxt[v - s, p]):
            roles.append("validation")
            v -= s
        elif s <= p and (nxt is None or nxt[v, p - s]):
            roles.append("pool")
            p -= s
        else:
            roles.append(None)
    return roles if v == p == 0 else None


def balanced_order(order: Sequence[str], neutral: dict[str, int], labels: dict[str, int]) -> list[str]:
    """``order`` interleaved so that the running share of neutral labels follows the overall one:
    the groups with a neutral label (``neutral[g] > 0``) and those without keep their order; the
    next group is the head of the kind that leaves the neutral labels so far closest to the
    overall share of the labels so far (ties: the one without)."""
    total_n, total = sum(neutral[g] for g in order), sum(labels[g] for g in order)
    if not total_n or total_n == total:
        return list(order)
    rate = total_n / total
    with_n = [g for g in order if neutral[g] > 0]
    without = [g for g in order if neutral[g] == 0]
    out: list[str] = []
    cum_n = cum = 0
    i = j = 0
    while i < len(with_n) or j < len(without):
        if i >= len(with_n) or j >= len(without):
            take_n = i < len(with_n)
        else:
            a, b = with_n[i], without[j]
            off_n = abs(cum_n + neutral[a] - rate * (cum + labels[a]))
            off = abs(cum_n - rate * (cum + labels[b]))
            take_n = off_n < off
        g = with_n[i] if take_n else without[j]
        i, j = (i + 1, j) if take_n else (i, j + 1)
        out.append(g)
        cum_n += neutral[g]
        cum += labels[g]
    return out


def make_splits(
    records: Sequence[Record],
    *,
    pool: int,
    validation: int,
    seed: int,
    mode: str = "coordinated",
    group_by: str,
    balance_neutral: bool,
) -> pd.DataFrame:
    """The split table: one row per (evaluator, item) used, ``role`` pool or validation, ``order``
    the item's rank in the evaluator's seeded order, ``group`` its leakage group (``group_by``);
    ``balance_neutral``: the order interleaved by neutral labels (:func:`balanced_order`; over all
    evaluators' labels when coordinated, the evaluator's own when independent). Raises InputError
    (naming the config key) when an evaluator judged too few items, or its groups cannot fill the
    two sizes exactly."""
    if mode not in MODES:
        raise InputError(f"unknown split mode {mode!r}; known: {', '.join(MODES)}", key="simulation.split")
    if pool < 1 or validation < 1:
        raise InputError("pool and validation need at least one item each", key="simulation.pool")
    group_of = leakage_groups(records, group_by)
    items_of: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for rec in records:
        items_of[rec.evaluator][group_of[rec.item]].append(rec.item)
    all_groups = sorted(set(group_of.values()))
    global_order = list(all_groups)
    random.Random(stable_seed("split", seed)).shuffle(global_order)
    neutral: dict[tuple[str | None, str], int] = defaultdict(int)
    labels: dict[tuple[str | None, str], int] = defaultdict(int)
    for rec in records:
        for who in (None, rec.evaluator):  # the set's counts and the evaluator's
            neutral[(who, group_of[rec.item])] += rec.label == "N"
            labels[(who, group_of[rec.item])] += 1
    if balance_neutral and mode == "coordinated":
        global_order = balanced_order(
            global_order,
            {g: neutral[(None, g)] for g in all_groups},
            {g: labels[(None, g)] for g in all_groups},
        )

    rows = []
    for ev in sorted(items_of):
        groups = items_of[ev]
        n_items = sum(len(v) for v in groups.values())
        if n_items < pool + validation:
            raise InputError(
                f"evaluator {ev!r} judged {n_items} items, fewer than pool ({pool}) + "
                f"validation ({validation})",
                key="simulation.validation",
            )
        if mode == "coordinated":
            order = [g for g in global_order if g in groups]
        else:
            order = sorted(groups)
            random.Random(stable_seed("split", seed, ev)).shuffle(order)
            if balance_neutral:
                order = balanced_order(
                    order, {g: neutral[(ev, g)] for g in order}, {g: labels[(ev, g)] for g in order}
                )
        roles = _fill([len(groups[g]) for g in order], validation, pool)
        if roles is None:
            sizes = sorted((len(v) for v in groups.values()), reverse=True)
            raise InputError(
                f"evaluator {ev!r}: its {len(groups)} leakage groups (group_by {group_by!r}; "
                f"sizes {sizes[:12]}{' ...' if len(sizes) > 12 else ''}) cannot fill pool {pool} / "
                f"validation {validation} exactly with whole groups",
                key="simulation.validation",
            )
        rank = 0
        for g, role in zip(order, roles):
            if role is None:
                continue
            for it in sorted(groups[g]):
                rows.append((ev, it, role, rank, g))
                rank += 1
    out = pd.DataFrame(rows, columns=SPLIT_COLUMNS)
    check_splits(out, records)
    return out


def check_splits(splits: pd.DataFrame, records: Sequence[Record]) -> None:
    """Raise :class:`LeakageError` if an evaluator's validation item is also in its pool, by id,
    by leakage group (the split's ``group`` column) or by content (the same context and
    responses under another id)."""
    group_of = content_groups(records)
    for ev, part in splits.groupby("evaluator", sort=True):
        val = part.loc[part["role"] == "validation", "item"]
        pool = part.loc[part["role"] == "pool", "item"]
        both = sorted(set(val) & set(pool))
        if both:
            raise LeakageError(f"evaluator {ev!r}: items {both} are both validation and pool items")
        val_groups = {group_of[i]: i for i in val}
        clash = [(i, val_groups[group_of[i]]) for i in pool if group_of[i] in val_groups]
        if clash:
            raise LeakageError(
                f"evaluator {ev!r}: pool items have the same content as validation "
                f"items (pool, validation): {clash}"
            )
        if "group" in part.columns:
            shared = sorted(
                set(part.loc[part["role"] == "validation", "group"])
                & set(part.loc[part["role"] == "pool", "group"])
            )
            if shared:
                raise LeakageError(
                    f"evaluator {ev!r}: leakage groups {shared} have items in both its pool and "
                    "its validation set"
                )


def split_report(records: Sequence[Record], splits: pd.DataFrame, group_by: str) -> pd.DataFrame:
    """What the split grouped and what it leaves across pool and validation (:data:`REPORT_COLUMNS`).

    Over the evaluator set (``scope`` set): items, identical-content groups and their items,
    swapped-twin pairs, contexts shared by several items and their items, the leakage groups of
    ``group_by``, the groups of several items and their items, the largest group. Per evaluator:
    items in its validation set and pool, the groups they come from, unused items, and its
    validation items that have an identical item, a swapped twin, or a shared context in its own
    pool (all 0 under ``context``; under a weaker grouping, what it lets through)."""
    items = sorted({r.item for r in records})
    identical = [g for g in _items_by(records, Record.content_key).values() if len(g) > 1]
    contexts = [g for g in _items_by(records, lambda r: (r.context,)).values() if len(g) > 1]
    twins = twin_pairs(records)
    groups: dict[str, list[str]] = defaultdict(list)
    for it, g in leakage_groups(records, group_by).items():
        groups[g].append(it)
    multi = [g for g in groups.values() if len(g) > 1]
    n = len(items)
    rows = [
        ("set", "-", "items", n, n, ""),
        ("set", "-", "identical-content groups", len(identical), n, f"{sum(map(len, identical))} items"),
        (
            "set",
            "-",
            "swapped-response twin pairs",
            len(twins),
            n,
            f"{len({i for p in twins for i in p})} items",
        ),
        (
            "set",
            "-",
            "contexts shared by several items",
            len(contexts),
            n,
            f"{sum(map(len, contexts))} items",
        ),
        ("set", "-", f"leakage groups (group_by {group_by})", len(groups), n, "kept whole on one side"),
        (
            "set",
            "-",
            "leakage groups of several items",
            len(multi),
            len(groups),
            f"{sum(map(len, multi))} items",
        ),
        ("set", "-", "largest leakage group", max(map(len, groups.values())) if groups else 0, n, "items"),
    ]
    content_of = {r.item: r.content_key() for r in records}
    context_of = {r.item: r.context for r in records}
    twin_of: dict[str, set[str]] = defaultdict(set)
    for a, b in twins:
        twin_of[a].add(b)
        twin_of[b].add(a)
    judged = defaultdict(set)
    for r in records:
        judged[r.evaluator].add(r.item)
    for ev, part in splits.groupby("evaluator", sort=True):
        val = list(part.loc[part["role"] == "validation", "item"])
        pool = set(part.loc[part["role"] == "pool", "item"])
        pool_content = {content_of[i] for i in pool}
        pool_context = {context_of[i] for i in pool}
        role_groups = {
            role: part.loc[part["role"] == role, "group"].nunique() if "group" in part.columns else 0
            for role in ("validation", "pool")
        }
        rows += [
            (
                "evaluator",
                ev,
                "validation items",
                len(val),
                len(judged[ev]),
                f"{role_groups['validation']} groups",
            ),
            ("evaluator", ev, "pool items", len(pool), len(judged[ev]), f"{role_groups['pool']} groups"),
            ("evaluator", ev, "unused items", len(judged[ev]) - len(val) - len(pool), len(judged[ev]), ""),
            (
                "evaluator",
                ev,
                "validation items with an identical item in the pool",
                sum(content_of[i] in pool_content for i in val),
                len(val),
                "",
            ),
            (
                "evaluator",
                ev,
                "validation items with a swapped twin in the pool",
                sum(bool(twin_of[i] & pool) for i in val),
                len(val),
                "",
            ),
            (
                "evaluator",
                ev,
                "validation items sharing a context with a pool item",
                sum(context_of[i] in pool_context for i in val),
                len(val),
                "",
            ),
        ]
    return pd.DataFrame(rows, columns=REPORT_COLUMNS)


def check_demonstrations(
    evaluator: str, demo_items: Iterable[str], validation_items: Iterable[str], group_of: dict[str, str]
) -> None:
    """Raise :class:`LeakageError` if a demonstration of ``evaluator``'s prompts is one of its
    validation items (by id or content)."""
    val = set(validation_items)
    val_groups = {group_of[i] for i in val}
    bad = sorted(i for i in set(demo_items) if i in val or group_of[i] in val_groups)
    if bad:
        raise LeakageError(f"evaluator {evaluator!r}: validation items {bad} used as demonstrations")


def write_splits(splits: pd.DataFrame, path: str | Path) -> None:
    write_tsv(splits[SPLIT_COLUMNS], path)


def read_splits(path: str | Path) -> pd.DataFrame:
    df = read_tsv(path, {"evaluator": str, "item": str, "role": str, "group": str}, missing=())
    missing = set(SPLIT_COLUMNS) - set(df.columns)
    if missing:
        raise InputError(f"not a split table: missing columns {sorted(missing)}", path=str(path))
    bad = df.index[~df["role"].isin(["pool", "validation"])]
    if len(bad):
        raise InputError(
            f"role {df.loc[bad[0], 'role']!r} is not pool or validation", path=str(path), line=int(bad[0]) + 2
        )
    return df


def evaluator_summary(records: Sequence[Record], splits: pd.DataFrame, min_neutral: int) -> pd.DataFrame:
    """Per evaluator: items, pool and validation sizes, label counts in the pool, and whether the
    evaluator is simulated direction-only (fewer than ``min_neutral`` neutral labels in its pool,
    PersonaJudge section 10)."""
    label = {(r.evaluator, r.item): r.label for r in records}
    rows = []
    for ev, part in splits.groupby("evaluator", sort=True):
        pool = [label[(ev, i)] for i in part.loc[part["role"] == "pool", "item"]]
        val = [label[(ev, i)] for i in part.loc[part["role"] == "validation", "item"]]
        n_all = sum(1 for r in records if r.evaluator == ev)
        rows.append(
            {
                "evaluator": ev,
                "n_items": n_all,
                "n_pool": len(pool),
                "n_validation": len(val),
                "pool_A": pool.count("A"),
                "pool_N": pool.count("N"),
                "pool_B": pool.count("B"),
                "validation_A": val.count("A"),
                "validation_N": val.count("N"),
                "validation_B": val.count("B"),
                "direction_only": pool.count("N") < min_neutral,
            }
        )
    return pd.DataFrame(rows)
