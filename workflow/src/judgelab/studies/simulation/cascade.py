"""The two-round PersonaJudge cascade (the PersonaJudge paper, sections 3.1, 4.4, 10 and 11).

For one cell (evaluator set x model x demonstration type x shot count) and every evaluator:

1. **Demonstrations.** From the evaluator's pool, one seeded draw per evaluator, shot count and
   round (the same items for every model and demonstration type, so those contrasts are not
   confounded by the draw). Round 1 draws k items balanced between neutral and directional
   labels, round 2 k items balanced between prefer A and prefer B (directional items only).
   With an odd k (the 1-shot case) the extra item comes from a group chosen at random; when a
   group has too few items the rest come from the other group, and with too few items overall
   all are used (the demonstration table records what was drawn). The order is shuffled.
2. **Round 1** (preference detection) for every validation item: rating 1 = no preference ->
   the composed label is N; rating 2 = preference -> round 2.
3. **Round 2** (direction) only where round 1 says preference: rating 1 = A, 2 = B.
4. **Direction-only** (section 10): an evaluator with fewer than ``min_neutral`` neutral labels
   in its pool skips round 1; its composed labels are A or B only.

The Base Judge is the same cascade with no demonstrations (shots 0) and its own prompt (the task
instruction and the query instance, :mod:`.prompt`): its prompt does not depend on the evaluator, so identical requests are asked once; a direction-only evaluator gets the Base
Judge's round-2 answer (the same protocol as its PersonaJudge cells).

Answers: ``answer="parse"`` (the paper's path) parses ``<judgment>X</judgment>`` (X 1 or 2; the
last tag wins; an answer cut off right after the rating also counts); anything else is missing.
``answer="logits"`` asks for the bare rating number and reads the probabilities of the tokens
"1" and "2" at the first answer position (one answer token is generated): the larger one is the
rating; a backend that returns no token probabilities gives a missing answer. A missing round-1
or round-2 answer makes the composed label missing; it is counted, never guessed.

Requests are sent round by round, grouped by evaluator, so the local backend's prefix reuse
evaluates each evaluator's header + demonstrations once per round.
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from judgelab.data.tables import read_tsv
from judgelab.errors import InputError
from judgelab.llm.backends.base import Completion, Request
from judgelab.llm.client import CachedClient
from judgelab.llm.judging import cut_by_bound
from judgelab.studies.simulation.data import DEMO_TYPES, Record
from judgelab.studies.simulation.prompt import BASE, SimulationPrompt
from judgelab.studies.simulation.settings import CascadeJudge, CascadeSettings
from judgelab.studies.simulation.splits import check_demonstrations, content_groups, stable_seed

log = logging.getLogger(__name__)

RATING_TOKENS = ("1", "2")
PREDICTION_COLUMNS = [
    "evaluator",
    "item",
    "gold",
    "pred",
    "answered",
    "direction_only",
    "r1_rating",
    "r1_answer",
    "r1_p1",
    "r1_p2",
    "r1_mass",
    "r2_asked",
    "r2_rating",
    "r2_answer",
    "r2_p1",
    "r2_p2",
    "r2_mass",
    "truncated",
    "decoding",
    "prompt_tokens",
    "latency_s",
    "cache_hits",
]
DEMO_COLUMNS = ["evaluator", "round", "position", "item", "label", "requested", "note"]
_JUDGMENT = re.compile(r"<judgment>\s*([12])\s*(?:</judgment>|$)", re.I)


# --------------------------------------------------------------------------------------------
# Demonstrations


def balanced_sample(
    first: Sequence[Record], second: Sequence[Record], k: int, rng: random.Random
) -> tuple[list[Record], str]:
    """``k`` items, half from each group (the odd one from a group chosen at random), topped up
    from the other group where one is short; shuffled. Returns the items and a note on any
    imbalance ("" when exact)."""
    want = [k // 2, k // 2]
    if k % 2:
        want[0 if rng.random() < 0.5 else 1] += 1
    groups = [list(first), list(second)]
    take = [min(want[i], len(groups[i])) for i in (0, 1)]
    short = [want[i] - take[i] for i in (0, 1)]
    take = [min(len(groups[i]), take[i] + short[1 - i]) for i in (0, 1)]
    picks = rng.sample(groups[0], take[0]) + rng.sample(groups[1], take[1])
    rng.shuffle(picks)
    note = ""
    if take != want:
        note = f"wanted {want[0]}+{want[1]}, pool has {len(groups[0])}+{len(groups[1])}: drew {take[0]}+{take[1]}"
    return picks, note


def round_demos(pool: Sequence[Record], k: int, round_: int, rng: random.Random) -> tuple[list[Record], str]:
    """Round 1: balanced neutral vs directional; round 2: balanced A vs B (directional only)."""
    if round_ == 1:
        return balanced_sample(
            [r for r in pool if r.label == "N"], [r for r in pool if r.label != "N"], k, rng
        )
    return balanced_sample([r for r in pool if r.label == "A"], [r for r in pool if r.label == "B"], k, rng)


def draw_demos(
    pool: Sequence[Record], *, evaluator: str, shots: int, round_: int, seed: int
) -> tuple[list[Record], str]:
    rng = random.Random(stable_seed("demos", seed, evaluator, shots, round_))
    return round_demos(sorted(pool, key=lambda r: r.item), shots, round_, rng)


# --------------------------------------------------------------------------------------------
# Answers


def parse_judgment(text: str) -> str | None:
    """The rating ("1" or "2") of an answer in the paper's format, or None (missing)."""
    found = _JUDGMENT.findall(text or "")
    return found[-1] if found else None


