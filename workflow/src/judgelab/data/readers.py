"""One reader for each file format a relevance dataset comes in (the ones the public sources
publish):

* TREC qrels: ``qid Q0 docid grade`` (whitespace separated; LLMJudge writes ``0`` for ``Q0``);
* topics: ``qid<TAB>query``;
* judged-text file: ``docid<TAB>passage``, one line per qrels line in the same order (the
  ``qrels_text.dlXX`` files of Narabzad/llm-relevance-judgement-comparison);
* LLMJudge passages: JSON lines ``{"docid": ..., "doc": ...}``; id maps.

Every reader raises :class:`~judgelab.errors.InputError` naming the file and line of the first
bad line. Files are decoded with an explicit encoding (UTF-8 unless ``datasets.<name>.encoding``
says otherwise, never guessed: a byte that does not decode is an error at its line); a leading
byte-order mark is dropped (:mod:`judgelab.data.textfiles`); passage text is repaired by
:func:`clean_text`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import ftfy

from judgelab.data.labels import GRADES
from judgelab.data.textfiles import text_lines
from judgelab.errors import InputError


class PairLine(Protocol):
    """A line of a qrels-like file: its pair and where it is."""

    @property
    def qid(self) -> str: ...

    @property
    def docid(self) -> str: ...

    @property
    def line(self) -> int: ...


T = TypeVar("T", bound=PairLine)


def _grade(q: Any) -> Any:
    return q.grade


def _shown_grade(q: Any) -> str:
    return str(q.grade)


def clean_text(text: str) -> str:
    """Repair MS MARCO mojibake (``â€™`` -> ``’``) with ftfy and trim white space."""
    return ftfy.fix_text(text).strip()


@dataclass(frozen=True)
class QrelLine:
    qid: str
    docid: str
    grade: int
    line: int


def parse_grade(value: str, path: str | Path, line: int, what: str = "grade") -> int:
    """A relevance grade 0-3 from a qrels field; anything else is an error at ``path:line``."""
    try:
        g = int(value)
    except ValueError:
        raise InputError(f"{what} {value!r} is not an integer", path=str(path), line=line) from None
    if g not in GRADES:
        raise InputError(f"{what} {g} is outside {GRADES[0]}-{GRADES[-1]}", path=str(path), line=line)
    return g


def read_qrels(path: str | Path, encoding: str | None = None) -> list[QrelLine]:
    """Read a graded TREC qrels file; blank lines are skipped, anything else malformed is an error."""
    out: list[QrelLine] = []
    for no, line in text_lines(path, encoding):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4:
            raise InputError(
                f"expected 4 fields 'qid Q0 docid grade', got {len(parts)}: {line!r}", path=str(path), line=no
            )
        qid, _, docid, grade = parts
        out.append(QrelLine(qid, docid, parse_grade(grade, path, no), no))
    return out


def unique_pairs(
    items: Iterable[T],
    path: str | Path,
    *,
    value: Callable[[T], object] = _grade,
    what: str = "judged twice with different grades",
    shown: Callable[[T], str] = _shown_grade,
) -> tuple[list[T], list[tuple[T, T]]]:
    """The one check of every qrels-like file (a dataset's qrels, an imported judge's labels, the
    ranking study's qrels): one entry per (qid, docid) pair. A pair listed twice with different
    values (``value``: the grade, or a judge's label and confidence) is an error at the second line
    naming the first; an exact repeat carries no new information and is dropped. Returns the first
    entry of each pair, in file order, and the (first, repeat) entries of the exact repeats (a
    caller that aligns passage texts with the lines checks those too). Entries have ``qid``,
    ``docid`` and ``line``."""
    seen: dict[tuple[str, str], T] = {}
    kept: list[T] = []
    repeats: list[tuple[T, T]] = []
    for item in items:
        key = (item.qid, item.docid)
        first = seen.get(key)
        if first is None:
            seen[key] = item
            kept.append(item)
            continue
        if value(first) != value(item):
            raise InputError(
                f"pair (qid {key[0]}, docid {key[1]}) is {what} "
                f"({shown(first)} at line {first.line}, {shown(item)} here)",
                path=str(path),
                line=item.line,
            )
        repeats.append((first, item))
    return kept, repeats


def read_topics(path: str | Path, encoding: str | None = None) -> dict[str, str]:
    """Read ``qid<TAB>query`` lines into a dict."""
    topics: dict[str, str] = {}
    for no, line in text_lines(path, encoding):
        if not line.strip():
            continue
        if "\t" not in line:
            raise InputError(f"expected 'qid<TAB>query', found no tab: {line!r}", path=str(path), line=no)
        qid, query = line.split("\t", 1)
        qid, query = qid.strip(), query.strip()
        if not qid or not query:
            raise InputError("empty qid or query", path=str(path), line=no)
        if qid in topics and topics[qid] != query:
            raise InputError(f"query {qid} appears twice with different texts", path=str(path), line=no)
        topics[qid] = query
    return topics


def read_qrels_text(path: str | Path, encoding: str | None = None) -> list[tuple[int, str, str]]:
    """Read ``docid<TAB>passage`` lines as (line, docid, passage)."""
    out = []
    for no, line in text_lines(path, encoding):
        if "\t" not in line:
            raise InputError(
                f"expected 'docid<TAB>passage', found no tab: {line[:80]!r}", path=str(path), line=no
            )
        docid, text = line.split("\t", 1)
        out.append((no, docid.strip(), text))
    return out


def read_jsonl_docs(path: str | Path, encoding: str | None = None) -> dict[str, tuple[int, str]]:
    """Read LLMJudge-style ``{"docid", "doc"}`` JSON lines into docid -> (line, text); a docid
    listed twice with different texts is an error naming both lines."""
    docs: dict[str, tuple[int, str]] = {}
    for no, line in text_lines(path, encoding):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            docid, text = str(obj["docid"]), obj["doc"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InputError(
                f"expected a JSON object with 'docid' and 'doc': {exc}", path=str(path), line=no
            ) from None
        if not isinstance(text, str):
            raise InputError(f"'doc' of {docid} is not a string", path=str(path), line=no)
        if docid in docs and clean_text(docs[docid][1]) != clean_text(text):
            raise InputError(
                f"passage {docid} appears twice with different texts (line {docs[docid][0]} and here)",
                path=str(path),
                line=no,
            )
        docs.setdefault(docid, (no, text))
    return docs


def read_id_map(path: str | Path, encoding: str | None = None) -> dict[str, str]:
    """Read a two-column ``original<TAB>short`` id map (LLMJudge ``docid_to_docidx.txt``)."""
    out = {}
    for no, line in text_lines(path, encoding):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise InputError(f"expected 2 fields, got {len(parts)}", path=str(path), line=no)
        out[parts[0]] = parts[1]
    return out
