"""The published files of Arabzadeh and Clarke's prompt-sensitivity study, read as they are.

* :func:`read_manifest` - ``resources/sensitivity/published.tsv``: one row per public file (the
  prompts, the pair lists, each judgment file by model x type x dataset x prompt) with its URL,
  size and SHA-256 (the download checks both; :func:`judgelab.data.sources.download`).
* :func:`read_pointwise` - a binary or graded file (``qid 0 docid label``): labels outside the
  type's scale (binary 0-1, graded 0-3; anything else, e.g. graded 4-9) are dropped and counted,
  a pair's repeated lines after its first are dropped and counted, a pair that is not in the
  dataset's qrels is an error naming the file and line.
* :func:`read_pairwise` - a pairwise file (``qid setting docidA docidB outcome``): the outcome
  (``agree`` / ``disagree`` / ``tie`` with the human order) as given; a pair not in the dataset's
  pair list (in either order: the files sometimes list a pair's passages swapped) or an unknown
  outcome is an error naming the file and line.
* :func:`read_prompts` - ``prompts.json``: each prompt id's author group (``human``, ``LLM``,
  ``umbrela``) from its ``participant_name``; the texts stay in the downloaded file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgelab.errors import InputError

#: the judging types and each pointwise type's scale (labels kept; any other value is dropped)
TYPES = ("binary", "graded", "pairwise")
SCALES: dict[str, tuple[int, ...]] = {"binary": (0, 1), "graded": (0, 1, 2, 3)}
#: the pairwise files' outcomes: the judge's preferred passage against the human order
OUTCOMES = ("agree", "disagree", "tie")
#: the models of the published files (their folder names in the repository)
MODELS = ("gpt-4o", "llama3.2", "mistral")
#: the datasets of the published files (TREC DL 2020 and 2021)
DATASETS = ("dl20", "dl21")
#: the pairs of each published dataset's pair list (``data/pairwise/pairs_dl<20|21>.txt``, one
#: a line): what ``judgelab estimate`` counts before the list is downloaded
PAIR_LIST_LINES = {"dl20": 1544, "dl21": 1590}
#: the author groups of ``prompts.json`` (``participant_name`` ``human-*``, ``LLM-*``, ``umbrela``)
GROUPS = ("human", "LLM", "umbrela")

MANIFEST_COLUMNS = ("kind", "model", "type", "dataset", "prompt", "file", "bytes", "sha256", "url")


@dataclass(frozen=True)
class PublishedFile:
    """One row of the manifest: ``kind`` is ``prompts``, ``pairs`` or ``judgments``; ``model``,
    ``type``, ``dataset``, ``prompt`` are ``-`` where they do not apply."""

    kind: str
    model: str
    type: str
    dataset: str
    prompt: str
    file: str
    bytes: int
    sha256: str
    url: str

    def download(self) -> tuple[str, int, str, str]:
        """(file, bytes, sha256, url): what the download job checks."""
        return (self.file, self.bytes, self.sha256, self.url)


def read_manifest(path: str | Path) -> list[PublishedFile]:
    """The manifest's rows (``#`` lines are comments); a malformed row is an error naming its line."""
    rows: list[PublishedFile] = []
    header: list[str] | None = None
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            if tuple(header) != MANIFEST_COLUMNS:
                raise InputError(
                    f"the columns are {header}, not {list(MANIFEST_COLUMNS)}", path=str(path), line=n
                )
            continue
        if len(cells) != len(header):
            raise InputError(f"{len(cells)} cells, not {len(header)}", path=str(path), line=n)
        row = dict(zip(header, cells))
        if row["kind"] not in ("prompts", "pairs", "judgments"):
            raise InputError(f"unknown kind {row['kind']!r}", path=str(path), line=n)
        try:
            size = int(row.pop("bytes"))
        except ValueError:
            raise InputError("bytes is not a whole number", path=str(path), line=n) from None
        rows.append(PublishedFile(bytes=size, **row))
    return rows


@dataclass(frozen=True)
class Pointwise:
    """A binary or graded file read: ``labels`` (qid, docid, grade, label) of the pairs kept,
    ``pairs`` every distinct pair of the file (dropped ones too), ``lines`` read, ``dropped``
    out-of-scale labels, ``repeats`` later lines of a pair already read."""

    labels: pd.DataFrame
    pairs: frozenset[tuple[str, str]]
    lines: int
    dropped: int
    repeats: int

    def on(self, pairs: set[tuple[str, str]] | frozenset[tuple[str, str]]) -> Pointwise:
        """The same file restricted to ``pairs``: its labels and pairs there (the counts of lines,
        dropped and repeated labels stay the file's)."""
        keep = [(q, d) in pairs for q, d in zip(self.labels["qid"], self.labels["docid"])]
        return Pointwise(
            self.labels[keep].reset_index(drop=True),
            self.pairs & frozenset(pairs),
            self.lines,
            self.dropped,
            self.repeats,
        )