def read_rating(comp: Completion, answer: str) -> tuple[str | None, float | None, float | None]:
    """(rating, p("1"), p("2")) of one answer."""
    probs = comp.label_probs
    p1, p2 = (probs[0], probs[1]) if probs else (None, None)
    if answer == "parse":
        return parse_judgment(comp.text), p1, p2
    if not probs or p1 == p2:
        return None, p1, p2
    assert p1 is not None and p2 is not None  # probs is non-empty: p1, p2 = probs[0], probs[1]
    return ("1" if p1 > p2 else "2"), p1, p2


# --------------------------------------------------------------------------------------------
# The cascade


@dataclass
class _Plan:
    evaluator: str
    validation: list[Record]
    direction_only: bool
    demos: dict[int, list[Record]]


def plan_evaluators(
    records: Sequence[Record], splits: pd.DataFrame, *, shots: int, demo_type: str, settings: CascadeSettings
) -> tuple[list[_Plan], pd.DataFrame]:
    """Per evaluator its validation items, direction-only flag and demonstrations per round; the
    demonstration table. Checks that no validation item is a demonstration."""
    if demo_type != BASE and demo_type not in DEMO_TYPES:
        raise InputError(f"unknown demonstration type {demo_type!r}", key="simulation.demo_types")
    if (demo_type == BASE) != (shots == 0):
        raise InputError(
            "the Base Judge (type 'base') has 0 shots, every other type at least 1", key="simulation.shots"
        )
    by_key = {(r.evaluator, r.item): r for r in records}
    group_of = content_groups(records)  # identical items, and the split's leakage groups below
    if "group" in splits.columns:
        group_of = {**group_of, **dict(zip(splits["item"], splits["group"]))}
    plans, demo_rows = [], []
    for ev, part in splits.sort_values(["evaluator", "order"]).groupby("evaluator", sort=True):
        val = [by_key[(ev, i)] for i in part.loc[part["role"] == "validation", "item"]]
        pool = [by_key[(ev, i)] for i in part.loc[part["role"] == "pool", "item"]]
        direction_only = sum(r.label == "N" for r in pool) < settings.min_neutral
        demos: dict[int, list[Record]] = {1: [], 2: []}
        if shots:
            for round_ in (2,) if direction_only else (1, 2):
                drawn, note = draw_demos(pool, evaluator=ev, shots=shots, round_=round_, seed=settings.seed)
                if not drawn:
                    raise InputError(
                        f"evaluator {ev!r}: its pool of {len(pool)} items has no "
                        f"{'labels' if round_ == 1 else 'directional labels (A or B)'} to draw "
                        f"round {round_}'s demonstrations from",
                        key="simulation.pool",
                    )
                demos[round_] = drawn
                if note:
                    log.warning("%s round %d, %d shots: %s", ev, round_, shots, note)
                demo_rows += [
                    (ev, round_, pos, d.item, d.label, shots, note) for pos, d in enumerate(drawn, start=1)
                ]
            check_demonstrations(
                ev, [d.item for ds in demos.values() for d in ds], [r.item for r in val], group_of
            )
        plans.append(_Plan(ev, val, direction_only, demos))
    return plans, pd.DataFrame(demo_rows, columns=DEMO_COLUMNS)


def _request(
    prompt: SimulationPrompt,
    query: Record,
    demos: list[Record],
    round_: int,
    demo_type: str,
    settings: CascadeSettings,
) -> Request:
    text = prompt.build(
        query,
        demos,
        round_=round_,
        task=settings.task,
        demo_type=demo_type,
        answer=settings.answer,
    )
    return Request.from_messages(
        [{"role": "user", "content": text}],
        settings.request_max_tokens(),
        RATING_TOKENS if settings.answer == "logits" else (),
    )


def build_requests(
    plans: Sequence[_Plan],
    prompt: SimulationPrompt,
    round_: int,
    demo_type: str,
    settings: CascadeSettings,
    only: set[tuple[str, str]] | None = None,
) -> list[tuple[tuple[str, str], Request]]:
    """The round's requests, grouped by evaluator: round 1 for the evaluators that are not
    direction-only, round 2 for the (evaluator, item) keys in ``only``."""
    out = []
    for p in plans:
        for rec in p.validation:
            key = (p.evaluator, rec.item)
            if round_ == 1 and p.direction_only:
                continue
            if round_ == 2 and key not in (only or set()):
                continue
            out.append((key, _request(prompt, rec, p.demos[round_], round_, demo_type, settings)))
    return out


