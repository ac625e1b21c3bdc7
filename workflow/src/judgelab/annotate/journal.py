"""An annotator's journal, its replay, and the qrels file made from it.

Every event - ``label``, ``skip``, ``undo`` - is one JSON line appended to
``<folder>/<annotator>.journal.jsonl``, flushed and synced to disk (``os.fsync``) before the
page is answered, with the annotator, the UTC time, the pair (``qid``, ``docid``) and its text
digest (:func:`judgelab.annotate.pairs.text_digest`), the label and the note. After each event the
annotator's TREC qrels file ``<folder>/<annotator>.qrels`` (``qid 0 docid label``, one line per
labelled pair, in the order they were labelled) is rewritten from the journal through a temporary
file and ``os.replace``, so a reader never sees half a file.

**Replay.** The journal is the state: the effective events are the label and skip events not
taken back by an undo (an undo takes back the latest effective one). A pair is labelled by its
latest effective label; the pair to show is the first pair of the pairs file that is neither
labelled nor skipped, then the skipped ones in the order they were (last) skipped. A server that
is killed loses nothing acknowledged: on restart the replay resumes at that pair. A last line
without its end of line was cut by the kill before it was synced, so never acknowledged: it is
dropped with a warning. Any other line that does not read, names a pair the pairs file does not
list, or carries another digest (the pair's text changed) is an error naming the journal's line.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from judgelab.annotate.pairs import Pair, Scale
from judgelab.errors import InputError

log = logging.getLogger("judgelab.annotate")

EVENTS = ("label", "skip", "undo")

#: An annotator's name is part of the journal's and qrels file's names.
ANNOTATOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

#: The longest note kept with an event, in characters.
MAX_NOTE = 2000


class Refused(ValueError):
    """A request the session refuses, nothing written; its message is shown on the page."""


@dataclass(frozen=True)
class Event:
    """One line of the journal."""

    event: str
    annotator: str
    time: str
    qid: str
    docid: str
    digest: str
    label: int | None = None
    note: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.qid, self.docid)


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def effective(events: Sequence[Event]) -> list[Event]:
    """The label and skip events no undo took back, in order (an undo takes back the latest)."""
    stack: list[Event] = []
    for ev in events:
        if ev.event == "undo":
            stack.pop()
        else:
            stack.append(ev)
    return stack


def labels_of(events: Sequence[Event]) -> dict[tuple[str, str], int]:
    """Each labelled pair's latest effective label, in the order of those labels."""
    out: dict[tuple[str, str], int] = {}
    for ev in effective(events):
        if ev.event == "label":
            out.pop(ev.key, None)
            out[ev.key] = int(ev.label)  # type: ignore[arg-type]
    return out


def qrels_text(events: Sequence[Event]) -> str:
    """The TREC qrels lines (``qid 0 docid label``) of the labelled pairs, in labelling order."""
    return "".join(f"{q} 0 {d} {label}\n" for (q, d), label in labels_of(events).items())


def sync_folder(folder: Path) -> None:
    """Sync a folder's entries (a new or replaced file's name survives a power cut)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, text: str) -> None:
    """``text`` into ``path`` through a synced temporary file in its folder and ``os.replace``."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    sync_folder(path.parent)


