"""Evaluator judgment records: schema, loaders, the PandaLM download and the bundled sample cut.

Record schema (one record = one evaluator's judgment of one item; JSON lines, one object a line)
-----------------------------------------------------------------------------------------------

=============  ========  ======================================================================
field          required  meaning
=============  ========  ======================================================================
evaluator      yes       evaluator id (string)
item           yes       item id (string); the same item judged by several evaluators has the
                         same id and must have the same context and responses in every record
context        yes       the conversation context / instruction shown to the evaluator
response_a     yes       candidate response A (shown first)
response_b     yes       candidate response B
label          yes       the evaluator's three-class judgment: ``A`` (prefer A), ``N`` (neutral,
                         no preference) or ``B`` (prefer B)
task           no        task name (e.g. ``helpfulness``): a file whose records name their task
                         can hold several tasks (PersonaJudge: helpfulness and harmlessness,
                         judged by partly the same evaluators); an evaluator set keeps the
                         records of its own ``task`` (:func:`select_task`)
telemetry      no        interface telemetry: a list of typed events, in time order (below)
reasoning      no        retrospective reasoning: an ordered list of sections (below)
=============  ========  ======================================================================

Telemetry event (PersonaJudge section 4.2 "Data Post-Processing" and Table 4): "each interaction is
serialized as a typed event with a fixed set of fields". The paper's text does not reproduce
Table 4's columns, so the fields here are reconstructed from its prose (what was inspected, in
what order, for how long, revisits; the ``rating_selected`` event of section 8):

* ``t`` (number >= 0, required): seconds since the item was opened;
* ``event`` (string, required): the event type, e.g. ``reveal``, ``focus``, ``scroll``,
  ``click``, ``rating_selected``;
* ``target`` (string, required): the interface region, e.g. ``context``, ``response_a``,
  ``response_b``, ``rating``;
* ``value`` (string or number, optional): the event's payload, e.g. the rating selected;
* ``duration`` (number >= 0, optional): dwell time in seconds, where the event has one.

Reasoning section (PersonaJudge section 4.2 and Table 6): "an ordered list of section-specific
reasoning entries, where each entry contains a reasoning section and its associated content";
the Stage 2 interface has the sections conversation understanding, response evaluation and
final judgment selection (section 7.1). Fields: ``section`` (string) and ``content`` (string);
the order of the list is kept.

Every reader raises one :class:`~judgelab.errors.InputError` naming the file and the line of the
first bad record.
"""

from __future__ import annotations

import json
import logging
import math
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgelab.data.sources import KNOWN_FILES, KnownFile, download, line_ends
from judgelab.errors import InputError

log = logging.getLogger(__name__)

LABELS = ("A", "N", "B")
#: PandaLM ``annotatorK`` codes: 0 = tie, 1 = response1 better, 2 = response2 better.
PANDALM_LABELS = {0: "N", 1: "A", 2: "B"}
#: The public source of PandaLM's human-annotated test set (Apache-2.0).
PANDALM_URL = "https://raw.githubusercontent.com/WeOpenML/PandaLM/main/data/testset-v1.json"
# its size and SHA-256 (of the byte-identical copy in ../shared/data/pandalm/): download() checks them
KNOWN_FILES[PANDALM_URL] = KnownFile(
    937899, "cc154f9067c7382d7ea86f8f246511a5e1ac87e1fddd845c5938d789505b07a4"
)
#: Demonstration types of the factorial design (PersonaJudge section 4.3) and the signals they need.
DEMO_TYPES = {"J": (), "J+IT": ("telemetry",), "J+RR": ("reasoning",), "J+IT+RR": ("telemetry", "reasoning")}
FORMATS = ("jsonl", "pandalm")


@dataclass(frozen=True)
class TelemetryEvent:
    t: float
    event: str
    target: str
    value: str | float | None = None
    duration: float | None = None

    def to_json(self) -> dict:
        out: dict[str, Any] = {"t": self.t, "event": self.event, "target": self.target}
        if self.value is not None:
            out["value"] = self.value
        if self.duration is not None:
            out["duration"] = self.duration
        return out


@dataclass(frozen=True)
class ReasoningSection:
    section: str
    content: str

    def to_json(self) -> dict:
        return {"section": self.section, "content": self.content}


