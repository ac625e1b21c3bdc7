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
  (:mod:`judgelab.cache.fsdetect`): then opening fails with one error naming the file, its filesystem
  and the two modes to choose from.
* ``wal``: the file in SQLite's WAL mode. Every process that opens it must run on the same host
  (WAL's shared index cannot be shared across hosts).
* ``shards``: for jobs on several nodes sharing a cache on a network filesystem. Each process
  writes only its own shard ``<cache>.d/<host>-<pid>-<id>.sqlite`` (rollback journal, one
  writer) and reads the main file, every shard and its own; claims are files
  (:class:`~judgelab.cache.claims.FileClaims`). :func:`judgelab.cache.shards.merge_shards`
  (``python -m judgelab.cache.tools merge <cache>``) folds the shards into the main file.

A request in flight is paid once: :meth:`RequestCache.claim` (used by
:class:`~judgelab.llm.client.CachedClient`) claims keys with a lease before they are sent;
see :mod:`judgelab.cache.claims`.

Faults: a cache file that is not a database, is damaged, cannot be opened or written raises one
:class:`CacheError` naming the file and what to do. Every stored answer carries a digest of its key
and answer (:func:`~judgelab.cache.sqlite.entry_digest`), checked whenever it is read: a damaged
answer is not served but treated as absent - asked again, its new answer replacing it - with a
warning naming the file and the entry (:func:`~judgelab.cache.sqlite.served`); answers stored
before digests existed are trusted as long as they are JSON. An answer whose write fails is kept:
it goes to ``<cache>.pending.jsonl`` (imported by the next open), or, when that is on the same full
disk, to the fallback file in the system's temporary directory
(:func:`~judgelab.cache.pending.fallback_path`, imported by the next open on this host), and the
failure is logged naming the file. When no place takes it, the answer is held in
:attr:`RequestCache.unsaved` and the job waits up to ``space_wait`` seconds for space
(:meth:`RequestCache.put`), saying so; when the wait ends, it stops with an error naming how many
paid answers are lost, and which. A new cache file that the disk fills up before its tables are
written is made anew by the next open (:func:`~judgelab.cache.sqlite.begin_creation`), not refused
as a copy without its WAL.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgelab.cache.claims import Claimed, LeaseKeeper, new_owner, owner_gone
from judgelab.cache.fsdetect import network_filesystem
from judgelab.cache.keys import canonical
from judgelab.cache.pending import PendingFile, fallback_path
from judgelab.cache.sqlite import (
    CHUNK,
    CLAIMS_SCHEMA,
    RESPONSES_SCHEMA,
    CacheError,
    Row,
    add_digest_column,
    begin_creation,
    check_wal_pair,
    connect_db,
    creation_marker,
    end_creation,
    explain,
    insert_row,
    insert_rows,
    served,
    transaction,
)

log = logging.getLogger(__name__)


MODES = ("auto", "wal", "shards")
#: Seconds a claim stays valid without renewal (renewed every third of it while its owner lives).
DEFAULT_LEASE = 60.0
#: Seconds a job holding paid answers that no place could take waits for free space (the config
#: key ``cache_space_wait``) before it stops and names them as lost.
DEFAULT_SPACE_WAIT = 600.0
#: Answers (their keys) a message about answers held or lost names; the rest are counted.
KEYS_NAMED = 5


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


class _WalStore:
    """The cache file in WAL mode (one host): responses and claims in the same file."""

    mode = "wal"

    def __init__(self, path: Path, timeout: float):
        self.path = path
        creating = begin_creation(path)
        check_wal_pair(path)
        self._conn = connect_db(path, timeout, wal=True)
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(RESPONSES_SCHEMA)
        self._conn.execute(CLAIMS_SCHEMA)
        if creating or creation_marker(path).exists():
            end_creation(path)  # the tables are committed: from now on it may hold answers
        #: the table has the digest column (a cache of an older judgelab gets it here)
        self._digests = add_digest_column(self._conn, path)
        self._digest_sql = "digest" if self._digests else "NULL"
        self._timeout = timeout
        #: the lease thread's connection (see :meth:`renewer`)
        self._renew_conn: sqlite3.Connection | None = None
        self._renew_lock = threading.Lock()
        #: the file this store writes (named in the errors of a failed write)
        self.write_path = path

    def get(self, key: str) -> dict | None:
        row = self._conn.execute(
            f"SELECT response, {self._digest_sql} FROM responses WHERE key = ?", (key,)
        ).fetchone()
        return served(self.path, key, row[0], row[1]) if row else None

    def put(self, row: Row) -> None:
        insert_row(self._conn, row, self._digests)

    def put_many(self, rows: list[Row]) -> None:
        insert_rows(self._conn, rows, self._digests)

    def claim(self, keys: Sequence[str], limit: int, owner: str, lease: float) -> Claimed:
        out = Claimed()
        with transaction(self._conn):
            now = time.time()
            held: dict[str, tuple[str, float]] = {}
            for start in range(0, len(keys), CHUNK):
                chunk = list(keys[start : start + CHUNK])
                marks = ",".join("?" * len(chunk))
                asked = set(chunk)
                for k, resp, digest in self._conn.execute(
                    f"SELECT key, response, {self._digest_sql} FROM responses WHERE key IN ({marks})",
                    chunk,
                ):
                    if k not in asked:  # a damaged index led to another row
                        continue
                    answer = served(self.path, k, resp, digest)
                    if answer is not None:  # a damaged answer is asked again: claimed below
                        out.answered[k] = answer
                for k, o, e in self._conn.execute(
                    f"SELECT key, owner, expires FROM claims WHERE key IN ({marks})", chunk
                ):
                    held[k] = (o, e)
            for k in keys:
                if k in out.answered:
                    continue
                h = held.get(k)
                if h is not None and h[0] != owner and h[1] > now and not owner_gone(h[0]):
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
        with transaction(self._conn):
            for start in range(0, len(keys), CHUNK):
                chunk = list(keys[start : start + CHUNK])
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


def _space_wait_seconds(wait: float | None) -> float:
    seconds = DEFAULT_SPACE_WAIT if wait is None else float(wait)
    if not seconds >= 0:
        raise CacheError(f"cache_space_wait must be >= 0 seconds, got {wait}")
    return seconds


def _tell(level: int, message: str) -> None:
    """Log ``message``, and when the job's stderr goes to its log file, say it on the process's own
    stderr too (Snakemake's terminal): the log may sit on the very disk that is full."""
    log.log(level, message)
    term = sys.__stderr__
    if term is not None and sys.stderr is not term:
        with contextlib.suppress(OSError, ValueError):
            print(f"judgelab: {message}", file=term, flush=True)


class RequestCache:
    """A key/value store of JSON requests and responses (see the module docstring for the modes,
    claims and faults). Opening it imports the answers earlier jobs could not write.

    ``lease``: seconds a claim of this process stays valid without renewal (default
    ``JUDGELAB_CACHE_LEASE`` or :data:`DEFAULT_LEASE`). ``space_wait``: seconds a write that no
    place can take waits for free space (:meth:`put`; default :data:`DEFAULT_SPACE_WAIT`)."""

    #: seconds between two tries to write the answers held while waiting for space
    space_poll: float = 2.0

    def __init__(
        self,
        path: str | Path | None = None,
        timeout: float = 120.0,
        *,
        mode: str | None = None,
        lease: float | None = None,
        space_wait: float | None = None,
    ):
        self.path = Path(path) if path else default_cache_path()
        self.timeout = timeout
        self.lease = _lease_seconds(lease)
        self.space_wait = _space_wait_seconds(space_wait)
        self.mode = resolve_mode(self.path, mode)
        #: who this process is in the claims table (never anything secret)
        self.owner = new_owner()
        #: paid answers that no place took yet (the cache, the side file, the fallback file): held
        #: in memory while the job waits for space (:meth:`put`)
        self.unsaved: list[Row] = []
        #: why each place refused the last write (named in the messages about held answers)
        self._refused: list[str] = []
        #: the wait for space ended (or was interrupted): what is still held is lost
        self._gave_up = False
        #: where the last held answers went (said when the wait for space ends well)
        self._written_to = str(self.path)
        #: how many lost answers the last :meth:`lost_error` said (-1: none)
        self._told_lost = -1
        self.failed_writes = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"cannot create the cache's folder: {exc}", path=str(self.path)) from None
        self._held: set[str] = set()
        self._held_lock = threading.Lock()
        self._closed = False
        self._keeper: LeaseKeeper | None = None
        self._renew_fn: Callable[[list[str]], None] | None = None
        try:
            if self.mode == "wal":
                self._store: Any = _WalStore(self.path, timeout)
            else:
                from judgelab.cache.shards import ShardStore

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
        #: where answers go that neither the cache nor :attr:`pending` took (another disk)
        self.fallback = PendingFile(fallback_path(self.path))
        self._import_pending()

    # -- answers ----------------------------------------------------------------------------
    def get(self, key: str) -> dict | None:
        try:
            return self._store.get(key)
        except sqlite3.Error as exc:
            raise explain(self.path, exc, "reading the request cache", self.pending.path) from None

    def put(self, key: str, request: dict, response: dict) -> bool:
        """Store an answer. True: it is in the cache. False: the write failed; the answer was kept
        in the pending file or the fallback file (imported by the next open), and the failure was
        logged naming the cache file. When no place can take it (every one of them on a full
        disk), the answer is held in memory and the job waits up to :attr:`space_wait` seconds
        for space, saying so (:meth:`_wait_for_space`): it returns once the held answers are
        written, or raises :class:`CacheError` naming how many paid answers are lost, and which."""
        row: Row = (key, canonical(request), canonical(response), time.time())
        try:
            self._store.put(row)
            return True
        except sqlite3.Error as exc:
            why = explain(
                self._store.write_path, exc, "writing an answer to the request cache", self.pending.path
            )
            self._keep([row], why, str(exc))
            self._wait_for_space()
            return False

    def _keep(self, rows: list[Row], why: CacheError, reason: str) -> None:
        """``rows`` the cache refused (``why``; ``reason``: SQLite's words): set aside and logged."""
        self.failed_writes += len(rows)
        kept = self._set_aside(rows, reason)
        if kept is None:
            return  # held in memory: _wait_for_space says it
        if self.failed_writes == len(rows):  # the first failure says everything; later ones count
            log.error("%s; the answer was %s", why, kept)
        else:
            log.warning("%s: %d answers not written so far, %s", self.path, self.failed_writes, kept)

    def _append_aside(self, rows: list[Row]) -> tuple[PendingFile | None, list[str]]:
        """Append ``rows`` to the side file, else to the fallback file (another disk): the file
        that took them (None: neither) and why each one before it failed."""
        failures: list[str] = []
        for side in (self.pending, self.fallback):
            try:
                side.append(rows)
                return side, failures
            except OSError as exc:
                failures.append(f"{side.path}: {exc}")
        return None, failures

    def _set_aside(self, rows: list[Row], reason: str) -> str | None:
        """Keep ``rows`` the cache could not take (``reason``): :meth:`_append_aside` (says where),
        else held in :attr:`unsaved` (None)."""
        side, failures = self._append_aside(rows)
        if side is not None:
            return f"kept in {side.path} (imported by the next open of the cache on this host)"
        self.unsaved.extend(rows)
        self._refused = [f"{self._store.write_path}: {reason}", *failures]
        return None

    def flush_unsaved(self) -> int:
        """Try again to write :attr:`unsaved` (to the cache, else the side file, else the fallback
        file); returns how many are still only in memory."""
        rows, self.unsaved = self.unsaved, []
        if rows:
            try:
                self._store.put_many(rows)
                self._written_to = str(self._store.write_path)
            except sqlite3.Error as exc:
                side, failures = self._append_aside(rows)
                if side is None:
                    self.unsaved = rows
                    self._refused = [f"{self._store.write_path}: {exc}", *failures]
                else:
                    self._written_to = f"{side.path} (imported by the next open of the cache)"
        return len(self.unsaved)

    def _named_keys(self, rows: list[Row]) -> str:
        keys = ", ".join(r[0] for r in rows[:KEYS_NAMED])
        return keys + (f" and {len(rows) - KEYS_NAMED} more" if len(rows) > KEYS_NAMED else "")

    def _wait_for_space(self) -> None:
        """Hold :attr:`unsaved` (answers paid for that no place took) and try to write them every
        :attr:`space_poll` seconds for up to :attr:`space_wait` seconds, saying in the log (and on
        the terminal) how many are held and where they will go. Returns once they are written;
        when the wait ends (or is interrupted) raises :class:`CacheError` (:meth:`lost_error`)."""
        if not self.unsaved or self._gave_up:
            return
        n = len(self.unsaved)
        _tell(
            logging.ERROR,
            f"{self.path}: {n} paid answers are held in memory: no place could take them "
            f"({'; '.join(self._refused)}). Waiting up to {self.space_wait:.0f} s (config key "
            f"cache_space_wait) for free space; they go to {self._store.write_path} (else "
            f"{self.pending.path}, else {self.fallback.path}) as soon as one takes them. Free space "
            f"on the disk holding {self.path.parent} (requests {self._named_keys(self.unsaved)})",
        )
        deadline = time.monotonic() + self.space_wait
        try:
            while True:
                if not self.flush_unsaved():
                    _tell(
                        logging.WARNING,
                        f"{self.path}: space again: the {n} held answers are written to {self._written_to}",
                    )
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                time.sleep(min(self.space_poll, left))
        except BaseException:
            self._gave_up = True  # interrupted: close() tries once more and names what is lost
            raise
        self._gave_up = True
        # said by whoever stops on it: the cached client first holds the answers still in flight
        raise self.lost_error(tell=False)

    def lost_error(self, tell: bool = True) -> CacheError:
        """The error naming the paid answers :attr:`unsaved` holds, written nowhere (tried once
        more first); ``tell``: also said on the terminal (:func:`_tell`: the job's log may be on
        the full disk, and so may be the file its error would be printed through), unless the same
        count was said before."""
        self.flush_unsaved()
        rows = self.unsaved
        if not rows:
            err = CacheError(
                f"no place could take the answers this job paid for within {self.space_wait:.0f} s; "
                "they were written in the end (nothing is lost), but the job stopped sending: rerun it",
                path=str(self.path),
            )
        else:
            err = CacheError(
                f"{len(rows)} paid answers are lost: no place could take them within "
                f"{self.space_wait:.0f} s ({'; '.join(self._refused)}); a rerun pays for them again: "
                f"requests {self._named_keys(rows)}. Free space on the disk holding {self.path.parent}, "
                "or set JUDGELAB_CACHE_FALLBACK to a folder on another disk, or wait longer (config key "
                "cache_space_wait)",
                path=str(self.path),
            )
        if tell and len(rows) != self._told_lost:
            _tell(logging.ERROR, str(err))
            self._told_lost = len(rows)
        return err

    def _import_pending(self) -> None:
        for source in [*self._store.pending_sources(), self.fallback.path]:
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
            why = (
                "that process no longer runs"
                if owner_gone(owner)
                else "its lease of the claim ran out: crashed on another host?"
            )
            log.warning("%s: took over requests claimed by %s (%s)", self.path, owner, why)
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
        """Stop renewing, release this process's claims, write the answers still held (waiting
        for space as :meth:`put` does: raises :class:`CacheError` naming them if the wait ends) and
        close the store (in ``wal`` mode: the WAL folded into the named file; see
        :meth:`_WalStore.close`). Closing twice is harmless."""
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
        if self.unsaved and not self._gave_up:
            try:
                self._wait_for_space()  # raises, after closing the store, if the wait ends
            except BaseException:
                self._store.close()
                raise
        elif self.unsaved:  # the wait ended before: one last try, and what is lost is said
            self.lost_error()
        self._store.close()

    def __enter__(self) -> RequestCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass(frozen=True)
