"""Live pairwise judging of the prompt-sensitivity study: the pairs a live judge compares, each
asked in both orders with a pairwise prompt, and the shares of its outcomes against the human
order (the forced choice in both orders and the orders combined are the core's,
:mod:`judgelab.llm.pairwise`, as the overrating study judges its pairs).

* :func:`listed_pairs` - the pairs of the authors' pair list of the dataset (``qid group group
  docidA docidB``), the higher human grade as ``hi``, where the dataset has one
  (``sensitivity.published.datasets`` maps a published dataset to it);
* :func:`formed_pairs` - otherwise, per query, a passage of a higher human grade against one of a
  lower, at most ``per_query`` pairs drawn without replacement (seeded by the seed and the query);
* :func:`pairwise_labels` - the two option names of an authors' prompt (``A``/``B``, or ``1``/``2``
  where its text numbers the passages and names no ``Passage A``);
* :func:`run_pairwise`, :func:`pairwise_requests` - every pair in both orders through the cache;
* :func:`pairwise_row` - a judged table's agreement row: ``agree`` (both orders prefer the higher
  passage), ``disagree`` (both prefer the lower), ``tie`` (the orders contradict each other), of
  the judged pairs, and the ties split by position: ``first_both`` (the first passage won in both
  orders) and ``second_both`` (the second won in both).
"""

from __future__ import annotations

import logging
import math
import re
import zlib

import numpy as np
import pandas as pd

from judgelab.data.tables import ANSWER_COLUMNS, truthy
from judgelab.errors import InputError
from judgelab.llm.backends.base import Request
from judgelab.llm.client import CachedClient
from judgelab.llm.judge import Judge
from judgelab.llm.judging import request_max_tokens
from judgelab.llm.pairwise import (
    CHOICE_COLUMNS,
    ORDER_COLUMNS,
    choice_cells,
    choice_requests,
    pair_outcomes,
    pairwise_jobs,
    position_counts,
    preferred,
)
from judgelab.studies.sensitivity.published import pair_list_lines

log = logging.getLogger(__name__)

#: the pairs judged (one row per pair): ``setting`` is ``<group of hi>-<group of lo>`` for a
#: listed pair (``top-mid``), ``<grade of hi>-<grade of lo>`` for a formed one (``3-1``)
PAIR_COLUMNS = ["dataset", "qid", "setting", "hi_docid", "lo_docid", "hi_grade", "lo_grade"]

#: a live pairwise judgment (one row per pair and order): ``label`` the option chosen (one of the
#: prompt's two labels, the first naming Passage 1), ``preferred`` ``hi`` or ``lo``
JUDGED_COLUMNS = [
    *CHOICE_COLUMNS,
    "prompt_tokens",
    "completion_tokens",
    "cache_hit",
    *ANSWER_COLUMNS,
]

#: the placeholders of a pairwise prompt: the query, the first and the second passage
PLACEHOLDERS = ("query", "documentA", "documentB")


def _grades(table: pd.DataFrame) -> dict[tuple[str, str], int]:
    return {
        (str(q), str(d)): int(g)
        for q, d, g in zip(table["qid"], table["docid"], table["grade"])
        if not pd.isna(g)
    }


def listed_pairs(path: str, table: pd.DataFrame) -> pd.DataFrame:
    """The pairs of the authors' pair list ``path`` (``qid<TAB>group<TAB>group<TAB>docidA<TAB>docidB``)
    whose query is in the dataset ``table``, the passage of the higher human grade as ``hi``
    (:data:`PAIR_COLUMNS`). A listed passage of a query in the table but not in it, or a pair of
    equal grades (no human order), is an error naming the file and line; the pairs of queries the
    table does not hold are left out and counted in the log."""
    grades = _grades(table)
    queries = {q for q, _ in grades}
    dataset = str(table["dataset"].iloc[0]) if len(table) else ""
    rows, skipped = [], 0
    for n, (qid, group_a, group_b, a, b) in pair_list_lines(path):
        if qid not in queries:
            skipped += 1
            continue
        for d in (a, b):
            if (qid, d) not in grades:
                raise InputError(
                    f"query {qid} passage {d} is not a judged pair of the dataset table",
                    path=path,
                    line=n,
                )
        ga, gb = grades[(qid, a)], grades[(qid, b)]
        if ga == gb:
            raise InputError(
                f"query {qid}: passages {a} and {b} share grade {ga} (no human order)", path=path, line=n
            )
        if ga < gb:
            a, b, ga, gb, group_a, group_b = b, a, gb, ga, group_b, group_a
        rows.append((dataset, qid, f"{group_a}-{group_b}", a, b, ga, gb))
    if skipped:
        log.info("%s: %d pairs of queries not in the dataset table left out", path, skipped)
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def formed_pairs(table: pd.DataFrame, per_query: int, seed: int) -> pd.DataFrame:
    """Per query, every (hi, lo) pair of passages with hi's human grade above lo's (in grade and
    docid order), at most ``per_query`` of them drawn without replacement by a generator seeded
    by (``seed``, the query's CRC-32), kept in that order (:data:`PAIR_COLUMNS`)."""
    grades = _grades(table)
    dataset = str(table["dataset"].iloc[0]) if len(table) else ""
    by_query: dict[str, list[tuple[str, int]]] = {}
    for (q, d), g in sorted(grades.items()):
        by_query.setdefault(q, []).append((d, g))
    rows = []
    for qid in sorted(by_query):
        members = sorted(by_query[qid], key=lambda x: (-x[1], x[0]))
        cands = [(h, hg, lo, lg) for h, hg in members for lo, lg in members if hg > lg]
        if len(cands) > per_query:
            rng = np.random.default_rng([int(seed), zlib.crc32(qid.encode("utf-8"))])
            cands = [cands[i] for i in sorted(rng.choice(len(cands), size=int(per_query), replace=False))]
        rows += [(dataset, qid, f"{hg}-{lg}", h, lo, hg, lg) for h, hg, lo, lg in cands]
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def pairwise_labels(user: str, system: str) -> tuple[str, str]:
    """The two option names an authors' pairwise prompt asks for: ``("1", "2")`` when its texts
    number the passages (``Passage 1``, ``Document 2``, ``1 or 2``) and name no ``Passage A`` /
    ``Document A`` nor a quoted ``A``; ``("A", "B")`` otherwise (most prompts)."""
    text = re.sub(r"\{document[AB]\}", "", f"{system}\n{user}")  # the placeholders name no option
    lettered = re.search(r"(?i:passage|document|doc)[\s_]*A\b|[\"'‘“]A[\"'’”]|\bA or B\b", text)
    numbered = re.search(r"(?i:passage|document)[\s_]*[12]\b|\b1 or 2\b", text)
    return ("1", "2") if numbered and not lettered else ("A", "B")