@dataclass(frozen=True)
class Record:
    evaluator: str
    item: str
    context: str
    response_a: str
    response_b: str
    label: str
    task: str | None = None
    telemetry: tuple[TelemetryEvent, ...] | None = None
    reasoning: tuple[ReasoningSection, ...] | None = None

    def content_key(self) -> tuple[str, str, str]:
        """What the evaluator saw: two items with equal keys are the same instance."""
        return (self.context, self.response_a, self.response_b)

    def has(self, signal: str) -> bool:
        return bool(getattr(self, signal))

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "evaluator": self.evaluator,
            "item": self.item,
            "context": self.context,
            "response_a": self.response_a,
            "response_b": self.response_b,
            "label": self.label,
        }
        if self.task is not None:
            out["task"] = self.task
        if self.telemetry is not None:
            out["telemetry"] = [e.to_json() for e in self.telemetry]
        if self.reasoning is not None:
            out["reasoning"] = [s.to_json() for s in self.reasoning]
        return out


# --------------------------------------------------------------------------------------------
# Field checks


def _text(obj: dict, name: str, path: str, line: int, *, allow_empty: bool = False) -> str:
    if name not in obj:
        raise InputError(f"missing field {name!r}", path=path, line=line)
    value = obj[name]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and name in ("evaluator", "item"):
        value = str(value)  # numeric ids are common; they are ids, not numbers
    if not isinstance(value, str):
        raise InputError(f"field {name!r} must be a string, got {type(value).__name__}", path=path, line=line)
    if not allow_empty and not value.strip():
        raise InputError(f"field {name!r} is empty", path=path, line=line)
    return value


def _number(value: Any, what: str, path: str, line: int) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise InputError(f"{what} must be a number >= 0, got {value!r}", path=path, line=line)
    return float(value)