class CacheConfig:
    """Where a job's request cache is and how it opens: the config keys ``cache`` (the file),
    ``cache_mode`` (auto | wal | shards), ``cache_lease`` (seconds a claim of a request in
    flight stays valid without renewal) and ``cache_space_wait`` (seconds a job holding paid
    answers that no place can take waits for free space). The environment variables
    ``JUDGELAB_CACHE_MODE`` and ``JUDGELAB_CACHE_LEASE``, when set, override the mode and lease
    keys (one run on a cluster, without editing the config). None: the variable, else the cache's
    default (auto, 60 s, 600 s)."""

    path: str | Path | None = None
    mode: str | None = None
    lease: float | None = None
    space_wait: float | None = None

    @classmethod
    def of(cls, config: Mapping) -> CacheConfig:
        """The request cache of a workflow job: ``snakemake.config``'s cache keys."""
        return cls(
            config.get("cache"),
            config.get("cache_mode"),
            config.get("cache_lease"),
            config.get("cache_space_wait"),
        )

    def open(self) -> RequestCache:
        mode = os.environ.get("JUDGELAB_CACHE_MODE") or self.mode
        # a set variable wins; RequestCache reads (and checks) it when no lease is given
        lease = None if os.environ.get("JUDGELAB_CACHE_LEASE") else self.lease
        return RequestCache(self.path, mode=mode, lease=lease, space_wait=self.space_wait)


def open_cache(cache: str | Path | CacheConfig | None) -> RequestCache:
    """A job's request cache: a :class:`CacheConfig`, or a path (None: ``JUDGELAB_CACHE``, else
    the default path) opened with the environment's mode and lease."""
    return (cache if isinstance(cache, CacheConfig) else CacheConfig(cache)).open()
