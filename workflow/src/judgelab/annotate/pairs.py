"""The pairs a person labels and the scale they label on.

The **pairs file** is a tab-separated table with a header and at least the columns ``qid``,
``docid``, ``query`` and ``passage`` (other columns are ignored): a prepared dataset table
(``{results}/datasets/{dataset}.tsv``, :func:`judgelab.data.tables.read_dataset`) is one. Pairs
are shown in the file's order. Each pair has a **text digest**, the SHA-256 of its query and
passage joined by a tab (:func:`text_digest`), written with every journal event so that a label
is never replayed onto a pair whose text has changed.

The **scale** is a judgment template's labels (integers, one key each) and, for each label, the
line of the template that defines it (``0 = Non-relevant: ...`` or ``[0] Irrelevant: ...``), as
the judge was told (:func:`scale_of`); the default is UMBRELA's graded 0-3 scale
(``overrating/graded``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgelab.data.tables import read_tsv
from judgelab.data.textfiles import read_text
from judgelab.errors import InputError
from judgelab.llm.prompts import load_template_spec

#: The columns a pairs file must have.
PAIR_COLUMNS = ("qid", "docid", "query", "passage")

#: The template whose labels and definitions the page shows by default: UMBRELA's 0-3 scale.
DEFAULT_TEMPLATE = "overrating/graded"

_ID = re.compile(r"\S+")


def text_digest(query: str, passage: str) -> str:
    """SHA-256 (hex) of ``query`` and ``passage`` joined by a tab, UTF-8."""
    return hashlib.sha256(f"{query}\t{passage}".encode()).hexdigest()


@dataclass(frozen=True)
class Pair:
    """One pair to label, its text and digest, and the line of the pairs file it is on."""

    qid: str
    docid: str
    query: str
    passage: str
    line: int

    @property
    def key(self) -> tuple[str, str]:
        return (self.qid, self.docid)

    @property
    def digest(self) -> str:
        return text_digest(self.query, self.passage)


def read_pairs(path: str | Path) -> list[Pair]:
    """The pairs of a pairs file, in its order. A missing column, an id with white space, an
    empty query or passage, or a pair listed twice is an error naming the file and line."""
    path = str(path)
    if not Path(path).is_file():
        raise InputError("no such pairs file", path=path)
    read_text(path)  # a byte that is not UTF-8: an error at its line
    try:
        table = read_tsv(path, str, missing=())
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"not a tab-separated table with a header: {exc}", path=path) from None
    missing = [c for c in PAIR_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(f"a pairs file needs the columns {list(PAIR_COLUMNS)}; missing {missing}", path=path)
    pairs: list[Pair] = []
    seen: dict[tuple[str, str], int] = {}
    for i, row in enumerate(table[list(PAIR_COLUMNS)].itertuples(index=False)):
        line = i + 2  # the header is line 1
        qid, docid, query, passage = (str(v) for v in row)
        for name, value in (("qid", qid), ("docid", docid)):
            if not _ID.fullmatch(value):
                raise InputError(f"{name} {value!r} is empty or holds white space", path=path, line=line)
        for name, value in (("query", query), ("passage", passage)):
            if not value.strip():
                raise InputError(
                    f"the {name} of {qid} {docid} is empty: nothing to judge", path=path, line=line
                )
        if (qid, docid) in seen:
            raise InputError(
                f"pair {qid} {docid} is listed twice (first on line {seen[qid, docid]})", path=path, line=line
            )
        seen[qid, docid] = line
        pairs.append(Pair(qid, docid, query, passage, line))
    if not pairs:
        raise InputError("the pairs file lists no pair", path=path)
    return pairs


@dataclass(frozen=True)
class Scale:
    """The labels a person may give (integers, shown in this order) and each one's definition."""

    labels: tuple[int, ...]
    definitions: tuple[str, ...]
    template: str

    def check(self, value: object) -> int:
        """``value`` as a label of the scale, or a ValueError saying why not."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"label {value!r} is not an integer")
        if value not in self.labels:
            raise ValueError(f"label {value} is outside the scale {list(self.labels)}")
        return value


def scale_of(ref: str = DEFAULT_TEMPLATE, resources: str | Path | None = None) -> Scale:
    """The scale of the judgment template ``ref`` (a path or ``<study>/<name>``): its labels,
    which must be single digits (a key each), and for each the template line that defines it
    (``L = text`` or ``[L] text``, the line's text shown), an error naming the template when a
    label has no such line."""
    template = load_template_spec(ref, resources, kind="judgment")
    labels = template.labels or ("0", "1", "2", "3")
    bad = [x for x in labels if not re.fullmatch(r"[0-9]", x)]
    if bad:
        raise InputError(
            f"labels {bad} are not single digits: a person gives a label by its key", path=template.path
        )
    definitions = []
    for label in labels:
        found = re.search(rf"^\s*(?:{label}\s*=|\[{label}\])\s*(.+?),?\s*$", template.text, re.M)
        if not found:
            raise InputError(
                f"no line defines label {label} (`{label} = ...` or `[{label}] ...`): the page shows "
                "each label's definition",
                path=template.path,
            )
        definitions.append(found.group(1))
    return Scale(tuple(int(x) for x in labels), tuple(definitions), template.path)