def _telemetry(value: Any, path: str, line: int) -> tuple[TelemetryEvent, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise InputError("field 'telemetry' must be a list of events", path=path, line=line)
    events = []
    for i, ev in enumerate(value):
        where = f"telemetry[{i}]"
        if not isinstance(ev, dict):
            raise InputError(f"{where} must be an object", path=path, line=line)
        unknown = set(ev) - {"t", "event", "target", "value", "duration"}
        if unknown:
            raise InputError(
                f"{where} has unknown fields {sorted(unknown)} (allowed: t, event, target, value, duration)",
                path=path,
                line=line,
            )
        for name in ("event", "target"):
            if not isinstance(ev.get(name), str) or not ev[name].strip():
                raise InputError(f"{where}.{name} must be a non-empty string", path=path, line=line)
        if "t" not in ev:
            raise InputError(f"{where} has no time 't'", path=path, line=line)
        val = ev.get("value")
        if val is not None and (isinstance(val, bool) or not isinstance(val, (str, int, float))):
            raise InputError(f"{where}.value must be a string or a number", path=path, line=line)
        duration = ev.get("duration")
        events.append(
            TelemetryEvent(
                _number(ev["t"], f"{where}.t", path, line),
                ev["event"],
                ev["target"],
                val,
                None if duration is None else _number(duration, f"{where}.duration", path, line),
            )
        )
    times = [e.t for e in events]
    if times != sorted(times):
        raise InputError("telemetry events must be in time order (t non-decreasing)", path=path, line=line)
    return tuple(events)


def _reasoning(value: Any, path: str, line: int) -> tuple[ReasoningSection, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise InputError(
            "field 'reasoning' must be a list of {section, content} objects", path=path, line=line
        )
    out = []
    for i, sec in enumerate(value):
        if not isinstance(sec, dict) or set(sec) != {"section", "content"}:
            raise InputError(
                f"reasoning[{i}] must be an object with exactly 'section' and 'content'", path=path, line=line
            )
        for name in ("section", "content"):
            if not isinstance(sec[name], str) or not sec[name].strip():
                raise InputError(f"reasoning[{i}].{name} must be a non-empty string", path=path, line=line)
        out.append(ReasoningSection(sec["section"], sec["content"]))
    return tuple(out)


def record_from_json(obj: Any, path: str, line: int) -> Record:
    """One record from a parsed JSON object; any problem is an error at ``path:line``."""
    if not isinstance(obj, dict):
        raise InputError(f"expected a JSON object, got {type(obj).__name__}", path=path, line=line)
    known = {
        "evaluator",
        "item",
        "context",
        "response_a",
        "response_b",
        "label",
        "task",
        "telemetry",
        "reasoning",
    }
    unknown = set(obj) - known
    if unknown:
        raise InputError(f"unknown fields {sorted(unknown)} (allowed: {sorted(known)})", path=path, line=line)
    label = obj.get("label")
    if label not in LABELS:
        raise InputError(
            f"label {label!r} is not one of A (prefer A), N (neutral), B (prefer B)", path=path, line=line
        )
    task = obj.get("task")
    if task is not None and not isinstance(task, str):
        raise InputError("field 'task' must be a string", path=path, line=line)
    return Record(
        evaluator=_text(obj, "evaluator", path, line),
        item=_text(obj, "item", path, line),
        context=_text(obj, "context", path, line),
        response_a=_text(obj, "response_a", path, line, allow_empty=True),
        response_b=_text(obj, "response_b", path, line, allow_empty=True),
        label=label,
        task=task,
        telemetry=_telemetry(obj.get("telemetry"), path, line),
        reasoning=_reasoning(obj.get("reasoning"), path, line),
    )


class _Checker:
    """Dataset-level checks: one judgment per evaluator and item; an item looks the same in every
    record that judges it."""

    def __init__(self, path: str):
        self.path = path
        self.judged: dict[tuple[str, str], int] = {}
        self.items: dict[str, tuple[tuple[str, str, str], int]] = {}

    def add(self, rec: Record, line: int) -> None:
        key = (rec.evaluator, rec.item)
        if key in self.judged:
            raise InputError(
                f"evaluator {rec.evaluator!r} judges item {rec.item!r} twice "
                f"(first at line {self.judged[key]})",
                path=self.path,
                line=line,
            )
        self.judged[key] = line
        content = rec.content_key()
        if rec.item in self.items and self.items[rec.item][0] != content:
            raise InputError(
                f"item {rec.item!r} has a different context or responses than at line "
                f"{self.items[rec.item][1]}",
                path=self.path,
                line=line,
            )
        self.items.setdefault(rec.item, (content, line))


# --------------------------------------------------------------------------------------------
# Loaders


def read_jsonl(path: str | Path) -> list[Record]:
    """Records from a JSON-lines file in the schema above (blank lines are skipped)."""
    path = str(path)
    checker = _Checker(path)
    out = []
    with open(path, encoding="utf-8") as fh:
        for no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"invalid JSON: {exc.msg} (column {exc.colno})", path=path, line=no
                ) from None
            rec = record_from_json(obj, path, no)
            checker.add(rec, no)
            out.append(rec)
    if not out:
        raise InputError("no records", path=path)
    return out


def _json_array(text: str, path: str) -> Iterator[tuple[Any, int]]:
    """The elements of a top-level JSON array, each with the line it starts on."""
    dec = json.JSONDecoder()
    ws = re.compile(r"\s*")

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    def fail(msg: str, pos: int):
        raise InputError(msg, path=path, line=line_of(pos))

    def skip_ws(pos: int) -> int:
        m = ws.match(text, pos)
        assert m is not None  # \s* matches (the empty string) at any position
        return m.end()

    pos = skip_ws(0)
    if pos >= len(text) or text[pos] != "[":
        fail("expected a JSON array of records", pos)
    pos = skip_ws(pos + 1)
    if pos < len(text) and text[pos] == "]":
        return
    while True:
        try:
            obj, end = dec.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"invalid JSON: {exc.msg} (column {exc.colno})", path=path, line=exc.lineno
            ) from None
        yield obj, line_of(pos)
        pos = skip_ws(end)
        if pos < len(text) and text[pos] == ",":
            pos = skip_ws(pos + 1)
            continue
        if pos < len(text) and text[pos] == "]":
            rest = skip_ws(pos + 1)
            if rest != len(text):
                fail("unexpected text after the JSON array", rest)
            return
        fail("expected ',' or ']' in the JSON array", pos)


def _pandalm_response(obj: dict, name: str, path: str, line: int) -> str:
    value = obj.get(name)
    # The published file stores six responses that were the bare word "True" as JSON true
    # (items 157-164, "Verify the correctness of the given statement."); they are text answers.
    if isinstance(value, bool):
        return "True" if value else "False"
    if not isinstance(value, str):
        raise InputError(f"field {name!r} must be a string, got {type(value).__name__}", path=path, line=line)
    return value


