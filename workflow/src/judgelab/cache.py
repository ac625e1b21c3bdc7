"""Persistent request cache shared by every backend.

One SQLite file holds ``key -> response``. The key is the SHA-256 of a canonical JSON of
everything that determines the answer: backend identity (kind, model, model-file hash or base
URL), every sampling parameter and the exact messages. API keys are never part of it. Each
response is committed as soon as it arrives, so a job that crashes after k of n calls has k
answers saved; several Snakemake jobs may read and write the same file at once.

Everything the cache needs lives beside the cache file: the memo of model-file hashes
(``file-hashes.json``), the API backends' batch ids (``batches.sqlite``), answers whose write
failed (``<cache>.pending.jsonl``) and, in ``shards`` mode, the folder ``<cache>.d/``.

Modes (``RequestCache(mode=...)``, else the environment variable ``JUDGELAB_CACHE_MODE``):

* ``auto`` (default): ``wal``, unless the cache file is on a network filesystem
  (:mod:`judgelab.fsdetect`): then opening fails with one error naming the file, its filesystem
  and the two modes to choose from.
* ``wal``: the file in SQLite's WAL mode. Every process that opens it must run on the same host
  (WAL's shared index cannot be shared across hosts).
* ``shards``: for jobs on several nodes sharing a cache on a network filesystem. Each process
  writes only its own shard ``<cache>.d/<host>-<pid>-<id>.sqlite`` (rollback journal, one
  writer) and reads the main file, every shard and its own; claims are files
  (:class:`~judgelab.cache_claims.FileClaims`). :func:`judgelab.cache_shards.merge_shards`
  (``python -m judgelab.cache_tools merge <cache>``) folds the shards into the main file.

A request in flight is paid once: :meth:`RequestCache.claim` (used by
:class:`~judgelab.backends.base.CachedClient`) claims keys with a lease before they are sent;
see :mod:`judgelab.cache_claims`.

Faults: a cache file that is not a database, is damaged, cannot be opened or written raises one
:class:`CacheError` naming the file and what to do. An answer whose write fails is kept: it goes
to ``<cache>.pending.jsonl`` (imported by the next open), or, if even that fails, stays in
:attr:`RequestCache.unsaved` (and in the job's output), and the failure is logged naming the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from .cache_claims import Claimed, LeaseKeeper
from .cache_pending import PendingFile, Row
from .errors import InputError
from .fsdetect import network_filesystem

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""

#: In-flight requests (see :mod:`judgelab.cache_claims`); rows live seconds to hours.
_CLAIMS_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires REAL NOT NULL
)
"""

MODES = ("auto", "wal", "shards")
#: Seconds a claim stays valid without renewal (renewed every third of it while its owner lives).
DEFAULT_LEASE = 60.0
#: SQLite's limit of host parameters per statement is 999 on old versions: stay below it.
_CHUNK = 500


class CacheError(InputError):
    """The request cache cannot be used as it is: the message names the file and what to do."""


