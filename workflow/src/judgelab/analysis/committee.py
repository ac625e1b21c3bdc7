"""Committees as judges: one label per pair from several judges' (or personas') labels, written once
for every study that compares judges (the ranking study's committees; imports no study).

The rules (:data:`RULES`), over the members' labels of one pair that are not missing:

* ``majority`` - the label most members gave; a tie goes to the LOWER of the tied labels (a
  committee split between relevant and not relevant does not call the passage relevant);
* ``median`` - the median label; with an even count the lower of the two middle labels (the
  same conservative tie);
* ``mean`` - the mean label rounded half up (1.5 -> 2, 0.5 -> 1).

A pair is labelled when at least ``quorum`` members labelled it (default: more than half of the
members); otherwise its label is missing (unlabelled, as an unparsed answer), never a guess.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgelab import schema
from judgelab.errors import InputError
from judgelab.params import Settings

#: the committee rules
RULES = ("majority", "median", "mean")

COMMITTEE_COLUMNS = ["qid", "docid", "label", "n_members", "n_labelled", "labels"]


@dataclass(frozen=True)
class Committee(Settings):
    """A committee judge (a study's ``committees.<name>``): its name, its members (judges, or a
    judge's personas, in order: the order of the ``labels`` column), the rule and the quorum
    (members that must have labelled a pair; 0: more than half). A tracked param of its job."""

    name: str
    members: tuple[str, ...]
    rule: str = schema.default_of("peras.committees.<name>.rule")
    quorum: int = schema.default_of("peras.committees.<name>.quorum")

    def __post_init__(self) -> None:
        object.__setattr__(self, "members", tuple(str(m) for m in self.members))
        object.__setattr__(self, "quorum", int(self.quorum))


def check_committee(
    committee: Committee, key: str, members_key: str, known: Sequence[str], what: str
) -> None:
    """The checks every study makes of a committee before any job, each an error naming the key:
    at least 2 members (``members_key``), each one of ``known`` (``what`` says what they are), a
    quorum within 0..members (the rule: the schema's). ``key``: the committee's config key."""
    members = list(committee.members)
    if len(members) < 2:
        raise InputError(f"a committee needs at least 2 members, got {members}", key=f"{key}.{members_key}")
    check_members(members, f"{key}.{members_key}", known, what)
    if not 0 <= committee.quorum <= len(members):
        raise InputError(f"must lie in 0..{len(members)} (0: more than half)", key=f"{key}.quorum")


def check_members(names: Sequence[str], key: str, known: Sequence[str], what: str) -> None:
    """Each of ``names`` (a config list at ``key``) listed once and one of ``known`` (``what``
    says what they are): else one error naming ``key[i]``."""
    names = list(names)
    for i, m in enumerate(names):
        if names.index(m) != i:
            raise InputError(f"{m!r} is listed twice", key=f"{key}[{i}]")
        if m not in known:
            raise InputError(f"{m!r} is not {what}: {list(known)}", key=f"{key}[{i}]")


def combine(labels: Sequence[int], rule: str) -> int:
    """One pair's committee label from its members' (non-missing) labels under ``rule``."""
    values = sorted(int(x) for x in labels)
    if not values:
        raise ValueError("no label to combine")
    if rule == "majority":
        counts = {v: values.count(v) for v in values}
        top = max(counts.values())
        return min(v for v, c in counts.items() if c == top)
    if rule == "median":
        return values[(len(values) - 1) // 2]
    if rule == "mean":
        return int(math.floor(float(np.mean(values)) + 0.5))
    raise ValueError(f"unknown committee rule {rule!r} ({', '.join(RULES)})")


def committee_labels(
    members: Mapping[str, pd.DataFrame], rule: str, quorum: int | None = None
) -> pd.DataFrame:
    """The committee's label table (:data:`COMMITTEE_COLUMNS`) from each member's label table
    (qid, docid, label; missing where the member gave none): one row per pair any member listed,
    ``labels`` the members' labels in member order (``-`` where missing), ``label`` by
    :func:`combine` where at least ``quorum`` members labelled (default ``len(members) // 2 + 1``),
    else missing."""
    if rule not in RULES:
        raise ValueError(f"unknown committee rule {rule!r} ({', '.join(RULES)})")
    names = list(members)
    need = len(names) // 2 + 1 if quorum is None else int(quorum)
    wide = None
    for name in names:
        t = members[name][["qid", "docid", "label"]].astype({"qid": str, "docid": str})
        t = t.drop_duplicates(["qid", "docid"]).rename(columns={"label": name})
        wide = t if wide is None else wide.merge(t, on=["qid", "docid"], how="outer")
    if wide is None:
        return pd.DataFrame(columns=COMMITTEE_COLUMNS)
    rows = []
    for r in wide.itertuples(index=False):
        got = list(r[2:])  # the members' labels, in member order
        present = [int(v) for v in got if not pd.isna(v)]
        rows.append(
            {
                "qid": r.qid,
                "docid": r.docid,
                "label": combine(present, rule) if len(present) >= need and present else pd.NA,
                "n_members": len(names),
                "n_labelled": len(present),
                "labels": " ".join("-" if pd.isna(v) else str(int(v)) for v in got),
            }
        )
    out = pd.DataFrame(rows, columns=COMMITTEE_COLUMNS)
    out["label"] = out["label"].astype("Int64")
    return out.sort_values(["qid", "docid"], kind="stable").reset_index(drop=True)