def pandalm_context(instruction: str, input_text: str) -> str:
    """The context shown for a PandaLM item: the instruction, then its input (if any)."""
    return f"{instruction.strip()}\n\n{input_text.strip()}" if input_text.strip() else instruction.strip()


def read_pandalm(path: str | Path) -> list[Record]:
    """Records from PandaLM's ``testset-v1.json``: a JSON array of items with ``idx``,
    ``instruction``, ``input``, ``response1``, ``response2`` and ``annotator1..K`` (0 tie -> N,
    1 response1 better -> A, 2 response2 better -> B). One record per item and annotator; the
    evaluator ids are the field names (``annotator1``, ...)."""
    path = str(path)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    checker = _Checker(path)
    out: list[Record] = []
    annotators: list[str] | None = None
    for obj, line in _json_array(text, path):
        if not isinstance(obj, dict):
            raise InputError(f"expected a JSON object, got {type(obj).__name__}", path=path, line=line)
        idx = obj.get("idx")
        if isinstance(idx, bool) or not isinstance(idx, (int, str)) or str(idx).strip() == "":
            raise InputError(
                f"field 'idx' must be an integer or string id, got {idx!r}", path=path, line=line
            )
        # the published file has an empty instruction (idx 466, its input is the whole task)
        # and empty responses: both are kept; an item must have some context though
        instruction = _text(obj, "instruction", path, line, allow_empty=True)
        input_text = _text(obj, "input", path, line, allow_empty=True)
        if not (instruction.strip() or input_text.strip()):
            raise InputError("both 'instruction' and 'input' are empty", path=path, line=line)
        ra = _pandalm_response(obj, "response1", path, line)
        rb = _pandalm_response(obj, "response2", path, line)
        names = sorted((k for k in obj if re.fullmatch(r"annotator\d+", k)), key=lambda k: int(k[9:]))
        if not names:
            raise InputError("no annotatorK fields", path=path, line=line)
        if annotators is None:
            annotators = names
        elif names != annotators:
            raise InputError(
                f"annotators {names} differ from {annotators} of the first record", path=path, line=line
            )
        context = pandalm_context(instruction, input_text)
        for name in names:
            code = obj[name]
            if isinstance(code, bool) or code not in PANDALM_LABELS:
                raise InputError(
                    f"{name} is {code!r}; expected 0 (tie), 1 (response1 better) or 2 (response2 better)",
                    path=path,
                    line=line,
                )
            rec = Record(name, str(idx), context, ra, rb, PANDALM_LABELS[code])
            checker.add(rec, line)
            out.append(rec)
    if not out:
        raise InputError("no records", path=path)
    return out


def load_records(path: str | Path, fmt: str) -> list[Record]:
    """Records of a dataset file in format ``jsonl`` (the schema above) or ``pandalm``."""
    if fmt == "jsonl":
        return read_jsonl(path)
    if fmt == "pandalm":
        return read_pandalm(path)
    raise InputError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}", key="simulation.format")


def select_task(records: Sequence[Record], task: str | None, source: str | Path = "") -> list[Record]:
    """The records of ``task``: where records name their task, those of another task are left
    out (records that name none are kept); all records when none names a task or ``task`` is
    None. An error (naming ``simulation.task``) when no record is left."""
    named = {r.task for r in records if r.task is not None}
    if task is None or not named:
        return list(records)
    out = [r for r in records if r.task is None or r.task == task]
    if not out:
        raise InputError(
            f"no record of task {task!r} in {source} (its records name the tasks {sorted(named)})",
            key="simulation.task",
        )
    return out


def write_jsonl(records: Iterable[Record], path: str | Path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec.to_json(), ensure_ascii=False) + "\n")


def download_records(dest: str | Path, url: str, fmt: str) -> list[Record]:
    """Fetch a dataset file (``url``: https or a ``file://`` mirror) to ``dest`` and check that it
    loads in format ``fmt``; a file that does not is removed again (one that came without a
    length is checked before it takes its name: JSON lines end with a line end, and the file
    loads)."""

    def loads(path: Path) -> None:
        if fmt == "jsonl":
            line_ends(path)
        load_records(path, fmt)

    download(url, dest, shape=loads)
    try:
        records = load_records(dest, fmt)
    except InputError:
        Path(dest).unlink(missing_ok=True)
        raise
    log.info(
        "%s: %d records, %d evaluators, %d items",
        dest,
        len(records),
        len({r.evaluator for r in records}),
        len({r.item for r in records}),
    )
    return records


