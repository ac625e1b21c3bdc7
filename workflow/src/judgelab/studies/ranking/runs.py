"""TREC run files: reading, names, the TREC DL 2021 passage runs, trec_eval's order, the pool.

A run file has one retrieved document per line, ``qid Q0 docid rank score tag``, whitespace
separated (the second field is ignored, as trec_eval ignores it). :func:`read_run` gives a table
with the columns :data:`RUN_COLUMNS` (ids as ``str``, ``rank`` as ``int``, ``score`` as
``float``), rows in file order. Blank lines are skipped (as :func:`judgelab.data.readers.read_qrels`
skips them); every other malformed line is an :class:`~judgelab.errors.InputError` naming the file
and its 1-based line.

The ``rank`` field is kept but, like trec_eval, never used for ordering: :func:`top_k` orders a
topic's documents as trec_eval does (score descending, ties by docid descending).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from judgelab.data.resources import resources_dir
from judgelab.data.textfiles import text_lines
from judgelab.errors import InputError

#: Columns of a run table, in order.
RUN_COLUMNS = ["qid", "docid", "rank", "score", "tag"]

#: Where the 63 TREC DL 2021 passage runs are published (one file ``input.<run>.txt`` each).
DL21_RUNS_BASE = (
    "https://raw.githubusercontent.com/Narabzad/llm-relevance-judgement-comparison/main/runs/dl21"
)

#: The bundled list of the DL21 run names, relative to ``resources/``.
DL21_RUNS_FILE = Path("ranking") / "dl21_runs.txt"

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


def read_run(path: str | Path, name: str | None = None, encoding: str | None = None) -> pd.DataFrame:
    """The run in the TREC run file ``path`` as a table with the columns :data:`RUN_COLUMNS`.

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
    if not rows:
        raise InputError("the run file has no line 'qid Q0 docid rank score tag' (it is empty)", path=path_s)
    run = pd.DataFrame(rows, columns=RUN_COLUMNS)
    run = run.astype({"qid": str, "docid": str, "rank": "int64", "score": "float64", "tag": str})
    run.attrs.update(name=run_name(path, name), path=path_s, first_line=first_line)
    return run


def check_topics(run: pd.DataFrame, path: str | Path, judged_qids: Iterable[str]) -> list[str]:
    """The judged topics (``judged_qids``) that ``run`` retrieves documents for, sorted; a run
    naming none of them is an error naming ``path`` and the run's first line (its topic ids then
    match none of the qrels', e.g. a run of another collection)."""
    judged = {str(q) for q in judged_qids}
    topics = sorted(set(run["qid"]))
    covered = sorted(judged.intersection(topics))
    if not covered:
        line = int(run.attrs.get("first_line", 1))
        shown = ", ".join(topics[:5]) + (", ..." if len(topics) > 5 else "")
        known = ", ".join(sorted(judged)[:5]) + (", ..." if len(judged) > 5 else "")
        raise InputError(
            f"the run names none of the {len(judged)} judged topics (its topics: {shown}; "
            f"judged: {known or 'none'})",
            path=str(path),
            line=line,
        )
    return covered


def read_runs(
    paths: Iterable[str | Path] | Mapping[str, str | Path], encoding: str | None = None
) -> dict[str, pd.DataFrame]:
    """Run name -> run table (:func:`read_run`) of every file of ``paths``, in the given order.
    ``paths`` is a list of files (each named by :func:`run_name`) or a mapping name -> file.
    Two files with the same run name are an error naming both files."""
    named = list(paths.items()) if isinstance(paths, Mapping) else [(None, p) for p in paths]
    runs: dict[str, pd.DataFrame] = {}
    where: dict[str, str] = {}
    for name, path in named:
        key = run_name(path, name)
        if key in runs:
            raise InputError(
                f"run name {key!r} is also the name of the run in {where[key]}; give the runs distinct names",
                path=str(path),
            )
        runs[key] = read_run(path, key, encoding)
        where[key] = str(path)
    return runs


def dl21_run_names(resources: str | Path | None = None) -> list[str]:
    """The names of the 63 runs submitted to the TREC DL 2021 passage task, from the bundled
    ``resources/ranking/dl21_runs.txt`` (one name per line; blank lines skipped)."""
    path = resources_dir(resources) / DL21_RUNS_FILE
    names: list[str] = []
    for no, line in text_lines(path):
        name = line.strip()
        if not name:
            continue
        if name in names:
            raise InputError(f"run name {name!r} is listed twice", path=str(path), line=no)
        names.append(name)
    return names


def run_urls(names: Iterable[str], base: str = DL21_RUNS_BASE) -> dict[str, str]:
    """Run name -> URL ``<base>/input.<run>.txt`` (``base`` may be a ``file://`` mirror)."""
    root = base.rstrip("/")
    return {name: f"{root}/input.{name}.txt" for name in names}


def download_runs(urls: Mapping[str, str], dest_dir: str | Path) -> dict[str, Path]:
    """Download every run of ``urls`` (name -> URL) to ``dest_dir/input.<run>.txt`` with
    :func:`judgelab.data.sources.download` (atomic: a failed download leaves no partial file). Returns
    name -> local path."""
    from judgelab.data.sources import download

    dest = Path(dest_dir)
    return {name: download(url, dest / f"input.{name}.txt") for name, url in urls.items()}


def trec_order(run: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``run`` in trec_eval's order (see :func:`top_k`): topics by qid (as strings),
    within a topic score descending, ties by docid descending; index reset."""
    return run.sort_values(
        ["qid", "score", "docid"], ascending=[True, False, False], kind="mergesort"
    ).reset_index(drop=True)


def top_k(run: pd.DataFrame, k: int) -> pd.DataFrame:
    """Each topic's first ``k`` documents in trec_eval's order, topics sorted by qid (as strings).

    trec_eval (``form_res_rels.c``, ``comp_sim_docno``: ``sim`` descending, then
    ``strcmp(p2->docno, p1->docno)``) orders a topic's documents by score descending and breaks
    ties by docid descending (byte order; the same as Python's order of ``str`` for UTF-8 text);
    the ``rank`` field is ignored. That is what this function does. Checked against trec_eval's
    source (usnistgov/trec_eval ``form_res_rels.c``) and against pytrec_eval through ir-measures
    in ``tests/ranking/test_ranking_runs.py`` (a tie broken the other way changes P@1 and nDCG@1).
    The rows keep the columns of ``run``."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, not {k!r}")
    return trec_order(run).groupby("qid", sort=False).head(k).reset_index(drop=True)


def pool(runs: Mapping[str, pd.DataFrame], k: int, qids: Iterable[str] | None = None) -> pd.DataFrame:
    """The depth-``k`` pool of ``runs``: every (qid, docid) in some run's :func:`top_k` on the topics
    ``qids`` (None: every topic of any run), with ``n_runs`` = how many runs have the pair in their
    top ``k``. Columns qid, docid, n_runs; sorted by qid and docid."""
    keep = None if qids is None else {str(q) for q in qids}
    parts = []
    for run in runs.values():
        top = top_k(run, k)[["qid", "docid"]]
        parts.append(top if keep is None else top[top["qid"].isin(keep)])
    if not parts:
        return pd.DataFrame(
            {"qid": pd.Series(dtype=str), "docid": pd.Series(dtype=str), "n_runs": pd.Series(dtype="int64")}
        )
    pairs = pd.concat(parts, ignore_index=True)
    counts = pairs.groupby(["qid", "docid"], sort=True).size().rename("n_runs").reset_index()
    return counts.astype({"qid": str, "docid": str, "n_runs": "int64"})
