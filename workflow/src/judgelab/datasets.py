"""Relevance datasets: readers for the public formats, one normalised table, subsets, download.

Formats read (the ones the public sources publish):

* TREC qrels: ``qid Q0 docid grade`` (whitespace separated; LLMJudge writes ``0`` for ``Q0``).
* topics: ``qid<TAB>query``.
* judged-text file: ``docid<TAB>passage``, one line per qrels line in the same order
  (the ``qrels_text.dlXX`` files of Narabzad/llm-relevance-judgement-comparison).
* LLMJudge passages: JSON lines ``{"docid": ..., "doc": ...}``.

Every reader raises :class:`~judgelab.errors.InputError` naming the file and line of the
first bad line. Files are decoded with an explicit encoding (UTF-8 unless ``datasets.<name>.encoding``
says otherwise, never guessed: a byte that does not decode is an error at its line); a leading
byte-order mark is dropped. A pair listed twice must agree on grade and passage text; a dataset
with no judged pair left is an error naming the dataset and its files. The normalised table has
the columns of :data:`judgelab.tables.DATASET_COLUMNS`.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import ftfy
import numpy as np
import pandas as pd

from .errors import InputError
from .jobs import as_value
from .labels import GRADES
from .tables import DATASET_COLUMNS, write_dataset
from .textfiles import text_lines

log = logging.getLogger(__name__)

#: Public sources of the full datasets (see ``judgelab download``).
ANSERINI = "https://raw.githubusercontent.com/castorini/anserini-tools/master/topics-and-qrels"
QRELS_TEXT = "https://raw.githubusercontent.com/Narabzad/llm-relevance-judgement-comparison/main/data"
LLMJUDGE = "https://raw.githubusercontent.com/llm4eval/LLMJudge/main/data"

SOURCES: dict[str, dict[str, str]] = {
    "dl19": {
        "format": "trec",
        "qrels": f"{ANSERINI}/qrels.dl19-passage.txt",
        "topics": f"{ANSERINI}/topics.dl19-passage.txt",
        "texts": f"{QRELS_TEXT}/qrels_text.dl19",
    },
    "dl20": {
        "format": "trec",
        "qrels": f"{ANSERINI}/qrels.dl20-passage.txt",
        "topics": f"{ANSERINI}/topics.dl20.txt",
        "texts": f"{QRELS_TEXT}/qrels_text.dl20",
    },
    "dl21": {
        "format": "trec",
        "qrels": f"{ANSERINI}/qrels.dl21-passage.txt",
        "topics": f"{ANSERINI}/topics.dl21.txt",
        "texts": f"{QRELS_TEXT}/qrels_text.dl21",
    },
    "llmjudge": {
        "format": "llmjudge",
        "qrels": f"{LLMJUDGE}/llmjudge_test_qrel_idx.txt",
        "topics": f"{LLMJUDGE}/llm4eval_query_2024.txt",
        "texts": f"{LLMJUDGE}/llm4eval_document_2024.jsonl",
    },
}

#: Public sources with more than one labelled qrels file, by split (``datasets.<name>.split``;
#: null takes the ``qrels`` of :data:`SOURCES`, the first split here). LLMJudge (llm4eval/LLMJudge
#: ``data/``): ``test`` = the test qrels with the human labels, released after the challenge (25
#: topics, 4,423 pairs); ``dev`` = the development qrels (25 other topics, 7,263 pairs), from which
#: seed 000's Table 4 set comes (without topics q20, q21, q42, q48: 21 topics, 6,169 pairs).
QRELS_SPLITS: dict[str, dict[str, str]] = {
    "llmjudge": {
        "test": f"{LLMJUDGE}/llmjudge_test_qrel_idx.txt",
        "dev": f"{LLMJUDGE}/llm4eval_dev_qrel_2024.txt",
    },
}


@dataclass(frozen=True)
class KnownFile:
    """What a published file is known to be: its size in bytes and its SHA-256 (None: unknown)."""

    size: int | None = None
    sha256: str | None = None


#: Size and SHA-256 of the public files the project knows, measured on the byte-identical copies
#: in ``../shared/data/`` (see its README). :func:`download` checks a download of one of these
#: URLs against them. ``llm4eval_document_2024.jsonl`` (LLMJudge's passages) had no local copy to measure:
#: nothing is recorded for it, so only the server's Content-Length is checked. The sources are
#: branches (``master``/``main``): if a maintainer changes a file, its download fails naming both
#: sizes and this table must be updated.
KNOWN_FILES: dict[str, KnownFile] = {
    f"{ANSERINI}/qrels.dl19-passage.txt": KnownFile(
        187092, "8a1f10d550732e4cd91d7fc49846a3784de4040972f583e69285a88f3c5fee92"
    ),
    f"{ANSERINI}/topics.dl19-passage.txt": KnownFile(
        1764, "518992da259fb61f64e4790791df91a7b42ea5773f374aed59220ebb51d58d90"
    ),
    f"{QRELS_TEXT}/qrels_text.dl19": KnownFile(
        3239264, "0f571d17aad740ff40bf42e7264f5091d32cf5f5704cdd1b730bd1e98ca67755"
    ),
    f"{ANSERINI}/qrels.dl20-passage.txt": KnownFile(
        218617, "60d4c34561f9687f8f73e0a752ba80ab80159b3e9c1bedd0a351f747ed6f5684"
    ),
    f"{ANSERINI}/topics.dl20.txt": KnownFile(
        8394, "726cb4018b85a335fcbe09004df7f084ec1bf20531961d9af7b0c71dd609e69b"
    ),
    f"{QRELS_TEXT}/qrels_text.dl20": KnownFile(
        3904081, "8cd962487abf531689c022f0d1081c396b75757d4bfb94fb85795563678c1dca"
    ),
    f"{ANSERINI}/qrels.dl21-passage.txt": KnownFile(
        433887, "15d1c6e8b13fd665dd043c43213e331452213ddc70f70b8522600bcce64db427"
    ),
    f"{ANSERINI}/topics.dl21.txt": KnownFile(
        24585, "d7c24b788f01cb9ee9f1ec663dfc623594a94c6c878cd8b7fb040a35d634921a"
    ),
    f"{QRELS_TEXT}/qrels_text.dl21": KnownFile(
        3541250, "551ac773c42b7d1a8f2c2315e38d5477282792e29667e3c7bfb3c8a7bf0f2fd2"
    ),
    f"{LLMJUDGE}/llmjudge_test_qrel_idx.txt": KnownFile(
        61295, "3a2169a62cecf8725acf402be3222f53399fd5b3467f9f734aa3b2bbd583426c"
    ),
    f"{LLMJUDGE}/llm4eval_query_2024.txt": KnownFile(
        2098, "bb36ba8599142ff86e8fbeaebc90d78cbbe2857e08592005dcf190c863ed3628"
    ),
    f"{LLMJUDGE}/llm4eval_dev_qrel_2024.txt": KnownFile(
        100476, "5031585e51dc4ec6ecd93badfe47e955c5de475b17fb6925b887834649d22fbd"
    ),
}

#: The rule of ``workflow/rules/datasets.smk`` whose outputs :func:`download_dataset` writes.
DOWNLOAD_RULE = "download_dataset"


class DownloadError(OSError):
    """A download that failed or ended early: nothing was written under the final name.

    ``received``: bytes that arrived; ``expected``: bytes announced (Content-Length) or known
    (:data:`KNOWN_FILES`), None if neither."""

    def __init__(self, message: str, *, url: str, dest: Path, received: int, expected: int | None):
        super().__init__(message)
        self.url, self.dest, self.received, self.expected = url, dest, received, expected


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


def clean_text(text: str) -> str:
    """Repair MS MARCO mojibake (``â€™`` -> ``’``) with ftfy and trim white space."""
    return ftfy.fix_text(text).strip()


def _check_and_build(
    dataset: str, qrels: list[QrelLine], qrels_path: str, topics: dict[str, str], topics_path: str, text_of
) -> pd.DataFrame:
    """Shared checks: known query, passage present, no conflicting duplicate pairs (a pair listed
    twice must agree on grade and passage text)."""
    seen: dict[tuple[str, str], tuple[QrelLine, tuple[str, int], str]] = {}
    rows = []
    for q in qrels:
        key = (q.qid, q.docid)
        where, text = text_of(q)
        text = clean_text(text or "")
        if key in seen:
            first, first_where, first_text = seen[key]
            if first.grade != q.grade:
                raise InputError(
                    f"pair (qid {q.qid}, docid {q.docid}) is judged twice with different grades "
                    f"({first.grade} at line {first.line}, {q.grade} here)",
                    path=qrels_path,
                    line=q.line,
                )
            if first_text != text:
                raise InputError(
                    f"pair (qid {q.qid}, docid {q.docid}) is listed twice with different passage "
                    f"texts: {first_where[0]}:{first_where[1]} and {where[0]}:{where[1]}",
                    path=where[0],
                    line=where[1],
                )
            continue  # an exact duplicate line carries no new information
        seen[key] = (q, where, text)
        if q.qid not in topics:
            raise InputError(f"query {q.qid} has no text in {topics_path}", path=qrels_path, line=q.line)
        if not text:
            raise InputError(
                f"judged passage {q.docid} (query {q.qid}) has no text", path=where[0], line=where[1]
            )
        rows.append((dataset, q.qid, clean_text(topics[q.qid]), q.docid, text, q.grade))
    return pd.DataFrame(rows, columns=DATASET_COLUMNS)


def build_trec_table(
    dataset: str,
    qrels_path: str | Path,
    topics_path: str | Path,
    texts_path: str | Path,
    encoding: str | None = None,
) -> pd.DataFrame:
    """Normalised table from qrels + topics + a judged-text file aligned line by line with the qrels."""
    qrels = read_qrels(qrels_path, encoding)
    topics = read_topics(topics_path, encoding)
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
        dataset, qrels, str(qrels_path), topics, str(topics_path), lambda q: aligned[q.line]
    )


def build_llmjudge_table(
    dataset: str,
    qrels_path: str | Path,
    topics_path: str | Path,
    docs_path: str | Path,
    docid_map: str | Path | None = None,
    encoding: str | None = None,
) -> pd.DataFrame:
    """Normalised table for LLMJudge: qrels use short ids (``p123``); passages come from the JSONL.

    If the JSONL is keyed by MS MARCO v2 ids, ``docid_map`` (``docid_to_docidx.txt``) translates them.
    """
    qrels = read_qrels(qrels_path, encoding)
    topics = read_topics(topics_path, encoding)
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

    return _check_and_build(dataset, qrels, str(qrels_path), topics, str(topics_path), text_of)


def select(
    table: pd.DataFrame,
    *,
    queries: list[str] | None = None,
    exclude_queries: list[str] | None = None,
    match_counts: dict | None = None,
    max_queries: int | None = None,
    per_grade: int | None = None,
    seed: int = 0,
    name: str | None = None,
) -> pd.DataFrame:
    """Subset a table, in this order: an explicit query list, the queries to leave out, a seeded
    subset of whole topics with given counts (``match_counts``: ``{topics, grades}``, see
    :func:`match_topics`), the first ``max_queries`` queries (file order), then a label-stratified
    sample of at most ``per_grade`` pairs per grade, drawn with ``seed``."""
    out = table

    def key(k: str) -> str:
        return f"datasets.{name}.{k}" if name else k

    for which, ids in (("queries", queries), ("exclude_queries", exclude_queries)):
        if not ids:
            continue
        known = set(out["qid"])
        missing = [q for q in ids if str(q) not in known]
        if missing:
            raise InputError(f"queries not in the dataset: {missing}", key=key(which))
        chosen = out["qid"].isin([str(q) for q in ids])
        out = out[chosen if which == "queries" else ~chosen]
    if match_counts:
        if max_queries or per_grade:
            raise InputError(
                "match_counts selects whole topics with the given pairs per grade; max_queries and "
                "per_grade would cut that subset (set them to null)",
                key=key("match_counts"),
            )
        qids, info = match_topics(
            out,
            int(match_counts["topics"]),
            [int(g) for g in match_counts["grades"]],
            seed,
            key=key("match_counts"),
        )
        log.info(
            "%s: %d topics with pairs per grade %s (seed %d; %s): %s",
            name or "dataset",
            len(qids),
            list(match_counts["grades"]),
            seed,
            info["how"],
            " ".join(qids),
        )
        out = out[out["qid"].isin(qids)]
    if max_queries:
        keep = list(dict.fromkeys(out["qid"]))[:max_queries]
        out = out[out["qid"].isin(keep)]
    if per_grade:
        # one seeded generator for every grade: each grade's draw is its own (a fresh
        # random_state=seed per grade drew the same positions in each, e.g. one query's pairs)
        rng = np.random.default_rng(seed)
        parts = [
            g.sample(n=min(per_grade, len(g)), random_state=rng) for _, g in out.groupby("grade", sort=True)
        ]
        out = pd.concat(parts) if parts else out.iloc[0:0]
    return out.sort_values(["qid", "docid"], kind="stable").reset_index(drop=True)


def known_file(url: str) -> KnownFile | None:
    """What :data:`KNOWN_FILES` records for exactly ``url`` (None: nothing). A ``file://`` mirror is
    not matched by its file name: the bundled samples carry the public names with other contents."""
    return KNOWN_FILES.get(url)


def _marker(dest: Path) -> Path:
    """Where :func:`download` records what it fetched to ``dest`` (see :func:`refetch_hint`)."""
    return dest.with_name(dest.name + ".download.json")


def _sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(url: str, dest: str | Path, *, size: int | None = None, sha256: str | None = None) -> Path:
    """Fetch ``url`` (``https://``, ``http://`` or ``file://``) to ``dest`` atomically and verified.

    The bytes that arrive are compared with the server's ``Content-Length`` (for ``file://``: the
    file's size when opened) and with ``size`` / ``sha256``, which default to what
    :func:`known_file` records for the URL. Only a complete, matching download is renamed to
    ``dest``; a failed, short or different one leaves nothing under ``dest`` (an earlier file there
    is kept as it was) and raises one :class:`DownloadError` naming the URL, the bytes that arrived
    and the bytes expected. A successful download also writes ``<dest>.download.json`` (URL, size,
    SHA-256, time) for :func:`refetch_hint`."""

    dest = Path(dest)
    known = known_file(url)
    if known is not None:
        size = known.size if size is None else size
        sha256 = known.sha256 if sha256 is None else sha256
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=dest.name + ".", suffix=".part")
    received, announced = 0, None
    h = hashlib.sha256()

    def fail(what: str, expected: int | None) -> DownloadError:
        want = f"{expected:,} bytes expected" if expected is not None else "size unknown"
        return DownloadError(
            f"download of {url} {what}: {received:,} bytes arrived, {want}; nothing was written to {dest}",
            url=url,
            dest=dest,
            received=received,
            expected=expected,
        )

    try:
        try:
            with open(fd, "wb") as out, urllib.request.urlopen(url, timeout=120) as resp:
                length = resp.headers.get("Content-Length")
                announced = int(length) if length is not None and length.strip().isdigit() else None
                while True:
                    block = resp.read(1 << 20)
                    if not block:
                        break
                    out.write(block)
                    h.update(block)
                    received += len(block)
        except http.client.IncompleteRead as exc:
            received += len(exc.partial)
            raise fail("ended early", announced if announced is not None else size) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            raise fail(f"failed ({exc})", announced if announced is not None else size) from None
        if announced is not None and received != announced:
            raise fail("ended early" if received < announced else "sent more than it announced", announced)
        recorded = (
            (" (recorded in judgelab.datasets.KNOWN_FILES; if the source changed upstream, record it anew)")
            if known
            else ""
        )
        if size is not None and received != size:
            raise fail(f"does not have the expected size{recorded}", size)
        digest = h.hexdigest()
        if sha256 is not None and digest != sha256:
            raise fail(f"has SHA-256 {digest}, not the expected {sha256}{recorded}", size)
        Path(tmp).replace(dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    record = {
        "url": url,
        "bytes": received,
        "sha256": digest,
        "verified": bool(size or sha256),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    try:
        _marker(dest).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:  # the download itself is complete; only the hint of a later error is lost
        log.warning("could not record the download of %s in %s: %s", url, _marker(dest), exc)
    log.info(
        "downloaded %s: %s bytes%s",
        url,
        f"{received:,}",
        ", size and SHA-256 verified" if record["verified"] else "",
    )
    return dest


def refetch_hint(path: str | Path) -> str | None:
    """How to fetch a downloaded raw file again, for the error of a file that fails to parse; None
    if :func:`download` did not write ``path`` (no ``<path>.download.json`` beside it).

    The hint says whether the file still has the bytes that were downloaded (if not, it was cut
    or changed since: fetching again helps) and names the command: delete the file and rerun
    Snakemake (its ``download_dataset`` job fetches the missing output again)."""
    p = Path(path)
    try:
        record = json.loads(_marker(p).read_text(encoding="utf-8"))
        url = record["url"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        now_bytes = p.stat().st_size
        same = now_bytes == record.get("bytes") and _sha256_of(p) == record.get("sha256")
    except OSError:
        return None
    if same and record.get("verified"):
        return (
            f"the file is byte for byte the one published at {url} (size and SHA-256 checked): "
            "fetching it again will not change it"
        )
    if same:
        state = f"the file has the {now_bytes:,} bytes downloaded from {url}"
    else:
        state = (
            f"the file changed since it was downloaded from {url} ({now_bytes:,} bytes now, "
            f"{record.get('bytes')} then)"
        )
    return (
        f"{state}; to fetch it again, delete it and rerun your snakemake command (rule "
        f"{DOWNLOAD_RULE} fetches the missing file): rm {p}"
    )


def with_refetch_hint(exc: InputError) -> InputError:
    """``exc`` with :func:`refetch_hint` of the file it names appended (``exc`` itself if that file
    was not downloaded)."""
    hint = refetch_hint(exc.path) if exc.path else None
    if hint is None:
        return exc
    return InputError(f"{exc.message} ({hint})", path=exc.path, line=exc.line)


def source_urls(
    name: str, overrides: dict[str, str] | None = None, split: str | None = None
) -> dict[str, str]:
    """The public URLs of dataset ``name`` (keys qrels, topics, texts), the qrels of ``split``
    where the source has several (:data:`QRELS_SPLITS`), with ``overrides`` applied (e.g.
    ``file://`` mirrors)."""
    if name not in SOURCES and not overrides:
        raise InputError(
            f"no public source is known for {name!r}; known: {sorted(SOURCES)} (or give `urls`)",
            key=f"datasets.{name}.source",
        )
    urls = {k: v for k, v in SOURCES.get(name, {}).items() if k != "format"}
    if split is not None:
        splits = QRELS_SPLITS.get(name, {})
        if split not in splits:
            known = f"its splits: {sorted(splits)}" if splits else "its public source has one qrels file"
            raise InputError(f"unknown split {split!r} ({known})", key=f"datasets.{name}.split")
        urls["qrels"] = splits[split]
    urls.update(overrides or {})
    missing = [k for k in ("qrels", "topics", "texts") if k not in urls]
    if missing:
        raise InputError(f"no URL for {missing}", key=f"datasets.{name}.urls")
    return urls


def download_dataset(urls: Mapping[str, str], dest: Mapping[str, str | Path]) -> None:
    """Download each of ``urls`` (qrels, topics, texts) to the matching path of ``dest``."""
    for kind in ("qrels", "topics", "texts"):
        download(urls[kind], dest[kind])


# -- whole-topic subsets with given counts ------------------------------------------------------

#: Up to this many topics the search is exhaustive (meet in the middle: 2 x 2^22 subset sums).
EXACT_TOPICS = 44
#: With more topics, each draw keeps a seeded EXACT_TOPICS of them and searches those exhaustively.
MAX_DRAWS = 20


def topic_grade_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Pairs per grade of every topic (rows: qid in string order, columns: the grades)."""
    counts = table.groupby(["qid", "grade"]).size().unstack(fill_value=0)
    counts = counts.reindex(columns=list(GRADES), fill_value=0)
    return counts.sort_index(key=lambda ix: ix.astype(str))


def subsets_with_counts(counts: np.ndarray, topics: int, grades: Sequence[int]) -> list[tuple[int, ...]]:
    """Every subset of ``topics`` rows of ``counts`` (topics x grades, pairs per grade) whose
    column sums are exactly ``grades``, as sorted row-index tuples in ascending order. Exhaustive
    meet in the middle: the cardinality and the per-grade sums are packed into one integer (each
    in a field wide enough for the total over all rows, so sums never carry into the next field),
    the subset sums of each half are enumerated, pruned where a field exceeds its target, and the
    halves are joined on sum = target. Fine up to about :data:`EXACT_TOPICS` rows."""
    counts = np.asarray(counts, dtype=np.int64)
    n = len(counts)
    target = [int(topics), *(int(g) for g in grades)]
    caps = [n, *(int(c) for c in counts.sum(axis=0))]
    if any(t < 0 or t > c for t, c in zip(target, caps)):
        return []
    widths = [max(1, c.bit_length()) for c in caps]
    if sum(widths) > 63:
        raise ValueError(f"too many pairs per grade ({caps[1:]}) to pack into 63 bits")
    shifts = np.cumsum([0, *widths[:-1]]).tolist()
    fields = list(zip(shifts, [(1 << w) - 1 for w in widths], target))
    packed = [sum(int(v) << s for v, s in zip((1, *row), shifts)) for row in counts.tolist()]
    goal = np.int64(sum(t << s for t, s in zip(target, shifts)))

    def half(values: list[int]) -> tuple[np.ndarray, np.ndarray]:
        sums, masks = np.zeros(1, np.int64), np.zeros(1, np.int64)
        for bit, v in enumerate(values):
            grown = sums + np.int64(v)
            keep = np.ones(len(grown), dtype=bool)
            for shift, mask, limit in fields:
                keep &= ((grown >> shift) & mask) <= limit
            sums = np.concatenate([sums, grown[keep]])
            masks = np.concatenate([masks, masks[keep] | np.int64(1 << bit)])
        return sums, masks

    h = n // 2
    left, left_masks = half(packed[:h])
    right, right_masks = half(packed[h:])
    order = np.argsort(right)
    right, right_masks = right[order], right_masks[order]
    need = goal - left
    by_need = np.argsort(need)  # sorted queries: searchsorted walks `right` once
    lo = np.empty_like(by_need)
    lo[by_need] = np.searchsorted(right, need[by_need], "left")
    hit = np.flatnonzero(right[np.minimum(lo, len(right) - 1)] == need)
    found = []
    for i in hit:
        j = lo[i]
        while j < len(right) and right[j] == need[i]:
            m = int(left_masks[i]) | (int(right_masks[j]) << h)
            found.append(tuple(k for k in range(n) if m >> k & 1))
            j += 1
    return sorted(found)


def match_topics(
    table: pd.DataFrame, topics: int, grades: Sequence[int], seed: int, *, key: str = "match_counts"
) -> tuple[list[str], dict]:
    """A seeded subset of ``topics`` whole topics of ``table`` whose pairs per grade are exactly
    ``grades`` (grades 0, 1, 2, 3): seed 000's Table 4 gives such counts but not the topic lists.
    With at most :data:`EXACT_TOPICS` topics every matching subset is found
    (:func:`subsets_with_counts`) and one is drawn with ``seed``, uniformly; with more, each of up
    to :data:`MAX_DRAWS` seeded draws keeps :data:`EXACT_TOPICS` topics and searches those
    exhaustively, and one subset of the first draw that has any is drawn with ``seed``. Returns
    the topic ids (string order) and what the search did (``how``, ``matching``: the subsets found
    among the topics searched, ``exhaustive``). No subset is an error naming ``key``."""
    if len(grades) != len(GRADES):
        raise InputError(f"expected {len(GRADES)} pair counts (grades 0-3), got {list(grades)}", key=key)
    counts = topic_grade_counts(table)
    qids, matrix = [str(q) for q in counts.index], counts.to_numpy()
    n = len(qids)
    want = (
        f"{topics} topics with {list(grades)} pairs per grade (of {n} topics, {matrix.sum(axis=0).tolist()})"
    )
    if topics > n or any(g > t for g, t in zip(grades, matrix.sum(axis=0))):
        raise InputError(f"cannot take {want}: not enough topics or pairs", key=key)
    rng = np.random.RandomState(seed)  # the legacy generator: its streams never change
    if n <= EXACT_TOPICS:
        found = subsets_with_counts(matrix, topics, grades)
        if not found:
            raise InputError(f"no subset of {want} (exhaustive search)", key=key)
        pick = found[rng.randint(len(found))]
        how = f"{len(found)} matching subsets of the {n} topics (exhaustive), one drawn"
        return sorted(qids[i] for i in pick), {"how": how, "matching": len(found), "exhaustive": True}
    for draw in range(1, MAX_DRAWS + 1):
        keep = np.sort(rng.choice(n, EXACT_TOPICS, replace=False))
        found = subsets_with_counts(matrix[keep], topics, grades)
        if found:
            pick = found[rng.randint(len(found))]
            how = (
                f"draw {draw}: {len(found)} matching subsets of {EXACT_TOPICS} seeded topics of the "
                f"{n} (exhaustive among them), one drawn"
            )
            chosen = sorted(qids[keep[i]] for i in pick)
            return chosen, {"how": how, "matching": len(found), "exhaustive": False}
    raise InputError(
        f"no subset of {want} in {MAX_DRAWS} seeded draws of {EXACT_TOPICS} topics each (not an "
        "exhaustive search: the counts may be unreachable; check them or try another seed)",
        key=key,
    )


def build_table(
    name: str,
    fmt: str,
    qrels: str | Path,
    topics: str | Path,
    texts: str | Path,
    docid_map: str | Path | None = None,
    encoding: str | None = None,
) -> pd.DataFrame:
    if fmt == "trec":
        return build_trec_table(name, qrels, topics, texts, encoding)
    if fmt == "llmjudge":
        return build_llmjudge_table(name, qrels, topics, texts, docid_map, encoding)
    raise InputError(f"unknown format {fmt!r} (trec or llmjudge)", key=f"datasets.{name}.format")


def prepare_table(
    name: str, selection: dict, qrels: str | Path, topics: str | Path, texts: str | Path
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What the prepare job does: the normalised table of the raw files and its configured subset
    (``selection``: format, encoding, docid_map, queries, exclude_queries, match_counts,
    max_queries, per_grade, seed). Returns (full table, subset). A dataset without a judged pair
    is an error naming its key and files."""
    sel = selection
    try:
        full = build_table(
            name, sel["format"], qrels, topics, texts, sel.get("docid_map"), sel.get("encoding")
        )
    except InputError as exc:
        raise with_refetch_hint(exc) from None
    files = f"qrels {qrels}, topics {topics}, texts {texts}"
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


# -- the jobs of the dataset rules ------------------------------------------------------------


def download_job(urls: str | dict, out: dict[str, str]) -> None:
    """Fetch the qrels, topics and texts of ``urls`` to the paths of ``out``."""
    download_dataset(as_value(urls), out)


def prepare_dataset_job(
    name: str, qrels: str, topics: str, texts: str, selection: str | dict, out: str
) -> pd.DataFrame:
    full, table = prepare_table(name, as_value(selection), qrels, topics, texts)
    log.info("%s: %d judged pairs, %d queries", name, len(full), full["qid"].nunique())
    log.info(
        "%s after selection: %d pairs, %d queries, grades %s",
        name,
        len(table),
        table["qid"].nunique(),
        table["grade"].value_counts().sort_index().to_dict(),
    )
    write_dataset(table, out)
    return table