def download_pandalm(dest: str | Path, url: str = PANDALM_URL) -> list[Record]:
    """Fetch PandaLM's test set (by default from its public source) to ``dest``."""
    return download_records(dest, url, "pandalm")


# --------------------------------------------------------------------------------------------
# What the data supports


def signals(records: Sequence[Record]) -> dict[str, int]:
    """How many records carry telemetry and reasoning."""
    return {s: sum(r.has(s) for r in records) for s in ("telemetry", "reasoning")}


def unsupported_reason(demo_type: str, records: Sequence[Record]) -> str | None:
    """Why ``demo_type`` cannot run on ``records`` (the demonstrations need a signal that some
    records lack), or None when it can."""
    if demo_type not in DEMO_TYPES:
        raise InputError(
            f"unknown demonstration type {demo_type!r}; known: {list(DEMO_TYPES)}",
            key="simulation.demo_types",
        )
    counts = signals(records)
    for signal in DEMO_TYPES[demo_type]:
        if counts[signal] < len(records):
            return f"{demo_type} needs {signal} on every record; {counts[signal]} of {len(records)} have it"
    return None


def plan_types(demo_types: Sequence[str], records: Sequence[Record]) -> tuple[list[str], dict[str, str]]:
    """The demonstration types the data supports, and the skipped ones with the reason (logged)."""
    keep, skipped = [], {}
    for t in demo_types:
        reason = unsupported_reason(t, records)
        if reason is None:
            keep.append(t)
        else:
            skipped[t] = reason
            log.warning("skipping demonstration type %s: %s", t, reason)
    return keep, skipped


# --------------------------------------------------------------------------------------------
# The bundled sample


def item_chars(obj: dict) -> int:
    return sum(len(str(obj.get(k, ""))) for k in ("instruction", "input", "response1", "response2"))


def cut_pandalm_sample(
    src: str | Path,
    out: str | Path,
    *,
    n_items: int = 30,
    max_chars: int = 200,
    min_neutral: int = 10,
    seed: int = 7,
) -> dict:
    """Cut a small PandaLM sample: ``n_items`` items whose instruction, input and two responses
    total at most ``max_chars`` characters (short prompts: the embedded model reads ~95 tokens/s),
    with distinct contents and string responses. At least ``min_neutral`` of them have a tie from
    some annotator (PandaLM has ~10% ties; the two-round cascade needs neutral demonstrations),
    the rest are drawn from the other short items, all with ``seed``. Items keep their fields and
    ``idx``; the output is a JSON array in the source's layout (4-space indent), in ``idx`` order."""
    records = json.loads(Path(src).read_text(encoding="utf-8"))
    read_pandalm(src)  # the source must be valid
    seen: set[tuple] = set()
    dup: set[tuple] = set()
    for obj in records:
        key = (obj["instruction"], obj["input"], str(obj["response1"]), str(obj["response2"]))
        (dup if key in seen else seen).add(key)
    eligible = [
        o
        for o in records
        if item_chars(o) <= max_chars
        and isinstance(o["response1"], str)
        and isinstance(o["response2"], str)
        and (o["instruction"], o["input"], o["response1"], o["response2"]) not in dup
    ]
    annot = [k for k in records[0] if re.fullmatch(r"annotator\d+", k)]
    ties = [o for o in eligible if any(o[k] == 0 for k in annot)]
    rest = [o for o in eligible if not any(o[k] == 0 for k in annot)]
    rng = random.Random(seed)
    n_tie = min(len(ties), max(min_neutral, round(n_items * len(ties) / max(1, len(eligible)))))
    if n_tie > n_items or len(rest) < n_items - n_tie:
        raise ValueError(
            f"only {len(ties)} tie and {len(rest)} other items have at most {max_chars} "
            f"characters; cannot cut {n_items} items"
        )
    chosen = rng.sample(ties, n_tie) + rng.sample(rest, n_items - n_tie)
    chosen.sort(key=lambda o: o["idx"])
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(chosen, indent=4), encoding="utf-8")
    labels = {k: {lab: sum(PANDALM_LABELS[o[k]] == lab for o in chosen) for lab in LABELS} for k in annot}
    return {
        "items": [o["idx"] for o in chosen],
        "max_chars": max(item_chars(o) for o in chosen),
        "labels": labels,
    }
