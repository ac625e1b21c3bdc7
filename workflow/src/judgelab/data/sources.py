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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from judgelab.cache.filehash import sha256_of_file
from judgelab.errors import InputError, JudgelabError

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

#: The rule of ``workflow/rules/datasets.smk`` whose outputs :func:`download_dataset` writes, and
#: the one of a dataset whose passage texts no live model reads (its qrels and topics only).
DOWNLOAD_RULE = "download_dataset"
DOWNLOAD_RULE_NO_TEXTS = "download_qrels_topics"


class DownloadError(JudgelabError, OSError):
    """A download that failed or ended early: nothing was written under the final name (a
    workflow job stopped by one prints its message as one line, first:
    :class:`~judgelab.errors.JudgelabError`).

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


#: Seconds to wait before each retry of a download that failed in a way that may pass (an HTTP 5xx
#: answer, a refused, dropped or timed-out connection, a body shorter than announced); its length
#: is the number of retries. A 4xx answer, a wrong size or digest, or an HTML page is final.
RETRY_DELAYS: tuple[float, ...] = (1.0, 2.0, 4.0)

_HTML_START = (b"<!doctype html", b"<html", b"<head", b"<body")


class _Transient(Exception):
    """A failed attempt worth retrying (see :data:`RETRY_DELAYS`)."""

    def __init__(
        self,
        what: str,
        received: int,
        expected: int | None,
        advice: str = "the source may be down or overloaded: rerun later",
    ):
        super().__init__(what)
        self.what, self.received, self.expected, self.advice = what, received, expected, advice


def _looks_like_html(content_type: str | None, head: bytes) -> bool:
    if content_type and "text/html" in content_type.lower():
        return True
    return head.lstrip()[:16].lower().startswith(_HTML_START)


#: What a shape check of :func:`download` is given: the downloaded file, before it takes its name.
ShapeCheck = Callable[[Path], object]


def download(
    url: str,
    dest: str | Path,
    *,
    size: int | None = None,
    sha256: str | None = None,
    html: bool = False,
    shape: ShapeCheck | None = None,
) -> Path:
    """Fetch ``url`` (``https://``, ``http://`` or ``file://``) to ``dest`` atomically and verified.

    The bytes that arrive are compared with the server's ``Content-Length`` (for ``file://``: the
    file's size when opened) and with ``size`` / ``sha256``, which default to what
    :func:`known_file` records for the URL (so a body cut short without a Content-Length fails on
    the known size or digest). A body that none of these vouches for (no Content-Length, no known
    size or digest) is checked by its own shape, ``shape`` (e.g. :func:`line_ends`: a line-based
    file ends with a line end, so a body cut inside a line does not; the format's reader): an
    :class:`~judgelab.errors.InputError` from it counts as a body that ended early. An HTML page
    where a data file is expected (an error page served with status 200: ``Content-Type:
    text/html`` or a body that starts like HTML) is refused unless ``html``. An attempt that fails
    in a way that may pass (an HTTP 5xx, a connection error, a body shorter than announced or of
    the wrong shape) is retried after each of :data:`RETRY_DELAYS`. Only a complete, matching
    download is renamed to ``dest``; a failed, short or different one leaves nothing under
    ``dest`` (an earlier file there is kept as it was) and raises one :class:`DownloadError`
    naming the URL, the bytes that arrived and the bytes expected, and what to do. A successful
    download also writes ``<dest>.download.json`` (URL, size, SHA-256, time) for
    :func:`refetch_hint`."""
    fetched = _fetch(url, Path(dest), size=size, sha256=sha256, html=html, shape=shape)
    try:
        return fetched.commit()
    finally:
        fetched.tmp.unlink(missing_ok=True)


@dataclass
class _Fetched:
    """A download that arrived complete, under a temporary name beside ``dest`` until
    :meth:`commit`. ``vouched``: its length was announced or known (not only its shape checked)."""

    url: str
    dest: Path
    tmp: Path
    received: int
    digest: str
    verified: bool
    vouched: bool

    def commit(self) -> Path:
        """Rename it to ``dest`` and record what was fetched (``<dest>.download.json``)."""
        self.tmp.replace(self.dest)
        record = {
            "url": self.url,
            "bytes": self.received,
            "sha256": self.digest,
            "verified": self.verified,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        try:
            _marker(self.dest).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:  # the download itself is complete; only the hint of a later error is lost
            log.warning("could not record the download of %s in %s: %s", self.url, _marker(self.dest), exc)
        how = ", size and SHA-256 verified" if self.verified else ""
        if not self.vouched:
            how = ", no length announced or known: its shape checked"
        log.info("downloaded %s: %s bytes%s", self.url, f"{self.received:,}", how)
        return self.dest


def _fetch(
    url: str, dest: Path, *, size: int | None, sha256: str | None, html: bool, shape: ShapeCheck | None
) -> _Fetched:
    """:func:`download` up to the rename: the attempts and their retries; the file that arrived
    complete and matching stays under its temporary name (the caller commits or removes it)."""
    known = known_file(url)
    if known is not None:
        size = known.size if size is None else size
        sha256 = known.sha256 if sha256 is None else sha256
    dest.parent.mkdir(parents=True, exist_ok=True)
    attempt = 0
    while True:
        try:
            tmp, received, digest, announced = _attempt(
                url, dest, size, sha256, html, known is not None, shape
            )
            break
        except _Transient as exc:
            if attempt >= len(RETRY_DELAYS):
                tries = f" ({attempt + 1} attempts)" if attempt else ""
                raise _failure(
                    url,
                    dest,
                    exc.what + tries,
                    exc.received,
                    exc.expected,
                    advice=exc.advice,
                ) from None
            log.warning(
                "download of %s %s (%s bytes arrived); trying again in %g s",
                url,
                exc.what,
                f"{exc.received:,}",
                RETRY_DELAYS[attempt],
            )
            time.sleep(RETRY_DELAYS[attempt])
            attempt += 1
    verified = bool(size or sha256)
    return _Fetched(url, dest, tmp, received, digest, verified, verified or announced is not None)


def _failure(
    url: str, dest: Path, what: str, received: int, expected: int | None, advice: str = ""
) -> DownloadError:
    want = f"{expected:,} bytes expected" if expected is not None else "size unknown"
    return DownloadError(
        f"download of {url} {what}: {received:,} bytes arrived, {want}; nothing was written to {dest}"
        + (f"; {advice}" if advice else ""),
        url=url,
        dest=dest,
        received=received,
        expected=expected,
    )


def _attempt(
    url: str,
    dest: Path,
    size: int | None,
    sha256: str | None,
    html: bool,
    known: bool,
    shape: ShapeCheck | None,
) -> tuple[Path, int, str, int | None]:
    """One attempt of :func:`download`: the file complete under a temporary name, or an error
    (retryable: :class:`_Transient`; final: :class:`DownloadError`). Returns the temporary file,
    the bytes, their SHA-256 and the announced length (None: none)."""
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
            raise _failure(
                url, dest, what, received, size, advice="check the URL (the source may have moved)"
            ) from None
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
        if shape is not None and announced is None and size is None and sha256 is None:
            try:
                shape(Path(tmp))
            except InputError as exc:
                where = f"line {exc.line}: " if exc.line is not None else ""
                raise _Transient(
                    f"came without a length (no Content-Length, no recorded size or SHA-256) and is "
                    f"not whole ({where}{exc.message}): cut short, or not the file expected",
                    received,
                    None,
                    advice="rerun later; if the source serves it so every time, fetch it yourself and "
                    "give the file to the run instead of its URL",
                ) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp), received, digest, announced


def line_ends(path: Path) -> None:
    """The shape check of a line-based text file (qrels, topics, passage texts, runs, JSON lines):
    a file that is not empty ends with a line end. The public files all do, so a body cut inside
    a line is told from a whole one; a body cut right after a line end is not (see
    :func:`download_dataset` for what a dataset's files tell each other)."""
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        if fh.tell() == 0:
            return
        fh.seek(-1, 2)
        last = fh.read(1)
    if last not in (b"\n", b"\r"):
        lines = Path(path).read_bytes().count(b"\n") + 1
        raise InputError("the last line has no line end", path=str(path), line=lines)


def lines_and(reader: Callable[[Path], object]) -> ShapeCheck:
    """A shape check: :func:`line_ends`, then the format's ``reader`` reads the whole file."""

    def check(path: Path) -> None:
        line_ends(path)
        reader(path)

    return check


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
        same = now_bytes == record.get("bytes") and sha256_of_file(p) == record.get("sha256")
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
        f"{DOWNLOAD_RULE}, or {DOWNLOAD_RULE_NO_TEXTS} without texts, fetches the missing file): rm {p}"
    )


def with_refetch_hint(exc: InputError) -> InputError:
    """``exc`` with :func:`refetch_hint` of the file it names appended (``exc`` itself if that file
    was not downloaded)."""
    hint = refetch_hint(exc.path) if exc.path else None
    if hint is None:
        return exc
    return InputError(f"{exc.message} ({hint})", path=exc.path, line=exc.line)


def source_urls(
    name: str, overrides: dict[str, str] | None = None, split: str | None = None, *, texts: bool = True
) -> dict[str, str]:
    """The public URLs of dataset ``name`` (keys qrels, topics, texts), the qrels of ``split``
    where the source has several (:data:`QRELS_SPLITS`), with ``overrides`` applied (e.g.
    ``file://`` mirrors). ``texts`` False: a dataset whose passage texts no live model reads,
    qrels and topics only (no texts URL needed, none given)."""
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
    kinds = ("qrels", "topics", "texts") if texts else ("qrels", "topics")
    missing = [k for k in kinds if k not in urls]
    if missing:
        why = " (a live judge reads this dataset's passages)" if missing == ["texts"] else ""
        raise InputError(f"no URL for {missing}{why}", key=f"datasets.{name}.urls")
    return urls if texts else {k: u for k, u in urls.items() if k != "texts"}


def download_dataset(urls: Mapping[str, str], dest: Mapping[str, str | Path]) -> None:
    """Download each of ``urls`` (qrels, topics, and texts where given: a dataset whose passages
    no live model reads has none) to the matching path of ``dest`` (:func:`download`); none takes
    its name before all of them arrived whole.

    A file whose length nothing vouches for (no Content-Length, no recorded size or digest) must
    end with a line end (:func:`line_ends`), and when the qrels or a judged-text file aligned
    with it (``docid<TAB>passage``, one line per qrels line: the TREC format) is such a file, the
    texts must have one line per judged pair of the qrels (:func:`aligned_counts`): a body cut
    right after a line end is told from a whole one by what the other file declares. A cut at a
    line boundary of a file nothing else counts (topics; LLMJudge's passages, JSON lines keyed by
    docid) cannot be told here; the prepare job then names a query or passage the qrels need
    and the file lacks."""
    fetched: dict[str, _Fetched] = {}
    kinds = [k for k in ("qrels", "topics", "texts") if k in urls]
    try:
        for kind in kinds:
            fetched[kind] = _fetch(
                urls[kind], Path(dest[kind]), size=None, sha256=None, html=False, shape=line_ends
            )
        qrels, texts = fetched["qrels"], fetched.get("texts")
        if texts is not None and not (qrels.vouched and texts.vouched):
            aligned_counts(qrels, texts)
        for kind in kinds:
            fetched[kind].commit()
    finally:
        for f in fetched.values():
            f.tmp.unlink(missing_ok=True)


#: Byte-order marks of encodings whose line ends are not single bytes (no byte count applies).
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff")


def aligned_counts(qrels: _Fetched, texts: _Fetched) -> None:
    """A TREC judged-text file (``docid<TAB>passage`` lines, not JSON lines) has one line per
    judged pair of its qrels (non-blank lines), as the readers count them
    (:func:`judgelab.data.readers.read_qrels`, :func:`~judgelab.data.readers.read_qrels_text`);
    otherwise the one of the two whose length nothing vouched for was cut short: a
    :class:`DownloadError` naming it. Counted on the bytes, so whatever ASCII-compatible
    encoding the dataset declares (UTF-16 and UTF-32 files are left to the prepare job)."""
    q, t = qrels.tmp.read_bytes(), texts.tmp.read_bytes()
    if q.startswith(_WIDE_BOMS) or t.startswith(_WIDE_BOMS) or t.lstrip()[:1] == b"{":
        return
    pairs = sum(1 for line in q.splitlines() if line.strip())
    lines = len(t.splitlines())
    if pairs == lines:
        return
    cut = texts if not texts.vouched and (qrels.vouched or lines < pairs) else qrels
    other = qrels if cut is texts else texts
    raise _failure(
        cut.url,
        cut.dest,
        f"came without a length (no Content-Length, no recorded size or SHA-256) and does not "
        f"match {other.url}: the judged-text file has {lines:,} lines, the qrels {pairs:,} judged "
        f"pairs (one text line per qrels line); {'it' if other.vouched else 'one of the two'} was "
        "cut short",
        cut.received,
        None,
        advice="rerun to fetch them again",
    )


# -- whole-topic subsets with given counts ------------------------------------------------------


# -- the jobs of the dataset rules ------------------------------------------------------------


#: Judged queries of the public datasets: what the estimate's stand-ins of a dataset not
#: downloaded yet count per query (the stand-in table holds one pair per judged pair).
JUDGED_QUERIES = {"dl19": 43, "dl20": 54, "dl21": 53, "llmjudge": 25}


def download_or_copy(
    url: str, dest: str | Path, *, size: int, sha256: str, copy: str | Path | None, key: str, what: str
) -> Path:
    """:func:`download` of ``url`` to ``dest`` with its ``size`` and ``sha256`` checked - or, with
    ``copy`` (a local copy under the mirror folder of the config key ``key``), that file the same
    way as a ``file://`` download, a failed check then one :class:`DownloadError` naming the key,
    the copy and the URL it stands for (``what``: what the copy should have been)."""
    if copy is None:
        return download(url, dest, size=size, sha256=sha256)
    local = Path(copy).resolve()
    try:
        return download(local.as_uri(), dest, size=size, sha256=sha256)
    except DownloadError as exc:
        raise DownloadError(
            f"{key}: the copy {local} of {url} is not {what}: {exc}",
            url=exc.url,
            dest=exc.dest,
            received=exc.received,
            expected=exc.expected,
        ) from None
