"""Scoring every run of a dataset in one job, each run's scores kept by content digest.

Scoring is cheap and a job's start is not (an interpreter, pandas, ir-measures: about 3 s), so
the dataset's runs are scored in one job (:func:`score_all`), and what a run scores under a qrels
is kept in a cache folder (``{results}/ranking/<dataset>/scores/cache/``), one file per entry,
named by the digest of everything the scores depend on (:func:`entry_key`):

* the run file's bytes (sha256; not its name or path: a run renamed or moved is a hit);
* the qrels' content (:func:`qrels_digest`: sha256 of its (qid, docid, relevance) rows sorted);
* the measures, in order (their names as configured);
* :data:`SCORING_VERSION` (judgelab's scoring code: raise it when :mod:`.scores` changes what it
  computes) and the versions of ir-measures and pytrec_eval.

So adding one run scores only that run (every other entry is a hit), a new judge's qrels scores
every run under that qrels only, and a rerun for any other reason (a param of the job changed)
reads every score from the cache. An entry holds the rows of :func:`.scores.score_runs` for one
run without its name (measure, topic, value, judged_at_k), written atomically (a temporary file
renamed), so a job stopped half-way leaves whole entries only, and two jobs writing one entry
write the same bytes. Entries are never removed by the workflow (each is a few kB); deleting the
folder costs one full rescoring.

Values read back are the values written: pandas writes floats with the shortest text that reads
back to the same float, which is also how the scores tables were written before the cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from judgelab.cache.filehash import sha256_of_file
from judgelab.data.readers import read_run
from judgelab.data.tables import read_tsv
from judgelab.studies.ranking.runs import check_topics
from judgelab.studies.ranking.scores import QRELS_COLUMNS, SCORE_COLUMNS, check_qrels, score_runs

log = logging.getLogger("judgelab")

#: The version of judgelab's scoring code in every cache key: raise it when
#: :func:`judgelab.studies.ranking.scores.score_runs` computes something else (a convention, a
#: column), so that no entry of the old code is read.
SCORING_VERSION = 1

#: Columns of a cache entry (:data:`~judgelab.studies.ranking.scores.SCORE_COLUMNS` without run).
ENTRY_COLUMNS = [c for c in SCORE_COLUMNS if c != "run"]

#: Columns of :func:`score_all`'s table (those of ``scores.tsv``).
COLUMNS = ["run", "qrels", "measure", "topic", "value", "judged_at_k"]


def qrels_digest(qrels: pd.DataFrame) -> str:
    """sha256 of a qrels table's content: its rows (qid, docid, relevance) sorted, whatever their
    order in the table."""
    q = check_qrels(qrels).sort_values(QRELS_COLUMNS[:2], kind="mergesort")
    text = "\n".join(f"{a}\t{b}\t{c}" for a, b, c in zip(q["qid"], q["docid"], q["relevance"]))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def library_versions() -> dict[str, str]:
    """The versions of the libraries that compute the scores (part of every cache key)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("ir-measures", "pytrec-eval-terrier"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


def entry_key(run_digest: str, qrels_key: str, measures: Sequence[str], versions: Mapping[str, str]) -> str:
    """The cache key of one run's scores under one qrels (see the module docstring)."""
    text = json.dumps(
        {
            "scoring": SCORING_VERSION,
            "libraries": dict(sorted(versions.items())),
            "run": run_digest,
            "qrels": qrels_key,
            "measures": [str(m) for m in measures],
        },
        sort_keys=True,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class ScoreCache:
    """The entries of one cache folder; ``hits`` and ``misses`` count this object's lookups
    (``misses``: the (run, qrels) names scored)."""

    folder: Path
    hits: int = 0
    misses: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.folder = Path(self.folder)

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.tsv"

    def get(self, key: str) -> pd.DataFrame | None:
        """The entry's rows, or None when it is not there."""
        p = self.path(key)
        if not p.is_file():
            return None
        return read_tsv(p, {"measure": str, "topic": str})[ENTRY_COLUMNS]

    def put(self, key: str, rows: pd.DataFrame) -> None:
        """Write an entry atomically (a temporary file in the same folder, renamed)."""
        p = self.path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".entry-", suffix=".tsv", dir=p.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                rows[ENTRY_COLUMNS].to_csv(fh, sep="\t", index=False)
            os.replace(tmp, p)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def score_all(
    run_files: Mapping[str, str | Path],
    qrels: Sequence[tuple[str, pd.DataFrame]],
    measures: Iterable[str],
    cache: ScoreCache,
    topics: Iterable[str],
    key: str | None = None,
) -> pd.DataFrame:
    """Every run of ``run_files`` (name -> run file) scored with ``measures`` under every qrels of
    ``qrels`` ((name, qrels table) pairs), through ``cache``: rows (:data:`COLUMNS`) ordered by
    run (as given), then qrels (as given), then as :func:`.scores.score_runs` orders them - the
    rows one scoring job per run wrote, concatenated in run order.

    A run is read only when one of its entries is missing, and then checked against the judged
    ``topics`` (:func:`judgelab.studies.ranking.runs.check_topics`: a run naming none of them is an
    error naming its file and line); each qrels scores its missing runs in one ir-measures
    evaluator. ``key`` names the config key of the measures in errors."""
    measures = [str(m) for m in measures]
    versions = library_versions()
    topics = list(topics)
    digests = {name: sha256_of_file(path) for name, path in run_files.items()}
    qkeys = {name: qrels_digest(q) for name, q in qrels}
    found: dict[tuple[str, str], pd.DataFrame] = {}
    missing: dict[str, list[str]] = {}
    for run in run_files:
        for name, _ in qrels:
            k = entry_key(digests[run], qkeys[name], measures, versions)
            rows = cache.get(k)
            if rows is None:
                missing.setdefault(name, []).append(run)
            else:
                found[(run, name)] = rows
                cache.hits += 1
    read: dict[str, pd.DataFrame] = {}
    for name, q in qrels:
        runs = missing.get(name, [])
        if not runs:
            continue
        for run in runs:
            if run not in read:
                table = read_run(run_files[run], run)
                check_topics(table, run_files[run], topics)
                read[run] = table
        scored = score_runs({run: read[run] for run in runs}, q, measures, key=key)
        for run, rows in scored.groupby("run", sort=False):
            rows = rows[ENTRY_COLUMNS].reset_index(drop=True)
            cache.put(entry_key(digests[str(run)], qkeys[name], measures, versions), rows)
            found[(str(run), name)] = rows
            cache.misses.append((str(run), name))
        log.info("%s: %d of %d runs scored, the others read from the cache", name, len(runs), len(run_files))
    parts = [found[(run, name)].assign(run=run, qrels=name) for run in run_files for name, _ in qrels]
    if not parts:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(parts, ignore_index=True)[COLUMNS]
