"""TREC run files in the ranking study: the runs of a dataset checked against its topics, the TREC
DL 2021 passage runs, trec_eval's order, the pool. The one reader of a run file is
:func:`judgelab.data.readers.read_run` (columns :data:`~judgelab.data.readers.RUN_COLUMNS`, every
malformed line an error naming the file and line).

The ``rank`` field is kept but, like trec_eval, never used for ordering: :func:`top_k` orders a
topic's documents as trec_eval does (score descending, ties by docid descending).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from judgelab.analysis.scores import top_k as top_k
from judgelab.analysis.scores import trec_order as trec_order
from judgelab.data.readers import read_run, run_name
from judgelab.data.resources import resources_dir
from judgelab.data.textfiles import text_lines
from judgelab.errors import InputError

#: Where the 63 TREC DL 2021 passage runs are published (one file ``input.<run>.txt`` each).
DL21_RUNS_BASE = (
    "https://raw.githubusercontent.com/Narabzad/llm-relevance-judgement-comparison/main/runs/dl21"
)

#: The bundled list of the DL21 run names, relative to ``resources/``.
DL21_RUNS_FILE = Path("ranking") / "dl21_runs.txt"


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
    :func:`judgelab.data.sources.download` (atomic: a failed download leaves no partial file; one
    without a length must end with a line end and read as a run before it takes its name).
    Returns name -> local path."""
    from judgelab.data.sources import download, lines_and

    dest = Path(dest_dir)
    return {
        name: download(url, dest / f"input.{name}.txt", shape=lines_and(read_run))
        for name, url in urls.items()
    }


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