class Session:
    """One annotator's labelling of one pairs file on one scale, kept in ``folder``: the journal
    replayed at start, every accepted event appended and synced, the qrels rewritten after it."""

    def __init__(self, pairs: Sequence[Pair], scale: Scale, folder: str | Path, annotator: str):
        if not ANNOTATOR.fullmatch(annotator):
            raise InputError(
                f"annotator name {annotator!r}: letters, digits, '.', '_' and '-' only (at most 64), "
                "starting with a letter or digit (it names the journal and qrels files)"
            )
        self.pairs = list(pairs)
        self.by_key = {p.key: p for p in self.pairs}
        self.scale, self.annotator = scale, annotator
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.journal = self.folder / f"{annotator}.journal.jsonl"
        self.qrels = self.folder / f"{annotator}.qrels"
        self.events: list[Event] = self._replay()
        write_atomically(self.qrels, qrels_text(self.events))

    # -- the journal on disk ------------------------------------------------------------------

    def _replay(self) -> list[Event]:
        if not self.journal.exists():
            return []
        path = str(self.journal)
        data = self.journal.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            log.warning(
                "%s:%d: dropped a last line cut before it was synced (%d bytes, never acknowledged)",
                path,
                data.count(b"\n") + 1,
                len(data) - cut,
            )
            with open(self.journal, "r+b") as fh:
                fh.truncate(cut)
                fh.flush()
                os.fsync(fh.fileno())
            data = data[:cut]
        events: list[Event] = []
        depth = 0
        # split at b"\n" only: a note may hold other line breaks (U+2028), written as they are
        for no, raw in enumerate(data.split(b"\n")[:-1] if data else [], start=1):
            try:
                record = json.loads(raw.decode("utf-8"))
                ev = Event(**record)
            except (UnicodeDecodeError, json.JSONDecodeError, TypeError) as exc:
                raise InputError(f"not a journal event: {exc}", path=path, line=no) from None
            if ev.event not in EVENTS:
                raise InputError(f"unknown event {ev.event!r} (one of {list(EVENTS)})", path=path, line=no)
            if ev.annotator != self.annotator:
                raise InputError(
                    f"an event of {ev.annotator!r} in {self.annotator!r}'s journal", path=path, line=no
                )
            pair = self.by_key.get(ev.key)
            if pair is None:
                raise InputError(
                    f"pair {ev.qid} {ev.docid} is not in the pairs file: resume with the pairs file this "
                    "journal was made with",
                    path=path,
                    line=no,
                )
            if ev.digest != pair.digest:
                raise InputError(
                    f"the text of pair {ev.qid} {ev.docid} changed since it was labelled (digest "
                    f"{ev.digest[:12]}..., now {pair.digest[:12]}...; pairs file line {pair.line})",
                    path=path,
                    line=no,
                )
            if ev.event == "label":
                try:
                    self.scale.check(ev.label)
                except ValueError as exc:
                    raise InputError(str(exc), path=path, line=no) from None
            if ev.event == "undo":
                if depth == 0:
                    raise InputError("an undo with nothing to take back", path=path, line=no)
                depth -= 1
            else:
                depth += 1
            events.append(ev)
        return events

    def _append(self, ev: Event) -> None:
        line = json.dumps(asdict(ev), ensure_ascii=False) + "\n"
        new = not self.journal.exists()
        with open(self.journal, "a", encoding="utf-8", newline="\n") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        if new:
            sync_folder(self.folder)
        self.events.append(ev)
        write_atomically(self.qrels, qrels_text(self.events))

    # -- the state ------------------------------------------------------------------------------

    def labels(self) -> dict[tuple[str, str], int]:
        return labels_of(self.events)

    def current(self) -> Pair | None:
        """The pair to show: the first neither labelled nor skipped, then the skipped ones in
        the order they were last skipped; None when every pair is labelled."""
        stack = effective(self.events)
        labelled = set(labels_of(self.events))
        skipped: dict[tuple[str, str], None] = {}
        for ev in stack:
            if ev.event == "skip" and ev.key not in labelled:
                skipped.pop(ev.key, None)
                skipped[ev.key] = None
        for p in self.pairs:
            if p.key not in labelled and p.key not in skipped:
                return p
        return self.by_key[next(iter(skipped))] if skipped else None

    def progress(self) -> dict[str, int]:
        labelled = len(self.labels())
        stack = effective(self.events)
        skipped = {ev.key for ev in stack if ev.event == "skip"} - set(self.labels())
        return {"labelled": labelled, "skipped": len(skipped), "total": len(self.pairs)}

    def can_undo(self) -> bool:
        return bool(effective(self.events))

    # -- the events a request asks for ----------------------------------------------------------

    def _pair_to_act_on(self, qid: object, docid: object) -> Pair:
        if not isinstance(qid, str) or not isinstance(docid, str):
            raise Refused("a label or skip names its pair by qid and docid (strings)")
        pair = self.by_key.get((qid, docid))
        if pair is None:
            raise Refused(f"unknown pair {qid} {docid}: not in the pairs file")
        if pair != self.current():
            raise Refused(f"pair {qid} {docid} is not the one to label now (page out of date?): reloaded")
        return pair

    @staticmethod
    def _note(note: object) -> str:
        if note is None:
            return ""
        if not isinstance(note, str):
            raise Refused("the note must be text")
        if len(note) > MAX_NOTE:
            raise Refused(f"the note is longer than {MAX_NOTE} characters")
        return note

    def label(self, qid: object, docid: object, value: object, note: object = "") -> Event:
        """Label the current pair ``value``; :class:`Refused` (nothing written) for a label
        outside the scale, an unknown pair or one that is not the current pair."""
        try:
            label = self.scale.check(value)
        except ValueError as exc:
            raise Refused(str(exc)) from None
        pair = self._pair_to_act_on(qid, docid)
        ev = Event(
            "label", self.annotator, utc_now(), pair.qid, pair.docid, pair.digest, label, self._note(note)
        )
        self._append(ev)
        return ev

    def skip(self, qid: object, docid: object, note: object = "") -> Event:
        pair = self._pair_to_act_on(qid, docid)
        ev = Event(
            "skip", self.annotator, utc_now(), pair.qid, pair.docid, pair.digest, None, self._note(note)
        )
        self._append(ev)
        return ev

    def undo(self) -> Event:
        """Take back the latest effective label or skip; :class:`Refused` when there is none."""
        stack = effective(self.events)
        if not stack:
            raise Refused("nothing to undo")
        last = stack[-1]
        ev = Event("undo", self.annotator, utc_now(), last.qid, last.docid, last.digest)
        self._append(ev)
        return ev