def _advice(path: Path, exc: sqlite3.Error, pending: Path | None) -> str:
    """What to do about ``exc`` on the cache file ``path``."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc)
    if (
        name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
        or "malformed" in text
        or "not a database" in text
    ):
        kept = (
            (
                f"; answers that could not be written are kept in {pending} and go into the new file "
                "at its first open"
            )
            if pending is not None and pending.exists()
            else ""
        )
        return (
            f"the cache file is damaged. Move it aside (with {path.name}-wal and {path.name}-shm if "
            f"present) and copy what is still readable into a new file: `mv {path} {path}.broken && "
            f"python -m judgelab.cache_tools salvage {path}.broken {path}`; answers on damaged pages "
            f"are computed (and paid for) again by the rerun{kept}. The tables the jobs already wrote "
            "keep their answers"
        )
    if (
        name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH"))
        or "readonly" in text
        or "unable to open" in text
    ):
        return (
            f"make the file and its folder writable (SQLite also creates {path.name}-wal, "
            f"{path.name}-shm and {path.name}-journal there), or point the cache elsewhere "
            "(config key `cache`, or JUDGELAB_CACHE)"
        )
    if name.startswith(("SQLITE_FULL", "SQLITE_IOERR")) or "disk is full" in text or "I/O" in text:
        return f"free space on the disk holding {path.parent}, or point the cache elsewhere"
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
        return (
            "another process holds the file locked; if none is running, a stale lock of a "
            "network filesystem may be the cause (see JUDGELAB_CACHE_MODE=shards)"
        )
    return "move the file aside if the problem persists"


def explain(path: str | Path, exc: sqlite3.Error, doing: str, pending: Path | None = None) -> CacheError:
    """One :class:`CacheError` naming the cache file, what failed and what to do."""
    p = Path(path)
    return CacheError(
        f"{doing} failed: {exc} ({getattr(exc, 'sqlite_errorname', type(exc).__name__)}); "
        f"{_advice(p, exc, pending)}",
        path=str(p),
    )


def connect_db(
    path: str | Path, timeout: float = 120.0, *, wal: bool = True, any_thread: bool = False
) -> sqlite3.Connection:
    """An autocommit connection, in WAL mode if ``wal`` (else SQLite's rollback journal), safe to
    open while other processes open it too. ``any_thread``: usable (and closable) from a thread
    other than the one that opened it (the caller serialises its use).

    Switching a fresh database to WAL needs an exclusive lock and SQLite's busy handler does not
    always wait for it, so two connections opening a new file at once can get "database is
    locked"; the switch is retried until ``timeout``. SQLite errors are raised as they are (the
    callers turn them into :class:`CacheError`)."""
    conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None, check_same_thread=not any_thread)
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute(f"PRAGMA journal_mode={'WAL' if wal else 'DELETE'}")
            return conn
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                conn.close()
                raise
            time.sleep(0.05)
        except sqlite3.Error:
            conn.close()
            raise


def connect_wal(path: str | Path, timeout: float = 120.0) -> sqlite3.Connection:
    """:func:`connect_db` in WAL mode (the name the batch store has always used)."""
    return connect_db(path, timeout, wal=True)


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_key(request: dict) -> str:
    return hashlib.sha256(canonical(request).encode("utf-8")).hexdigest()


def default_cache_path() -> Path:
    return Path(os.environ.get("JUDGELAB_CACHE", ".judgelab-cache/requests.sqlite"))


def requested_mode(mode: str | None = None) -> str:
    """``mode``, else ``JUDGELAB_CACHE_MODE``, else ``auto``; an unknown value is an error."""
    value = (mode or os.environ.get("JUDGELAB_CACHE_MODE") or "auto").strip().lower()
    if value not in MODES:
        where = "the cache mode" if mode else "JUDGELAB_CACHE_MODE"
        raise CacheError(f"{where} {value!r} is not a cache mode; use one of {', '.join(MODES)}")
    return value


def resolve_mode(path: str | Path, mode: str | None = None, mounts: str | None = None) -> str:
    """The mode (``wal`` or ``shards``) a cache at ``path`` opens in.

    ``auto`` on a network filesystem raises :class:`CacheError` naming the file, the filesystem
    and the modes to choose; an explicit ``wal`` there is allowed (the user says every process
    runs on one host) and logged as a warning. ``mounts``: a mount table's text (tests)."""
    want = requested_mode(mode)
    if want == "shards":
        return "shards"
    net = network_filesystem(path, mounts)
    if net is None:
        return "wal"
    fstype, point = net
    if want == "wal":
        log.warning(
            "%s is on a network filesystem (%s at %s); WAL mode was asked for explicitly: "
            "every process that opens it must run on this one host",
            path,
            fstype,
            point,
        )
        return "wal"
    raise CacheError(
        f"the request cache is on a network filesystem ({fstype}, mounted at {point}); SQLite's WAL "
        "mode must not be used there by processes on different hosts (answers can be lost or the file "
        "damaged). Choose: config key `cache_mode: shards` or JUDGELAB_CACHE_MODE=shards (jobs on "
        "several nodes share this cache; each job writes its own shard beside it, merged with "
        f"`judgelab cache merge --cache {path}`), or `cache_mode: wal` / JUDGELAB_CACHE_MODE=wal if "
        "every job runs on this one host, or put the cache on a local disk (config key `cache`, or "
        "JUDGELAB_CACHE)",
        path=str(path),
    )


