"""Per-evaluator demonstration pool and validation set (seed 001 section 4.4), and the leakage check.

For each evaluator the items it judged are split into a demonstration pool (default 40 items)
and a disjoint validation set (default 60). Simulated judgments are scored on the validation set
only; demonstrations are drawn only from the pool.

* **Instances, not ids.** Items with the same context and responses (PandaLM has 71 such groups
  under different ``idx``) are one instance: a group goes wholly to the pool or wholly to the
  validation set, so no validation instance can reappear as a demonstration under another id.
* **Order.** ``mode="coordinated"`` (default) draws one seeded order of all instances and gives
  each evaluator its first instances in that order as validation items, then the next ones as
  pool; evaluators who judged the same items (PandaLM's three annotators judged all of them)
  then share their validation items, so the Base Judge (whose prompt does not depend on the
  evaluator) is asked once per item and the cross-evaluator control (section 14.5) is matched
  on every validation item. ``mode="independent"`` draws a separate seeded order per evaluator.
  Either way a group joins the validation set while it fits in ``validation`` items, then the
  pool while it fits in ``pool``; items left over are unused.
* **Leakage.** :func:`check_splits` and :func:`check_demonstrations` verify in code (by item id
  and by content) that no validation item of an evaluator is in its pool or among the
  demonstrations of its prompts, and raise :class:`LeakageError` otherwise.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from ...errors import InputError
from ...tables import write_tsv
from .data import Record

log = logging.getLogger(__name__)

SPLIT_COLUMNS = ["evaluator", "item", "role", "order"]
MODES = ("coordinated", "independent")


class LeakageError(RuntimeError):
    """A validation item of an evaluator appears in its demonstration pool or its prompts."""


def stable_seed(*parts: object) -> int:
    """A 32-bit seed derived from ``parts`` (stable across processes, unlike ``hash``)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big")


def content_groups(records: Iterable[Record]) -> dict[str, str]:
    """item id -> group id (the smallest item id with the same context and responses)."""
    by_content: dict[tuple, list[str]] = defaultdict(list)
    for rec in records:
        if rec.item not in by_content[rec.content_key()]:
            by_content[rec.content_key()].append(rec.item)
    out = {}
    for items in by_content.values():
        head = min(items)
        for it in items:
            out[it] = head
    return out


def make_splits(
    records: Sequence[Record],
    *,
    pool: int = 40,
    validation: int = 60,
    seed: int = 0,
    mode: str = "coordinated",
) -> pd.DataFrame:
    """The split table: one row per (evaluator, item) used, ``role`` pool or validation, ``order``
    the item's rank in the evaluator's seeded order. Raises InputError (naming the config key)
    when an evaluator judged too few items."""
    if mode not in MODES:
        raise InputError(f"unknown split mode {mode!r}; known: {', '.join(MODES)}", key="simulation.split")
    if pool < 1 or validation < 1:
        raise InputError("pool and validation need at least one item each", key="simulation.pool")
    group_of = content_groups(records)
    items_of: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for rec in records:
        items_of[rec.evaluator][group_of[rec.item]].append(rec.item)
    all_groups = sorted(set(group_of.values()))
    global_order = list(all_groups)
    random.Random(stable_seed("split", seed)).shuffle(global_order)

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
        counts = {"validation": 0, "pool": 0}
        limits = {"validation": validation, "pool": pool}
        rank = 0
        for g in order:
            members = sorted(groups[g])
            role = next((r for r in ("validation", "pool") if counts[r] + len(members) <= limits[r]), None)
            if role is None:
                continue
            counts[role] += len(members)
            for it in members:
                rows.append((ev, it, role, rank))
                rank += 1
            if counts == limits:
                break
        if counts != limits:
            raise InputError(
                f"evaluator {ev!r}: could not fill pool {pool} / validation {validation} "
                f"with whole content groups (got {counts})",
                key="simulation.validation",
            )
    out = pd.DataFrame(rows, columns=SPLIT_COLUMNS)
    check_splits(out, records)
    return out


def check_splits(splits: pd.DataFrame, records: Sequence[Record]) -> None:
    """Raise :class:`LeakageError` if an evaluator's validation item is also in its pool, by id or
    by content (the same context and responses under another id)."""
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
    df = pd.read_csv(
        path, sep="\t", dtype={"evaluator": str, "item": str, "role": str}, keep_default_na=False
    )
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
    seed 001 section 10)."""
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