def read_pointwise(path: str | Path, kind: str, grades: Mapping[tuple[str, str], int]) -> Pointwise:
    """A published binary or graded file against the dataset's human ``grades`` ((qid, docid) ->
    grade). A line is ``qid iteration docid label``; the first line of a pair counts (later ones
    are counted as repeats: some files hold a pair more than once, not always with the same
    label); a label outside :data:`SCALES` ``[kind]`` is dropped and counted."""
    scale = {str(v) for v in SCALES[kind]}
    rows: list[tuple[str, str, int, int]] = []
    seen: set[tuple[str, str]] = set()
    lines = dropped = repeats = 0
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            cells = line.split()
            if not cells:
                continue
            lines += 1
            if len(cells) != 4:
                raise InputError(
                    f"{len(cells)} fields, not 4 (qid iteration docid label)", path=str(path), line=n
                )
            qid, _, docid, label = cells
            grade = grades.get((qid, docid))
            if grade is None:
                raise InputError(
                    f"query {qid} passage {docid} is not a judged pair of the dataset (its qrels): "
                    "the dataset must hold the full qrels (per_grade: null, every query)",
                    path=str(path),
                    line=n,
                )
            if (qid, docid) in seen:
                repeats += 1
                continue
            seen.add((qid, docid))
            if label not in scale:
                dropped += 1
                continue
            rows.append((qid, docid, int(grade), int(label)))
    labels = pd.DataFrame(rows, columns=["qid", "docid", "grade", "label"])
    return Pointwise(labels, frozenset(seen), lines, dropped, repeats)


def pair_list_lines(path: str | Path) -> Iterator[tuple[int, list[str]]]:
    """The lines of a pair list (``qid group group docidA docidB``, tab-separated) as (line number,
    its five fields), blank lines skipped; a line of another field count is an error naming the
    file and line."""
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            cells = line.rstrip("\n").split("\t")
            if cells == [""]:
                continue
            if len(cells) != 5:
                raise InputError(
                    f"{len(cells)} fields, not 5 (qid group group docidA docidB)", path=str(path), line=n
                )
            yield n, cells


def read_pairs(path: str | Path) -> set[tuple[str, frozenset[str]]]:
    """A pair list (:func:`pair_list_lines`): each pair as (qid, {docids})."""
    return {(cells[0], frozenset(cells[3:5])) for _, cells in pair_list_lines(path)}


@dataclass(frozen=True)
class Pairwise:
    """A pairwise file read: ``outcomes`` (qid, setting, docid_a, docid_b, outcome) of every line,
    as given; ``repeats``: lines of a pair already read (counted, kept: the shares are over the
    file's lines)."""

    outcomes: pd.DataFrame
    repeats: int


def read_pairwise(path: str | Path, pairs: set[tuple[str, frozenset[str]]]) -> Pairwise:
    """A published pairwise file: one row (qid, setting, docid_a, docid_b, outcome) per line, the
    outcome as given. A pair not in ``pairs`` (either order) or an outcome other than
    :data:`OUTCOMES` is an error naming the file and line."""
    rows = []
    seen: set[tuple[str, frozenset[str]]] = set()
    repeats = 0
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            cells = line.split()
            if not cells:
                continue
            if len(cells) != 5:
                raise InputError(
                    f"{len(cells)} fields, not 5 (qid setting docidA docidB outcome)", path=str(path), line=n
                )
            qid, setting, a, b, outcome = cells
            if outcome not in OUTCOMES:
                raise InputError(
                    f"unknown outcome {outcome!r} (known: {', '.join(OUTCOMES)})", path=str(path), line=n
                )
            pair = (qid, frozenset((a, b)))
            if pair not in pairs:
                raise InputError(
                    f"query {qid} passages {a}, {b}: not a pair of the dataset's pair list",
                    path=str(path),
                    line=n,
                )
            repeats += pair in seen
            seen.add(pair)
            rows.append((qid, setting, a, b, outcome))
    return Pairwise(pd.DataFrame(rows, columns=["qid", "setting", "docid_a", "docid_b", "outcome"]), repeats)


def read_prompts(path: str | Path) -> dict[str, str]:
    """Prompt id -> author group (:data:`GROUPS`) from ``prompts.json``'s ``participant_name``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON ({exc.msg})", path=str(path), line=exc.lineno) from None
    groups = {}
    for pid, entry in data.items():
        name = str(entry.get("participant_name", ""))
        group = next((g for g in GROUPS if name == g or name.startswith(g + "-")), None)
        if group is None:
            raise InputError(
                f"prompt {pid}: participant_name {name!r} names none of the groups {list(GROUPS)}",
                path=str(path),
            )
        groups[str(pid)] = group
    return groups


def human_grades(dataset: pd.DataFrame) -> dict[tuple[str, str], int]:
    """(qid, docid) -> human grade of a dataset table."""
    return {
        (str(q), str(d)): int(g)
        for q, d, g in zip(dataset["qid"], dataset["docid"], dataset["grade"])
        if not (g is pd.NA or (isinstance(g, float) and math.isnan(g)))
    }