#: The folder and requested mode of the most recently opened cache: where :func:`file_sha256` keeps
#: its memo, and how the batch store beside it opens its own file.
_SIDE_DIR: Path | None = None
_LAST_MODE: str | None = None


def side_file_wal(path: str | Path) -> bool:
    """Whether a state file beside the cache (``batches.sqlite``) may use WAL: not in ``shards``
    mode (the mode asked for the cache opened last in the same folder, else the requested one);
    ``auto`` on a network filesystem raises like :func:`resolve_mode`."""
    same_folder = _SIDE_DIR is not None and Path(path).parent.resolve() == _SIDE_DIR.resolve()
    return resolve_mode(path, _LAST_MODE if same_folder else None) == "wal"


def _header(path: Path, size: int = 108) -> bytes:
    """The first ``size`` bytes of ``path`` (fewer for a shorter file; empty if unreadable)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def is_wal_database(path: Path) -> bool:
    """Whether ``path`` is a SQLite database whose header says WAL mode (read and write version 2)."""
    head = _header(path, 20)
    return len(head) == 20 and head.startswith(b"SQLite format 3\x00") and head[18] == 2


def _page_size(head: bytes) -> int:
    value = int.from_bytes(head[16:18], "big")
    return 65536 if value == 1 else value


def schema_is_empty(path: Path) -> bool:
    """Whether the database file ``path`` alone (without its WAL) has no table at all: one page whose
    schema b-tree (a leaf at offset 100 of page 1) holds no cell."""
    head = _header(path)
    if len(head) < 108 or not head.startswith(b"SQLite format 3\x00"):
        return False
    size = path.stat().st_size
    return size <= _page_size(head) and head[100] == 0x0D and int.from_bytes(head[103:105], "big") == 0


def _wal_checksum(data: bytes, big_endian: bool) -> tuple[int, int]:
    """SQLite's WAL checksum of ``data`` (a multiple of 8 bytes), as its file format states."""
    s0 = s1 = 0
    order: Literal["big", "little"] = "big" if big_endian else "little"
    for i in range(0, len(data), 8):
        s0 = (s0 + int.from_bytes(data[i : i + 4], order) + s1) & 0xFFFFFFFF
        s1 = (s1 + int.from_bytes(data[i + 4 : i + 8], order) + s0) & 0xFFFFFFFF
    return s0, s1


def wal_header_problem(db: Path, wal: Path) -> str | None:
    """Why SQLite would ignore the WAL file ``wal`` of the database ``db`` (and, at the next write,
    overwrite it, answers and all), or None if its header is one SQLite reads: the magic number,
    format version 3007000, the database's page size and the header's checksum."""
    head = _header(wal, 32)
    if len(head) < 32:
        return f"it is {len(head)} bytes, shorter than a WAL header"
    magic = int.from_bytes(head[0:4], "big")
    if magic not in (0x377F0682, 0x377F0683):
        return "it does not start with SQLite's WAL magic number"
    if int.from_bytes(head[4:8], "big") != 3007000:
        return "its format version is not SQLite's"
    db_head = _header(db, 20)
    if len(db_head) == 20 and int.from_bytes(head[8:12], "big") != _page_size(db_head):
        return "its page size is not the database's"
    if _wal_checksum(head[:24], magic & 1 == 1) != (
        int.from_bytes(head[24:28], "big"),
        int.from_bytes(head[28:32], "big"),
    ):
        return "its header checksum is wrong (damaged or cut)"
    return None


