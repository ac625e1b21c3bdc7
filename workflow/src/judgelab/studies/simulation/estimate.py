"""The evaluator simulation's requests for ``judgelab estimate``: the two-round cascade of every cell,
built with the jobs' own builders; the second round only where the first round's cached answer says
"preference" (else every validation item counts, an upper bound).

An evaluator set not downloaded yet stands in by its known size, flagged approximate: PandaLM's
measured size (:data:`PANDALM_SIZE`); a ``jsonl`` file, whose size is only known once it is here,
by the config's own sizes - its ``evaluators`` (else one: the counts are per evaluator), ``pool`` +
``validation`` items each - with PandaLM's typical lengths, telemetry and reasoning on every record
(:data:`JSONL_STAND_IN`), and every configured demonstration type counted (the file decides which
run: an upper bound).
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

from judgelab.errors import InputError
from judgelab.llm.backends.base import Completion, Request
from judgelab.project.records import made_for
from judgelab.studies.simulation import cascade
from judgelab.studies.simulation.cascade import build_requests, plan_evaluators, read_rating
from judgelab.studies.simulation.data import (
    ReasoningSection,
    Record,
    TelemetryEvent,
    load_records,
    select_task,
)
from judgelab.studies.simulation.splits import make_splits


class PandaLMSize(TypedDict):
    """The shape of :data:`PANDALM_SIZE`."""

    items: int
    annotators: int
    context: float
    response_a: float
    response_b: float
    labels: dict[str, float]


#: PandaLM's ``testset-v1.json`` measured on the full file: items, annotators, mean characters
#: of the context (instruction + input), response 1 and response 2, and the label shares
#: A / N / B over the three annotators. It stands in, flagged approximate, when the file is not
#: downloaded yet.
PANDALM_SIZE: PandaLMSize = {
    "items": 999,
    "annotators": 3,
    "context": 260.4,
    "response_a": 196.9,
    "response_b": 186.8,
    "labels": {"A": 0.417, "N": 0.109, "B": 0.474},
}


def pandalm_stand_in() -> list:
    """Records shaped like PandaLM's full test set (:data:`PANDALM_SIZE`): distinct items of the
    typical lengths, each annotator's labels drawn with the measured shares (seeded)."""
    size = PANDALM_SIZE
    rng = random.Random(0)
    labels, weights = list(size["labels"]), list(size["labels"].values())
    out = []
    for i in range(size["items"]):
        context = f"{i} " + "x" * round(size["context"])
        for k in range(1, size["annotators"] + 1):
            out.append(
                Record(
                    f"annotator{k}",
                    str(i),
                    context,
                    "x" * round(size["response_a"]),
                    "x" * round(size["response_b"]),
                    rng.choices(labels, weights)[0],
                )
            )
    return out


#: What stands in for the telemetry and reasoning of a ``jsonl`` file not downloaded yet: the
#: events of one judgment in the PersonaJudge interface (the context and the two responses
#: revealed, then the rating selected) and the three sections of its retrospective reasoning, each
#: section as long as a typical PandaLM response (a guess: no measured reasoning length is here).
STAND_IN_REVEALED = ("context", "response_a", "response_b")
STAND_IN_SECTIONS = ("conversation understanding", "response evaluation", "final judgment")
STAND_IN_SECTION_CHARS = round(PANDALM_SIZE["response_a"])


def jsonl_stand_in(d: str, s: dict) -> tuple[list, str]:
    """Records standing in for the ``jsonl`` file of evaluator set ``d`` (its config ``s``) not
    downloaded yet: its configured evaluators (else one) each judging ``pool`` + ``validation``
    shared items of PandaLM's typical lengths and label shares (seeded), with telemetry and
    reasoning (:data:`STAND_IN_REVEALED`, :data:`STAND_IN_SECTIONS`); and the note saying so."""
    size, rng = PANDALM_SIZE, random.Random(0)
    evaluators = list(s["evaluators"] or []) or ["evaluator1"]
    n = int(s["pool"]) + int(s["validation"])
    labels, weights = list(size["labels"]), list(size["labels"].values())
    sections = tuple(ReasoningSection(name, "x" * STAND_IN_SECTION_CHARS) for name in STAND_IN_SECTIONS)

    def events(label: str) -> tuple[TelemetryEvent, ...]:
        revealed = [
            TelemetryEvent(float(i), "reveal", t, duration=1.0) for i, t in enumerate(STAND_IN_REVEALED)
        ]
        return (*revealed, TelemetryEvent(float(len(revealed)), "rating_selected", "rating", value=label))

    out = []
    for i in range(n):
        for ev in evaluators:
            label = rng.choices(labels, weights)[0]
            context = f"{i} " + "x" * round(size["context"])
            a, b = "x" * round(size["response_a"]), "x" * round(size["response_b"])
            out.append(Record(ev, str(i), context, a, b, label, s["task"], events(label), sections))
    who = (
        f"its {len(evaluators)} configured evaluators"
        if s["evaluators"]
        else "one evaluator (the file names them: counts are per evaluator)"
    )
    how = (
        f"not downloaded yet (its size is unknown until then): {who} x {n} items (pool + "
        "validation) of PandaLM's typical lengths, with telemetry and reasoning, stand in, and "
        "every configured demonstration type is counted (the file decides which run: an upper "
        f"bound); --table {d}=PATH counts a local copy exactly"
    )
    return out, how


