"""The one normalised table of a relevance dataset (dataset, qid, query, docid, passage, grade)
built from its raw files (TREC DL: qrels, topics, passage texts; LLMJudge: qrels and the
passages JSONL), checked (known query, passage present, no conflicting duplicate pair) and cut
to the configured selection (:mod:`judgelab.data.selection`). A pair listed twice must agree on
grade and passage text; a dataset with no judged pair left is an error naming the dataset and its
files. The columns are :data:`judgelab.data.tables.DATASET_COLUMNS`.

Without a texts file (``texts`` None: a dataset no live model reads, judged by imported judges
only, :meth:`judgelab.wiring.facade.Project.reads_texts`) the table has every judged pair with an
empty ``passage``: the qrels and topics are read and checked as always."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from judgelab.data.readers import (
    QrelLine,
    clean_text,
    read_id_map,
    read_jsonl_docs,
    read_qrels,
    read_qrels_text,
    read_topics,
    unique_pairs,
)
from judgelab.data.selection import select
from judgelab.data.sources import with_refetch_hint
from judgelab.data.tables import DATASET_COLUMNS
from judgelab.errors import InputError

log = logging.getLogger(__name__)


def _stripped(text: str) -> str:
    return text.strip()


def _check_and_build(
    dataset: str,
    qrels: list[QrelLine],
    qrels_path: str,
    topics: dict[str, str],
    topics_path: str,
    text_of: Callable[[QrelLine], tuple[tuple[str, int], str | None]] | None,
    repair: bool = True,
) -> pd.DataFrame:
    """Shared checks: known query, passage present, no conflicting duplicate pairs (a pair listed
    twice must agree on grade and passage text). ``repair``: texts repaired by
    :func:`~judgelab.data.readers.clean_text`; False: white space stripped only, to check the
    files without repairing them (:func:`build_table` with ``repair=False``). ``text_of`` None:
    no texts file, every passage empty (nothing to check but the qrels and topics)."""
    clean: Callable[[str], str] = clean_text if repair else _stripped
    kept, repeats = unique_pairs(qrels, qrels_path)  # one grade per pair
    if text_of is not None:
        for first, again in repeats:  # an exact repeat must also carry the same passage text
            (path_a, line_a), text_a = text_of(first)
            (path_b, line_b), text_b = text_of(again)
            if clean(text_a or "") != clean(text_b or ""):
                raise InputError(
                    f"pair (qid {again.qid}, docid {again.docid}) is listed twice with different passage "
                    f"texts: {path_a}:{line_a} and {path_b}:{line_b}",
                    path=path_b,
                    line=line_b,
                )
    rows = []
    queries: dict[str, str] = {}  # each query repaired once, not once per judged pair
    for q in kept:
        where, text = text_of(q) if text_of is not None else ((qrels_path, q.line), None)
        text = clean(text or "")
        if q.qid not in topics:
            raise InputError(f"query {q.qid} has no text in {topics_path}", path=qrels_path, line=q.line)
        if not text and text_of is not None:
            raise InputError(
                f"judged passage {q.docid} (query {q.qid}) has no text", path=where[0], line=where[1]
            )
        if q.qid not in queries:
            queries[q.qid] = clean(topics[q.qid])
        rows.append((dataset, q.qid, queries[q.qid], q.docid, text, q.grade))
    return pd.DataFrame(rows, columns=DATASET_COLUMNS)


def build_trec_table(
    dataset: str,
    qrels_path: str | Path,
    topics_path: str | Path,
    texts_path: str | Path | None,
    encoding: str | None = None,
    repair: bool = True,
) -> pd.DataFrame:
    """Normalised table from qrels + topics + a judged-text file aligned line by line with the qrels
    (None: no texts, every passage empty)."""
    qrels = read_qrels(qrels_path, encoding)
    topics = read_topics(topics_path, encoding)
    if texts_path is None:
        return _check_and_build(dataset, qrels, str(qrels_path), topics, str(topics_path), None, repair)
    texts = read_qrels_text(texts_path, encoding)
    if len(texts) != len(qrels):
        raise InputError(
            f"has {len(texts)} lines but {qrels_path} has {len(qrels)} judged pairs; "
            "the judged-text file must have one line per qrels line",
            path=str(texts_path),
        )
    aligned = {}
    for q, (no, docid, text) in zip(qrels, texts):
        if docid != q.docid:
            raise InputError(
                f"docid {docid!r} does not match {q.docid!r} of {qrels_path}:{q.line}",
                path=str(texts_path),
                line=no,
            )
        aligned[q.line] = ((str(texts_path), no), text)
    return _check_and_build(
        dataset, qrels, str(qrels_path), topics, str(topics_path), lambda q: aligned[q.line], repair
    )


def build_llmjudge_table(
    dataset: str,
    qrels_path: str | Path,
    topics_path: str | Path,
    docs_path: str | Path | None,
    docid_map: str | Path | None = None,
    encoding: str | None = None,
    repair: bool = True,
) -> pd.DataFrame:
    """Normalised table for LLMJudge: qrels use short ids (``p123``); passages come from the JSONL
    (None: no texts, every passage empty; ``docid_map`` is then not read).

    If the JSONL is keyed by MS MARCO v2 ids, ``docid_map`` (``docid_to_docidx.txt``) translates them.
    """
    qrels = read_qrels(qrels_path, encoding)
    topics = read_topics(topics_path, encoding)
    if docs_path is None:
        return _check_and_build(dataset, qrels, str(qrels_path), topics, str(topics_path), None, repair)
    docs = read_jsonl_docs(docs_path, encoding)
    if docid_map is not None:
        mapping = read_id_map(docid_map, encoding)
        docs = {mapping.get(k, k): v for k, v in docs.items()}

    def text_of(q: QrelLine):
        if q.docid not in docs:
            raise InputError(
                f"judged passage {q.docid} (query {q.qid}) is not in {docs_path}",
                path=str(qrels_path),
                line=q.line,
            )
        no, text = docs[q.docid]
        return (str(docs_path), no), text

    return _check_and_build(dataset, qrels, str(qrels_path), topics, str(topics_path), text_of, repair)


def build_table(
    name: str,
    fmt: str,
    qrels: str | Path,
    topics: str | Path,
    texts: str | Path | None,
    docid_map: str | Path | None = None,
    encoding: str | None = None,
    repair: bool = True,
) -> pd.DataFrame:
    """The normalised table of a dataset's raw files in format ``fmt`` (``trec``, ``llmjudge``).
    ``texts`` None: no passage texts (every ``passage`` empty). ``repair=False``: every line read
    and checked, the texts not repaired (ftfy, 90% of the time: how the plan checks a dataset's
    own files before any job, :mod:`judgelab.project.inputs`)."""
    if fmt == "trec":
        return build_trec_table(name, qrels, topics, texts, encoding, repair)
    if fmt == "llmjudge":
        return build_llmjudge_table(name, qrels, topics, texts, docid_map, encoding, repair)
    raise InputError(f"unknown format {fmt!r} (trec or llmjudge)", key=f"datasets.{name}.format")


def with_reference(full: pd.DataFrame, reference: pd.DataFrame, name: str) -> pd.DataFrame:
    """The dataset table ``full`` with the human grades replaced by ``reference`` (qid, docid,
    relevance: the labels people collected, ``datasets.<name>.reference``): only the pairs it
    labels, each with its label as the grade, in the table's order. A labelled pair the table does
    not hold (its passage is not in the dataset's files) is left out and counted in the log; labels
    of no topic of the dataset are an error naming the key."""
    key = f"datasets.{name}.reference"
    labels = reference.astype({"qid": str, "docid": str}).set_index(["qid", "docid"])["relevance"]
    if not set(labels.index.get_level_values(0)) & set(full["qid"]):
        shown = sorted(set(labels.index.get_level_values(0)))[:5]
        raise InputError(
            f"the reference labels cover no topic of dataset {name} (they label the topics "
            f"{', '.join(shown)}{', ...' if len(set(labels.index.get_level_values(0))) > 5 else ''}): "
            "a file of another dataset?",
            key=key,
        )
    grade = labels.reindex(pd.MultiIndex.from_frame(full[["qid", "docid"]])).to_numpy()
    kept = full.assign(grade=grade)[~pd.isna(grade)].astype({"grade": int}).reset_index(drop=True)
    outside = len(labels) - len(kept)
    log.info(
        "%s: the reference (%s) labels %d of the %d judged pairs, %d topics; %d labelled pairs are not in "
        "the dataset's files (no passage): left out",
        name,
        key,
        len(kept),
        len(full),
        kept["qid"].nunique(),
        outside,
    )
    return kept


def prepare_table(
    name: str,
    selection: dict,
    qrels: str | Path,
    topics: str | Path,
    texts: str | Path | None = None,
    reference: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What the prepare job does: the normalised table of the raw files and its configured subset
    (``selection``: format, encoding, docid_map, queries, exclude_queries, match_counts,
    max_queries, per_grade, seed). ``texts`` None: no passage texts (every ``passage`` empty).
    ``reference``: labels (qid, docid, relevance) replacing the qrels' grades before the selection
    (:func:`with_reference`). Returns (full table, subset). A dataset without a judged pair is an
    error naming its key and files."""
    sel = selection
    try:
        full = build_table(
            name, sel["format"], qrels, topics, texts, sel.get("docid_map"), sel.get("encoding")
        )
    except InputError as exc:
        raise with_refetch_hint(exc) from None
    if reference is not None and not full.empty:
        full = with_reference(full, reference, name)
    files = f"qrels {qrels}, topics {topics}" + (f", texts {texts}" if texts is not None else ", no texts")
    if full.empty:
        raise InputError(
            f"the dataset has no judged pair ({files}): nothing to judge", key=f"datasets.{name}"
        )
    subset = select(
        full,
        queries=[str(q) for q in sel.get("queries") or []],
        exclude_queries=[str(q) for q in sel.get("exclude_queries") or []],
        match_counts=sel.get("match_counts"),
        max_queries=sel.get("max_queries"),
        per_grade=sel.get("per_grade"),
        seed=int(sel.get("seed") or 0),
        name=name,
    )
    if subset.empty:
        raise InputError(
            f"the selection (queries, exclude_queries, max_queries, per_grade) keeps none of the "
            f"{len(full)} judged pairs ({files})",
            key=f"datasets.{name}",
        )
    return full, subset