def check_wal_pair(path: Path, settle: float = 1.0) -> None:
    """Refuse to open a cache file that would open with fewer answers than it has, silently.

    Two cases, each only when no process has the file open (no ``-shm`` beside it): the named file
    is a WAL-mode database with no table at all and no WAL beside it (it was copied or backed up
    without its ``-wal``, or the ``-wal`` was deleted: the answers were there), or a WAL beside it
    that SQLite would ignore (:func:`wal_header_problem`). A file that a process is creating right
    now looks like the first case for a moment: the check looks again for ``settle`` seconds."""
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    deadline = time.monotonic() + settle
    while True:
        if not path.exists() or shm.exists():
            return
        wal_size = wal.stat().st_size if wal.exists() else 0
        if wal_size:
            why = wal_header_problem(path, wal)
            if why is None:
                return
            problem = (
                f"the WAL file beside it ({wal.name}, {wal_size} bytes) cannot be read: {why}. SQLite "
                "would ignore it and overwrite it at the next write, losing the answers it holds. If it "
                f"belongs to another copy of the cache, put it back there; if it is damaged, move it "
                f"aside (`mv {wal} {wal}.broken`) and open again (its answers are then computed again)"
            )
        elif is_wal_database(path) and schema_is_empty(path):
            problem = (
                f"the file has no table of answers, but it is a WAL-mode database: its answers were "
                f"in {wal.name}, which is not beside it (the file was copied or backed up without "
                f"it, or {wal.name} was deleted). Put {wal.name} back beside it, or copy the cache "
                "again after `judgelab cache check` says the named file alone is complete; if this "
                "file never held answers, delete it"
            )
        else:
            return
        if time.monotonic() >= deadline:
            raise CacheError(
                f"the request cache would open with fewer answers than it has: {problem}", path=str(path)
            )
        time.sleep(0.1)


