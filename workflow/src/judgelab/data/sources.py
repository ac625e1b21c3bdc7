"""Where each dataset comes from and how it is fetched: the public sources (:data:`SOURCES`,
``judgelab download``), the files whose size and SHA-256 are known (:data:`KNOWN_FILES`), and
verified downloads (:func:`download`: the announced length and any known digest are checked,
nothing incomplete is kept; a file that later fails to parse says how to fetch it again,
:func:`refetch_hint`)."""

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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from judgelab.errors import InputError

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
#: the PERAS paper's Table 4 set comes (without topics q20, q21, q42, q48: 21 topics, 6,169 pairs).
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


#: Seconds to wait before each retry of a download that failed in a way that may pass (an HTTP 5xx
#: answer, a refused, dropped or timed-out connection, a body shorter than announced); its length
#: is the number of retries. A 4xx answer, a wrong size or digest, or an HTML page is final.
RETRY_DELAYS: tuple[float, ...] = (1.0, 2.0, 4.0)

_HTML_START = (b"<!doctype html", b"<html", b"<head", b"<body")


class _Transient(Exception):
    """A failed attempt worth retrying (see :data:`RETRY_DELAYS`)."""

    def __init__(self, what: str, received: int, expected: int | None):
        super().__init__(what)
        self.what, self.received, self.expected = what, received, expected


def _looks_like_html(content_type: str | None, head: bytes) -> bool:
    if content_type and "text/html" in content_type.lower():
        return True
    return head.lstrip()[:16].lower().startswith(_HTML_START)


def download(
    url: str,
    dest: str | Path,
    *,
    size: int | None = None,
    sha256: str | None = None,
    html: bool = False,
) -> Path:
    """Fetch ``url`` (``https://``, ``http://`` or ``file://``) to ``dest`` atomically and verified.

    The bytes that arrive are compared with the server's ``Content-Length`` (for ``file://``: the
    file's size when opened) and with ``size`` / ``sha256``, which default to what
    :func:`known_file` records for the URL (so a body cut short without a Content-Length fails on
    the known size or digest). An HTML page where a data file is expected (an error page served
    with status 200: ``Content-Type: text/html`` or a body that starts like HTML) is refused unless
    ``html``. An attempt that fails in a way that may pass (an HTTP 5xx, a connection error, a body
    shorter than announced) is retried after each of :data:`RETRY_DELAYS`. Only a complete,
    matching download is renamed to ``dest``; a failed, short or different one leaves nothing
    under ``dest`` (an earlier file there is kept as it was) and raises one :class:`DownloadError`
    naming the URL, the bytes that arrived and the bytes expected. A successful download also
    writes ``<dest>.download.json`` (URL, size, SHA-256, time) for :func:`refetch_hint`."""

    dest = Path(dest)
    known = known_file(url)
    if known is not None:
        size = known.size if size is None else size
        sha256 = known.sha256 if sha256 is None else sha256
    dest.parent.mkdir(parents=True, exist_ok=True)
    attempt = 0
    while True:
        try:
            received, digest = _attempt(url, dest, size, sha256, html, known is not None)
            break
        except _Transient as exc:
            if attempt >= len(RETRY_DELAYS):
                tries = f" ({attempt + 1} attempts)" if attempt else ""
                raise _failure(url, dest, exc.what + tries, exc.received, exc.expected) from None
            log.warning(
                "download of %s %s (%s bytes arrived); trying again in %g s",
                url,
                exc.what,
                f"{exc.received:,}",
                RETRY_DELAYS[attempt],
            )
            time.sleep(RETRY_DELAYS[attempt])
            attempt += 1
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


def _failure(url: str, dest: Path, what: str, received: int, expected: int | None) -> DownloadError:
    want = f"{expected:,} bytes expected" if expected is not None else "size unknown"
    return DownloadError(
        f"download of {url} {what}: {received:,} bytes arrived, {want}; nothing was written to {dest}",
        url=url,
        dest=dest,
        received=received,
        expected=expected,
    )


def _attempt(
    url: str, dest: Path, size: int | None, sha256: str | None, html: bool, known: bool
) -> tuple[int, str]:
    """One attempt of :func:`download`: the file renamed into place, or an error (retryable:
    :class:`_Transient`; final: :class:`DownloadError`). Returns the bytes and their SHA-256."""
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=dest.name + ".", suffix=".part")
    received, announced = 0, None
    h = hashlib.sha256()
    head = b""
    try:
        try:
            with open(fd, "wb") as out, urllib.request.urlopen(url, timeout=120) as resp:
                length = resp.headers.get("Content-Length")
                announced = int(length) if length is not None and length.strip().isdigit() else None
                content_type = resp.headers.get("Content-Type")
                while True:
                    block = resp.read(1 << 20)
                    if not block:
                        break
                    if len(head) < 64:
                        head += block[: 64 - len(head)]
                    out.write(block)
                    h.update(block)
                    received += len(block)
        except http.client.IncompleteRead as exc:
            received += len(exc.partial)
            raise _Transient("ended early", received, announced if announced is not None else size) from None
        except urllib.error.HTTPError as exc:
            what = f"failed ({exc})"
            if exc.code >= 500:
                raise _Transient(what, received, size) from None
            raise _failure(url, dest, what, received, size) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            expected = announced if announced is not None else size
            if url.startswith("file:"):  # a local file that is missing or unreadable stays so
                raise _failure(url, dest, f"failed ({exc})", received, expected) from None
            raise _Transient(f"failed ({exc})", received, expected) from None
        if announced is not None and received < announced:
            raise _Transient("ended early", received, announced)
        if announced is not None and received > announced:
            raise _failure(url, dest, "sent more than it announced", received, announced)
        if not html and _looks_like_html(content_type, head):
            raise _failure(
                url,
                dest,
                f"sent an HTML page (Content-Type {content_type or 'not given'}, starting "
                f"{head.lstrip()[:24]!r}), not the data file: the source moved or answered with an "
                "error page",
                received,
                size,
            )
        recorded = (
            " (recorded in judgelab.data.sources.KNOWN_FILES; if the source changed upstream, record it anew)"
            if known
            else ""
        )
        if size is not None and received != size:
            raise _failure(url, dest, f"does not have the expected size{recorded}", received, size)
        digest = h.hexdigest()
        if sha256 is not None and digest != sha256:
            raise _failure(
                url, dest, f"has SHA-256 {digest}, not the expected {sha256}{recorded}", received, size
            )
        Path(tmp).replace(dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return received, digest


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


# -- the jobs of the dataset rules ------------------------------------------------------------


#: Judged queries of the public datasets: what the estimate's stand-ins of a dataset not
#: downloaded yet count per query (the stand-in table holds one pair per judged pair).
JUDGED_QUERIES = {"dl19": 43, "dl20": 54, "dl21": 53, "llmjudge": 25}