def estimate_data(plan, d: str, ctx) -> tuple[list, object, bool]:
    """(records, splits, exact) of an evaluator set for ``judgelab estimate``: from a file
    given with ``--table NAME=PATH`` (in the set's format), the prepared records, the source
    file, or - not downloaded yet - records of its known size (approximate: PandaLM's measured
    size, a ``jsonl`` file's configured sizes, :func:`jsonl_stand_in`)."""
    memo = ctx.memo.setdefault("simulation", {})
    if d in memo:
        return memo[d]
    s = plan.sets[d]
    given = ctx.tables.get(d)
    prepared = ctx.directory / plan.project.path("simulation_records", dataset=d)
    source = Path(plan.source_file(d))
    source = source if source.is_absolute() else ctx.directory / source
    exact = True
    records_path = plan.project.path("simulation_records", dataset=d)
    files = {"source": plan.source_file(d)}
    why = (
        made_for(
            ctx.directory,
            records_path,
            json.loads(plan.selection(d).param()),
            plan.project.inputs_of(files).values(),
            plan.project.bundled_of(files),
        )
        if prepared.exists()
        else None
    )
    passed = f" (prepared records {prepared} not used: {why})" if why else ""
    if given is not None:
        records, how = load_records(given, s["format"]), f"file {given}"
    elif prepared.exists() and why is None:
        records, how = load_records(prepared, "jsonl"), f"prepared records {prepared}"
    elif source.exists():
        records, how = load_records(source, s["format"]), f"{s['source']} file {source}{passed}"
    elif s["format"] == "pandalm":
        records, exact = pandalm_stand_in(), False
        how = (
            f"not downloaded yet: PandaLM's known size ({PANDALM_SIZE['items']} items x "
            f"{PANDALM_SIZE['annotators']} annotators, typical lengths and label shares){passed}"
        )
    elif s["source"] == "download":
        (records, how), exact = jsonl_stand_in(d, s), False
        how += passed
    else:
        raise InputError(
            f"file {source} does not exist; pass --table {d}=PATH for another copy",
            key=f"simulation.datasets.{d}.path",
        )
    records = select_task(records, s["task"], how)
    keep = set(s["evaluators"] or [])
    if keep:
        records = [r for r in records if r.evaluator in keep]
    splits = make_splits(
        records,
        pool=int(s["pool"]),
        validation=int(s["validation"]),
        seed=int(s["seed"]),
        mode=s["split"],
        group_by=s["group_by"],
        balance_neutral=bool(s["balance_neutral"]),
    )
    if exact:
        ctx.notes.append(f"simulation {d}: {len(records):,} records from {how}")
    else:
        ctx.approximate(d, f"simulation {d}: {len(records):,} records, {how}")
    memo[d] = (records, splits, exact)
    return memo[d]


def requests(plan, job, ctx) -> Iterator[tuple[str, Request, bool]]:
    """Round 1 of every evaluator that is not direction-only; round 2 where round 1 says
    preference - known where the round-1 answer is cached, elsewhere counted as asked (an
    upper bound) - and for every item of a direction-only evaluator. A request the job sends
    twice (the Base Judge's prompt does not depend on the evaluator) is answered once: the
    repeat counts as cached."""
    w = job.wc
    d, model, demo_type, shots = w["dataset"], job.model, w["demo_type"], int(w["shots"])
    records, splits, exact = estimate_data(plan, d, ctx)
    judge = plan.judge(d, model, demo_type)  # the job's judge: its requests are the job's
    settings, prompt = judge.cascade, judge.simulation_prompt()
    quiet = logging.getLogger(cascade.__name__)  # draw imbalances go to the job's log, not here
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        plans, _ = plan_evaluators(records, splits, shots=shots, demo_type=demo_type, settings=settings)
    finally:
        quiet.setLevel(level)
    seen: dict[tuple, str | None] = {}  # request -> its round-1 rating ("?" unknown)
    second: set[tuple[str, str]] = set()
    unknown: set[tuple[str, str]] = set()
    for key, req in build_requests(plans, prompt, 1, demo_type, settings):
        rkey = (req.messages, req.max_tokens, req.label_tokens)
        if rkey in seen:
            rating, cached = seen[rkey], True
        else:
            hit = ctx.cached(model, req) if exact else None
            cached = hit is not None
            rating = read_rating(Completion.from_json(hit), settings.answer)[0] if hit else "?"
            seen[rkey] = rating
        yield "simulation", req, cached
        if rating == "?":
            unknown.add(key)
        elif rating == "2":
            second.add(key)
    second |= {(p.evaluator, r.item) for p in plans if p.direction_only for r in p.validation}
    sent: set[tuple] = set()
    for key, req in build_requests(plans, prompt, 2, demo_type, settings, second | unknown):
        rkey = (req.messages, req.max_tokens, req.label_tokens)
        cached = rkey in sent or (key not in unknown and exact and ctx.cached(model, req) is not None)
        sent.add(rkey)
        yield "simulation", req, cached