def simulate(
    records: Sequence[Record],
    splits: pd.DataFrame,
    client: CachedClient,
    judge: CascadeJudge,
    *,
    demo_type: str,
    shots: int,
    progress: bool = True,
    desc: str = "simulate",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run the cascade of one cell (``judge``'s prompt texts and cascade settings, ``demo_type``
    and ``shots``) on every evaluator's validation items, asking ``client`` (the judge's model
    session). Returns the prediction table (one row per evaluator and validation item,
    :data:`PREDICTION_COLUMNS`) and the demonstration table (:data:`DEMO_COLUMNS`)."""
    settings, prompt = judge.cascade, judge.simulation_prompt()
    plans, demos = plan_evaluators(records, splits, shots=shots, demo_type=demo_type, settings=settings)
    rows: dict[tuple[str, str], dict] = {}
    for p in plans:
        for rec in p.validation:
            rows[(p.evaluator, rec.item)] = {
                "evaluator": p.evaluator,
                "item": rec.item,
                "gold": rec.label,
                "pred": None,
                "answered": False,
                "direction_only": p.direction_only,
                "r1_rating": None,
                "r1_answer": None,
                "r1_p1": None,
                "r1_p2": None,
                "r1_mass": None,
                "r2_asked": False,
                "r2_rating": None,
                "r2_answer": None,
                "r2_p1": None,
                "r2_p2": None,
                "r2_mass": None,
                "truncated": False,
                "decoding": None,
                "prompt_tokens": 0,
                "latency_s": 0.0,
                "cache_hits": 0,
            }

    cut: dict[tuple[tuple[str, str], int], bool] = {}

    def ask(round_: int, only: set | None = None) -> None:
        todo = build_requests(plans, prompt, round_, demo_type, settings, only)
        answers = client.run([r for _, r in todo], desc=f"{desc} round {round_}", progress=progress)
        for (key, req), (comp, hit) in zip(todo, answers):
            rating, p1, p2 = read_rating(comp, settings.answer)
            # an answer cut by the bound (parse mode; the logits reading's one token is the design)
            cut[key, round_] = settings.answer != "logits" and cut_by_bound(comp, req.max_tokens)
            row = rows[key]
            row["decoding"] = client.decoding(req)
            row.update(
                {
                    f"r{round_}_rating": rating,
                    f"r{round_}_answer": comp.text,
                    f"r{round_}_p1": p1,
                    f"r{round_}_p2": p2,
                    f"r{round_}_mass": comp.label_mass,
                }
            )
            row["prompt_tokens"] += comp.prompt_tokens or 0
            row["latency_s"] += 0.0 if hit else comp.latency_s
            row["cache_hits"] += int(hit)

    ask(1)
    second = set()
    for key, row in rows.items():
        if row["direction_only"] or row["r1_rating"] == "2":
            second.add(key)
        elif row["r1_rating"] == "1":
            row["pred"] = "N"
    for key in second:
        rows[key]["r2_asked"] = True
    ask(2, second)
    for key in second:
        rating = rows[key]["r2_rating"]
        if rating is not None:
            rows[key]["pred"] = "A" if rating == "1" else "B"
    for key, row in rows.items():
        row["answered"] = row["pred"] is not None
        # a missing prediction is truncated when the answer that left it missing was cut
        last = 2 if row["r2_asked"] else 1
        row["truncated"] = not row["answered"] and cut.get((key, last), False)
    out = pd.DataFrame(list(rows.values()), columns=PREDICTION_COLUMNS)
    n_r1 = sum(not p.direction_only for p in plans for _ in p.validation)
    missing_r1 = int(sum(1 for r in rows.values() if not r["direction_only"] and r["r1_rating"] is None))
    missing_r2 = int(sum(1 for k in second if rows[k]["r2_rating"] is None))
    log.info(
        "%s: %d items; round 1 asked %d (%d missing), round 2 asked %d (%d missing); "
        "predicted %s; %d missing (%d truncated)",
        desc,
        len(out),
        n_r1,
        missing_r1,
        len(second),
        missing_r2,
        out["pred"].value_counts().to_dict(),
        int((~out["answered"]).sum()),
        int(out["truncated"].sum()),
    )
    return out, demos


def read_predictions(path) -> pd.DataFrame:
    df = read_tsv(
        path,
        {
            "evaluator": str,
            "item": str,
            "gold": str,
            "pred": str,
            "r1_rating": str,
            "r2_rating": str,
            "r1_answer": str,
            "r2_answer": str,
        },
    )
    missing = set(PREDICTION_COLUMNS) - set(df.columns)
    if missing:
        raise InputError(f"not a prediction table: missing columns {sorted(missing)}", path=str(path))
    bad = df.index[df["pred"].notna() & ~df["pred"].isin(["A", "N", "B"])]
    if len(bad):
        raise InputError(
            f"pred {df.loc[bad[0], 'pred']!r} is not A, N or B", path=str(path), line=int(bad[0]) + 2
        )
    return df