def pairwise_requests(items, judge: Judge) -> list[Request]:
    """One request per pair and order (:func:`judgelab.llm.pairwise.pairwise_jobs`): the judge's
    template filled with ``{query}``, ``{documentA}`` (the first passage) and ``{documentB}``
    (the second), its system text as the system message, its two labels asked at the first
    answer position (one answer token when the label is read from the logits)."""
    return choice_requests(
        items,
        judge.template,
        judge.labels,
        max_tokens=request_max_tokens(judge.max_tokens, judge.answer),
        names=(PLACEHOLDERS[1], PLACEHOLDERS[2]),
        persona=judge.persona,
        placement=judge.placement,
        label_steps=False,
    )


def run_pairwise(
    table: pd.DataFrame, pairs: pd.DataFrame, judge: Judge, client: CachedClient, *, desc: str = "pairwise"
) -> pd.DataFrame:
    """Every pair of ``pairs`` in both orders (:data:`JUDGED_COLUMNS`): the option read as the
    judge reads (``parse``: the answer text, ``logits``: the larger label probability),
    ``preferred`` the human order's side of the passage chosen (missing when nothing was read)."""
    items = pairwise_jobs(table, pairs)
    requests = pairwise_requests(items, judge)
    answers = client.run(requests, desc=desc)
    rows = []
    for x, req, (comp, hit) in zip(items, requests, answers):
        cells = choice_cells(
            comp,
            judge.labels,
            answer=judge.answer,
            max_tokens=judge.max_tokens,
            decoding=client.decoding(req),
        )
        side = preferred(x, cells["label"], cells["parsed"], judge.labels)
        rows.append({k: x[k] for k in ORDER_COLUMNS} | cells | {"preferred": side, "cache_hit": hit})
    out = pd.DataFrame(rows, columns=JUDGED_COLUMNS)
    log.info(
        "%s: %d pairs x 2 orders, %d judgments read, %d missing",
        desc,
        len(pairs),
        int(out["parsed"].sum()),
        int((~out["parsed"].astype(bool)).sum()),
    )
    return out


def pairwise_row(judged: pd.DataFrame, n_pairs: int) -> dict:
    """The agreement row of a live pairwise table (both orders of ``n_pairs`` pairs): ``lines``
    the pairs, ``dropped`` those with an order that did not parse, ``n`` the judged pairs and
    ``coverage`` n / n_pairs; ``agree``, ``disagree``, ``tie`` of the n judged pairs, and the
    ties by position - ``first_both``, ``second_both`` (together ``tie``)."""
    judged = judged.assign(preferred=judged["preferred"].where(truthy(judged["parsed"])))
    outcomes = pair_outcomes(judged)
    counts = outcomes["outcome"].value_counts()
    n = len(outcomes) - int(counts.get("missing", 0))
    first, second = position_counts(outcomes)

    def share(k: int) -> float:
        return k / n if n else math.nan

    return {
        "lines": len(outcomes),
        "dropped": int(counts.get("missing", 0)),
        "repeats": 0,
        "n": n,
        "coverage": n / n_pairs if n_pairs else math.nan,
        "agree": share(int(counts.get("correct", 0))),
        "disagree": share(int(counts.get("wrong_win", 0))),
        "tie": share(int(counts.get("tie", 0))),
        "first_both": share(first),
        "second_both": share(second),
    }


def read_judged(path: str) -> pd.DataFrame:
    """A live pairwise table as written (ids and labels as text; a missing label or preference
    empty)."""
    text = (
        "dataset",
        "qid",
        "setting",
        "hi_docid",
        "lo_docid",
        "passage_1",
        "passage_2",
        "label",
        "preferred",
    )
    return pd.read_csv(path, sep="\t", dtype={k: str for k in text})


def read_pairs_table(path: str) -> pd.DataFrame:
    """The pairs job's table (:data:`PAIR_COLUMNS`, ids as text)."""
    return pd.read_csv(
        path, sep="\t", dtype={k: str for k in ("dataset", "qid", "setting", "hi_docid", "lo_docid")}
    )
