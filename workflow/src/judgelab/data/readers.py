"""One reader for each file format a relevance dataset comes in (the ones the public sources
publish):

* TREC qrels: ``qid Q0 docid grade`` (whitespace separated; LLMJudge writes ``0`` for ``Q0``);
* topics: ``qid<TAB>query``;
* judged-text file: ``docid<TAB>passage``, one line per qrels line in the same order (the
  ``qrels_text.dlXX`` files of Narabzad/llm-relevance-judgement-comparison);
* LLMJudge passages: JSON lines ``{"docid": ..., "doc": ...}``; id maps;
* TREC run files: ``qid Q0 docid rank score tag`` (:func:`read_run`).

Every reader raises :class:`~judgelab.errors.InputError` naming the file and line of the first
bad line. Files are decoded with an explicit encoding (UTF-8 unless ``datasets.<name>.encoding``
says otherwise, never guessed: a byte that does not decode is an error at its line); a leading
byte-order mark is dropped (:mod:`judgelab.data.textfiles`); passage text is repaired by
:func:`clean_text`."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import ftfy
import pandas as pd

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


def qrels_topics(path: str | Path) -> int:
    """The number of topics (distinct first fields of its non-blank lines) of a qrels file, for
    checks before any job. Lenient on purpose: a malformed line or byte is the dataset's own
    error, reported at its line by :func:`read_qrels` when the data are prepared."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return len({line.split(None, 1)[0] for line in f if line.strip()})


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


# -- TREC run files --------------------------------------------------------------------------------

#: Columns of a run table, in order.
RUN_COLUMNS = ["qid", "docid", "rank", "score", "tag"]


#: File-name endings removed by :func:`run_name`.
RUN_SUFFIXES = (".txt", ".run", ".trec")


def run_name(path: str | Path, name: str | None = None) -> str:
    """The name of the run in ``path``: ``name`` when given, else the file name without a leading
    ``input.`` and without one ending of :data:`RUN_SUFFIXES` (``input.p_bm25.txt`` -> ``p_bm25``,
    ``bm25.run`` -> ``bm25``). A name that comes out empty is an error naming the file."""
    if name is not None:
        if not str(name).strip():
            raise InputError("the run name given for this file is empty", path=str(path))
        return str(name)
    stem = Path(path).name
    if stem.startswith("input."):
        stem = stem[len("input.") :]
    for suffix in RUN_SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    if not stem:
        raise InputError(
            "cannot name the run after this file name (nothing is left once "
            "'input.' and the extension are removed); give the run a name",
            path=str(path),
        )
    return stem


def _parse_line(fields: list[str], path: str, no: int) -> tuple[str, str, int, float, str]:
    qid, _q0, docid, rank, score, tag = fields
    try:
        rank_value = int(rank)
    except ValueError:
        raise InputError(f"rank {rank!r} is not an integer", path=path, line=no) from None
    try:
        score_value = float(score)
    except ValueError:
        raise InputError(f"score {score!r} is not a number", path=path, line=no) from None
    if not math.isfinite(score_value):
        raise InputError(f"score {score!r} is not a finite number", path=path, line=no)
    return qid, docid, rank_value, score_value, tag


def read_run(
    path: str | Path,
    name: str | None = None,
    encoding: str | None = None,
    topics: Collection[str] | None = None,
) -> pd.DataFrame:
    """The run in the TREC run file ``path`` as a table with the columns :data:`RUN_COLUMNS`.
    ``topics``: only the lines of these topics are read and checked (the others skipped unparsed:
    a job that needs a few topics of a large run its scoring job read whole).

    Errors (:class:`~judgelab.errors.InputError` at ``path:line``): a line with other than 6
    fields, a rank that is not an integer, a score that is not a finite number, a docid listed
    twice for one topic (the message names both lines), a file without any run line. The file is
    decoded by :func:`judgelab.data.textfiles.text_lines` (UTF-8 unless ``encoding``; bad bytes are an
    error at their line). ``attrs`` of the table: ``name`` (:func:`run_name`), ``path`` and
    ``first_line`` (the line number of the first run line)."""
    path_s = str(path)
    rows: list[tuple[str, str, int, float, str]] = []
    seen: dict[tuple[str, str], int] = {}
    first_line = None
    for no, line in text_lines(path, encoding):
        if topics is not None and (head := line.split(None, 1)) and head[0] not in topics:
            continue
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 6:
            raise InputError(
                f"expected 6 fields 'qid Q0 docid rank score tag', got {len(fields)}: {line[:120]!r}",
                path=path_s,
                line=no,
            )
        row = _parse_line(fields, path_s, no)
        key = (row[0], row[1])
        if key in seen:
            raise InputError(
                f"docid {row[1]} is listed twice for topic {row[0]} (line {seen[key]} and line {no})",
                path=path_s,
                line=no,
            )
        seen[key] = no
        first_line = first_line or no
        rows.append(row)
    if not rows and topics is None:
        raise InputError("the run file has no line 'qid Q0 docid rank score tag' (it is empty)", path=path_s)
    run = pd.DataFrame(rows, columns=RUN_COLUMNS)
    run = run.astype({"qid": str, "docid": str, "rank": "int64", "score": "float64", "tag": str})
    run.attrs.update(name=run_name(path, name), path=path_s, first_line=first_line)
    return run