class _WalStore:
    """The cache file in WAL mode (one host): responses and claims in the same file."""

    mode = "wal"

    def __init__(self, path: Path, timeout: float):
        self.path = path
        check_wal_pair(path)
        self._conn = connect_db(path, timeout, wal=True)
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(_SCHEMA)
        self._conn.execute(_CLAIMS_SCHEMA)
        self._timeout = timeout
        #: the lease thread's connection (see :meth:`renewer`)
        self._renew_conn: sqlite3.Connection | None = None
        self._renew_lock = threading.Lock()
        #: the file this store writes (named in the errors of a failed write)
        self.write_path = path

    def get(self, key: str) -> dict | None:
        row = self._conn.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, row: Row) -> None:
        # INSERT OR IGNORE: two jobs answering the same request keep the first answer.
        self._conn.execute(
            "INSERT OR IGNORE INTO responses (key, request, response, created) VALUES (?, ?, ?, ?)", row
        )

    def put_many(self, rows: list[Row]) -> None:
        with self._transaction():
            self._conn.executemany(
                "INSERT OR IGNORE INTO responses (key, request, response, created) VALUES (?, ?, ?, ?)", rows
            )

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def claim(self, keys: Sequence[str], limit: int, owner: str, lease: float) -> Claimed:
        out = Claimed()
        with self._transaction():
            now = time.time()
            held: dict[str, tuple[str, float]] = {}
            for start in range(0, len(keys), _CHUNK):
                chunk = list(keys[start : start + _CHUNK])
                marks = ",".join("?" * len(chunk))
                for k, resp in self._conn.execute(
                    f"SELECT key, response FROM responses WHERE key IN ({marks})", chunk
                ):
                    out.answered[k] = json.loads(resp)
                for k, o, e in self._conn.execute(
                    f"SELECT key, owner, expires FROM claims WHERE key IN ({marks})", chunk
                ):
                    held[k] = (o, e)
            for k in keys:
                if k in out.answered:
                    continue
                h = held.get(k)
                if h is not None and h[0] != owner and h[1] > now:
                    out.busy[k] = h[0]
                elif len(out.mine) >= limit:
                    out.rest.append(k)
                else:
                    if h is not None and h[0] != owner:
                        out.taken_over.append(h[0])
                    out.mine.append(k)
            self._conn.executemany(
                "INSERT OR REPLACE INTO claims (key, owner, expires) VALUES (?, ?, ?)",
                [(k, owner, now + lease) for k in out.mine],
            )
            # claims of owners that died long ago, on keys nobody asked for again
            self._conn.execute("DELETE FROM claims WHERE expires < ?", (now - 3600.0,))
        return out

    def release(self, keys: Sequence[str], owner: str) -> None:
        with self._transaction():
            for start in range(0, len(keys), _CHUNK):
                chunk = list(keys[start : start + _CHUNK])
                self._conn.execute(
                    f"DELETE FROM claims WHERE owner = ? AND key IN ({','.join('?' * len(chunk))})",
                    [owner, *chunk],
                )

    def renewer(self, owner: str, lease: float) -> Callable[[list[str]], None]:
        """A function renewing the claims of ``owner``, called by the lease thread. It uses a
        connection of its own (opened at its first call, closed by :meth:`close`: a connection left
        open keeps SQLite from folding the WAL into the cache file)."""

        def renew(keys: list[str]) -> None:
            with self._renew_lock:
                if self._renew_conn is None:
                    self._renew_conn = connect_db(self.path, self._timeout, wal=True, any_thread=True)
                self._renew_conn.execute(
                    "UPDATE claims SET expires = ? WHERE owner = ?", (time.time() + lease, owner)
                )

        return renew

    def count(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def stats(self) -> dict:
        n, first, last = self._conn.execute(
            "SELECT COUNT(*), MIN(created), MAX(created) FROM responses"
        ).fetchone()
        return {
            "entries": n,
            "first": first,
            "last": last,
            "bytes": self.path.stat().st_size if self.path.exists() else 0,
        }

    def pending_sources(self) -> list[Path]:
        return [Path(f"{self.path}.pending.jsonl")]

    def close(self) -> None:
        """Close both connections, folding the WAL into the cache file first.

        A passive checkpoint copies every answer the WAL holds into the named file unless a reader
        of another process pins part of it (it never waits); when this is the last connection to
        the file, SQLite's own checkpoint on closing it copies the rest and deletes the WAL. So once
        the last job using a cache ends, the named file alone holds every answer."""
        with self._renew_lock:
            if self._renew_conn is not None:
                self._renew_conn.close()
                self._renew_conn = None
        try:
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as exc:  # the answers stay in the WAL, which the next open reads
            log.warning(
                "%s: could not fold the WAL into the cache file (%s); it stays beside it", self.path, exc
            )
        self._conn.close()


def _lease_seconds(lease: float | None) -> float:
    value = lease if lease is not None else os.environ.get("JUDGELAB_CACHE_LEASE") or DEFAULT_LEASE
    try:
        seconds = float(value)
    except ValueError:
        raise CacheError(f"JUDGELAB_CACHE_LEASE={value!r} is not a number of seconds") from None
    if not seconds > 0:
        raise CacheError(f"the claim lease must be > 0 seconds, got {seconds}")
    return seconds


class RequestCache:
    """A key/value store of JSON requests and responses (see the module docstring for the modes,
    claims and faults). Opening it makes its folder the home of the model-file hash memo
    (:func:`file_sha256`) and imports the answers earlier jobs could not write.

    ``lease``: seconds a claim of this process stays valid without renewal (default
    ``JUDGELAB_CACHE_LEASE`` or :data:`DEFAULT_LEASE`)."""

    def __init__(
        self,
        path: str | Path | None = None,
        timeout: float = 120.0,
        *,
        mode: str | None = None,
        lease: float | None = None,
    ):
        global _SIDE_DIR, _LAST_MODE
        self.path = Path(path) if path else default_cache_path()
        self.timeout = timeout
        self.lease = _lease_seconds(lease)
        self.mode = resolve_mode(self.path, mode)
        #: who this process is in the claims table (never anything secret)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        #: answers that neither the cache nor the pending file took (also in the job's output)
        self.unsaved: list[Row] = []
        self.failed_writes = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"cannot create the cache's folder: {exc}", path=str(self.path)) from None
        _SIDE_DIR, _LAST_MODE = self.path.parent, requested_mode(mode)
        self._held: set[str] = set()
        self._held_lock = threading.Lock()
        self._closed = False
        self._keeper: LeaseKeeper | None = None
        self._renew_fn: Callable[[list[str]], None] | None = None
        try:
            if self.mode == "wal":
                self._store: Any = _WalStore(self.path, timeout)
            else:
                from .cache_shards import ShardStore

                self._store = ShardStore(self.path, timeout, self.owner, self.lease)
        except sqlite3.Error as exc:
            raise explain(self.path, exc, "opening the request cache") from None
        except OSError as exc:  # shards mode: the shard folder or its claims folder
            raise CacheError(
                f"opening the request cache failed: {exc}; make its folder writable, or "
                "point the cache elsewhere (config key `cache`, or JUDGELAB_CACHE)",
                path=str(self.path),
            ) from None
        self.pending = PendingFile(self._store.pending_sources()[0])
        self._import_pending()

    # -- answers ----------------------------------------------------------------------------
    def get(self, key: str) -> dict | None:
        try:
            return self._store.get(key)
        except sqlite3.Error as exc:
            raise explain(self.path, exc, "reading the request cache", self.pending.path) from None

    def put(self, key: str, request: dict, response: dict) -> bool:
        """Store an answer. True: it is in the cache. False: the write failed; the answer was kept
        in the pending file (imported by the next open) or, failing that, in :attr:`unsaved`, and
        the failure was logged naming the cache file. Never raises for a failed write."""
        row: Row = (key, canonical(request), canonical(response), time.time())
        try:
            self._store.put(row)
            return True
        except sqlite3.Error as exc:
            self._keep(
                [row],
                explain(
                    self._store.write_path, exc, "writing an answer to the request cache", self.pending.path
                ),
            )
            return False

    def _keep(self, rows: list[Row], why: CacheError) -> None:
        self.failed_writes += len(rows)
        try:
            self.pending.append(rows)
            kept = f"kept in {self.pending.path} (imported by the next open of the cache)"
        except OSError as exc:
            self.unsaved.extend(rows)
            kept = f"kept only in memory and in this job's output ({self.pending.path}: {exc})"
        if self.failed_writes == len(rows):  # the first failure says everything; later ones count
            log.error("%s; the answer was %s", why, kept)
        else:
            log.warning("%s: %d answers not written so far, %s", self.path, self.failed_writes, kept)

    def flush_unsaved(self) -> int:
        """Try again to write :attr:`unsaved` (to the cache, else the pending file); returns how
        many are still only in memory."""
        rows, self.unsaved = self.unsaved, []
        if rows:
            try:
                self._store.put_many(rows)
            except sqlite3.Error:
                try:
                    self.pending.append(rows)
                except OSError:
                    self.unsaved = rows
        return len(self.unsaved)

    def _import_pending(self) -> None:
        for source in self._store.pending_sources():
            try:
                PendingFile(source).import_into(self._store.put_many)
            except sqlite3.Error as exc:
                log.warning(
                    "%s: could not import the pending answers of %s yet (%s); they stay there",
                    self.path,
                    source,
                    exc,
                )
            except OSError as exc:
                log.warning("%s: cannot read %s (%s); its answers stay there", self.path, source, exc)

    # -- claims -----------------------------------------------------------------------------
    def claim(self, keys: Sequence[str], limit: int | None = None) -> Claimed:
        """Claim up to ``limit`` (default: all) of ``keys`` (unique) that are neither answered nor
        claimed by another live owner; expired claims are taken over. The claims are renewed in the
        background until :meth:`release`."""
        try:
            out = self._store.claim(keys, len(keys) if limit is None else limit, self.owner, self.lease)
        except sqlite3.Error as exc:
            raise explain(self.path, exc, "claiming requests in the request cache") from None
        for owner in sorted(set(out.taken_over)):
            log.warning(
                "%s: took over requests claimed by %s (its lease of the claim ran out: crashed?)",
                self.path,
                owner,
            )
        if out.mine:
            with self._held_lock:
                self._held.update(out.mine)
            if self._keeper is None:
                self._keeper = LeaseKeeper(self._renew, self.lease / 3.0)
        return out

    def _renew(self) -> None:
        with self._held_lock:
            held = sorted(self._held)
        if held:
            if self._renew_fn is None:
                self._renew_fn = self._store.renewer(self.owner, self.lease)
            self._renew_fn(held)

    def release(self, keys: Sequence[str]) -> None:
        """Release the claims of ``keys`` (after their answers are stored, or on error). A failed
        release is logged: the claims then run out after their lease."""
        with self._held_lock:
            self._held.difference_update(keys)
        try:
            self._store.release(list(keys), self.owner)
        except sqlite3.Error as exc:
            log.warning(
                "%s: could not release %d claims (%s); they run out in %.0f s",
                self.path,
                len(keys),
                exc,
                self.lease,
            )

    # -- inspection -------------------------------------------------------------------------
    def __len__(self) -> int:
        try:
            return self._store.count()
        except sqlite3.Error as exc:
            raise explain(self.path, exc, "counting the request cache", self.pending.path) from None

    def stats(self) -> dict:
        try:
            body = self._store.stats()
        except sqlite3.Error as exc:
            raise explain(self.path, exc, "reading the request cache", self.pending.path) from None
        return {"path": str(self.path), "mode": self.mode, **body}

    def close(self) -> None:
        """Stop renewing, release this process's claims, write what is still unsaved and close the
        store (in ``wal`` mode: the WAL folded into the named file; see :meth:`_WalStore.close`).
        Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        if self._keeper is not None:
            self._keeper.stop()
            self._keeper = None
        with self._held_lock:
            held, self._held = sorted(self._held), set()
        if held:
            self.release(held)
        self.flush_unsaved()
        self._store.close()

    def __enter__(self) -> RequestCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_HASHES: dict[tuple[str, int, int], str] = {}


def _read_memo(side: Path) -> dict:
    """The memo table in ``side``; an unreadable, undecodable or malformed memo is logged and
    treated as empty (it is rebuilt: every entry is a hash that can be computed again)."""
    if not side.exists():
        return {}
    try:
        table = json.loads(side.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: UnicodeDecodeError and JSONDecodeError
        log.warning("%s is unreadable (%s); rebuilding it (it only memoises model-file hashes)", side, exc)
        return {}
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        log.warning("%s is not a table of hashes; rebuilding it", side)
        return {}
    return table


def file_sha256(path: str | Path, memo_dir: str | Path | None = None) -> str:
    """SHA-256 of a (model) file, memoised on (path, size, mtime) in-process and in the side file
    ``file-hashes.json`` in ``memo_dir`` (default: beside the request cache opened last, else
    beside the default cache). A memo file that cannot be read or parsed is rebuilt; one that
    cannot be written is skipped with a warning (the hash is still returned)."""
    p = Path(path).resolve()
    st = p.stat()
    memo_key = (str(p), st.st_size, st.st_mtime_ns)
    if memo_key in _HASHES:
        return _HASHES[memo_key]
    side = Path(memo_dir or _SIDE_DIR or default_cache_path().parent) / "file-hashes.json"
    table = _read_memo(side)
    tag = f"{memo_key[0]}|{memo_key[1]}|{memo_key[2]}"
    digest = table.get(tag)
    if digest is None:
        h = hashlib.sha256()
        with open(p, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        digest = h.hexdigest()
        table[tag] = digest
        tmp = side.with_suffix(f".{socket.gethostname()}.{os.getpid()}.tmp")  # hosts may share the folder
        try:
            side.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(table, indent=0), encoding="utf-8")
            tmp.replace(side)
        except OSError as exc:
            log.warning("cannot write the hash memo %s (%s); the hash is computed again next time", side, exc)
            tmp.unlink(missing_ok=True)
    _HASHES[memo_key] = digest
    return digest
