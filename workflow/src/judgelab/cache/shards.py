"""The ``shards`` mode of the request cache: jobs on several nodes sharing one cache folder.

SQLite's WAL mode cannot be shared across hosts, and several hosts writing one SQLite file over a
network filesystem depend on its locks being right. In ``shards`` mode no file has two writers:

* ``<cache>`` (the main file) is only read by the jobs (read-only connections, rollback journal);
  :func:`merge_shards` is its only writer.
* ``<cache>.d/<host>-<pid>-<id>.sqlite``: the shard of one process (one job), created at its first
  answer, written only by it (rollback journal, ``synchronous=FULL``: each answer is on the file
  server when ``put`` returns). While the process has it open it holds an exclusive ``flock`` on
  ``<shard>.lock``, so :func:`merge_shards` can tell a live shard from a finished one (a killed
  process's lock is released by the kernel; over NFS by the lock manager).
* ``<cache>.d/claims/<key>``: the claims of requests in flight (:class:`~judgelab.cache.claims.FileClaims`).
* ``<cache>.d/<shard>.pending.jsonl``: answers the shard could not take (:mod:`judgelab.cache.pending`).

A lookup reads the process's own shard, the main file, then every other shard (opened read-only as
they appear; the folder is listed again, at most once a second, whenever requests are claimed).
A shard that cannot be read (half-created, a hot journal of a crashed writer, a file server hiccup)
is skipped with a warning and retried later; :func:`merge_shards` opens it read-write, which rolls a
hot journal back. A damaged main file or own shard raises :class:`~judgelab.cache.sqlite.CacheError`.
A damaged answer (its digest does not hold, :func:`~judgelab.cache.sqlite.served`) is skipped: the
lookup goes on to the next file, and if none has the answer, the request is asked again.

Merge when no job runs (between runs; ``python -m judgelab.cache.tools merge <cache>``): every
shard's intact answers go into the main file (the first answer of a request is kept, unless the
main file's is damaged), finished shards are removed, live ones are copied but kept. Lookups get slower with the
number of shards (one query per shard), which merging resets.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import socket
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path

from judgelab.cache.claims import Claimed, FileClaims
from judgelab.cache.pending import PendingFile
from judgelab.cache.sqlite import (
    CLAIMS_SCHEMA,
    RESPONSES_SCHEMA,
    CacheError,
    Row,
    add_digest_column,
    connect_db,
    digest_column,
    explain,
    insert_row,
    insert_rows,
    intact_sql,
    is_wal_database,
    served,
    text,
)

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

#: Shards this process has open for writing (a POSIX lock taken again by the same process would
#: not conflict, so :func:`merge_shards` also consults this).
_LIVE_SHARDS: set[Path] = set()


def shard_folder(path: str | Path) -> Path:
    """The folder of the shards of the cache ``path``: ``<cache>.d``."""
    return Path(f"{path}.d")


def _open_ro(path: Path, timeout: float) -> sqlite3.Connection:
    uri = f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
    conn.text_factory = text
    return conn


def _has_responses(conn: sqlite3.Connection) -> bool:
    return bool(
        conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'responses'").fetchall()
    )


def _lock(path: Path, *, block: bool) -> int | None:
    """An fd holding an exclusive flock on ``path`` (created if absent); None if another process
    holds it (only when not ``block``). Raises OSError where the filesystem has no locks."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    if fcntl is None:  # pragma: no cover
        return fd
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError:
        os.close(fd)
        raise
    return fd


class ShardStore:
    """Storage of a :class:`~judgelab.cache.store.RequestCache` in ``shards`` mode (module docstring)."""

    mode = "shards"

    def __init__(self, path: Path, timeout: float, owner: str, lease: float):
        self.path = Path(path)
        self.dir = shard_folder(path)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.timeout = timeout
        host = re.sub(r"[^A-Za-z0-9_.-]", "_", socket.gethostname().split(".")[0]) or "host"
        self.own_path = self.dir / f"{host}-{os.getpid()}-{owner.rsplit(':', 1)[-1][:8]}.sqlite"
        #: the file this process writes (named in the errors of a failed write)
        self.write_path = self.own_path
        self.claims = FileClaims(self.dir / "claims", owner, lease)
        self._own: sqlite3.Connection | None = None
        self._lock_fd: int | None = None
        self._main: sqlite3.Connection | None = None
        self._others: dict[Path, sqlite3.Connection] = {}
        #: the lookup of each open file (its digest column, or NULL in a legacy file)
        self._lookup: dict[sqlite3.Connection, str] = {}
        self._listed = 0.0
        self.refresh(force=True)

    # -- connections -----------------------------------------------------------------------
    def refresh(self, force: bool = False) -> None:
        """Open the main file and the shards that appeared since the last listing (at most once a
        second unless ``force``); forget shards that were merged away."""
        if not force and time.monotonic() - self._listed < 1.0:
            return
        self._listed = time.monotonic()
        if self._main is None and self.path.exists():
            if is_wal_database(self.path):
                raise CacheError(
                    "the main cache file is in WAL mode (it was made in wal mode); shards mode reads it "
                    "read-only from several hosts, which WAL does not allow. Convert it once, with no "
                    f"job running: python -m judgelab.cache.tools merge {self.path}",
                    path=str(self.path),
                )
            self._main = _open_ro(self.path, self.timeout)
            if not _has_responses(self._main):
                self._main.close()
                self._main = None
        present = set(self.dir.glob("*.sqlite"))
        for gone in [p for p in self._others if p not in present]:
            self._close(self._others.pop(gone))
        for shard in sorted(present - set(self._others) - {self.own_path}):
            try:
                conn = _open_ro(shard, self.timeout)
                if _has_responses(conn):
                    self._others[shard] = conn
                else:
                    conn.close()  # created a moment ago, no table yet: seen at the next listing
            except sqlite3.Error as exc:
                log.warning(
                    "%s: cannot read this shard yet (%s); it is retried later and merged by merge_shards",
                    shard,
                    exc,
                )

    def _drop(self, shard: Path, exc: sqlite3.Error) -> None:
        log.warning("%s: reading this shard failed (%s); skipped until the next listing", shard, exc)
        self._close(self._others.pop(shard))

    def _close(self, conn: sqlite3.Connection) -> None:
        self._lookup.pop(conn, None)
        conn.close()

    def _own_conn(self) -> sqlite3.Connection:
        if self._own is None:
            try:
                self._lock_fd = _lock(Path(f"{self.own_path}.lock"), block=True)
            except OSError as exc:
                log.warning(
                    "%s: no file locks on this filesystem (%s): merge_shards cannot tell that "
                    "this shard is in use; merge only when no job runs",
                    self.own_path,
                    exc,
                )
            conn = connect_db(self.own_path, self.timeout, wal=False)
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute(RESPONSES_SCHEMA)
            self._own = conn
            _LIVE_SHARDS.add(self.own_path)
        return self._own

    # -- answers ---------------------------------------------------------------------------
    def _find(self, conn: sqlite3.Connection, path: Path, key: str) -> dict | None:
        """The intact answer of ``key`` in the file ``path`` (None: none, or a damaged one)."""
        sql = self._lookup.get(conn)
        if sql is None:
            sql = self._lookup[conn] = f"SELECT response, {digest_column(conn)} FROM responses WHERE key = ?"
        row = conn.execute(sql, (key,)).fetchone()
        return served(path, key, row[0], row[1]) if row else None

    def get(self, key: str) -> dict | None:
        for conn, path in ((self._own, self.own_path), (self._main, self.path)):
            if conn is not None:
                answer = self._find(conn, path, key)
                if answer is not None:
                    return answer
        for shard, conn in list(self._others.items()):
            try:
                answer = self._find(conn, shard, key)
            except sqlite3.Error as exc:
                self._drop(shard, exc)
                continue
            if answer is not None:
                return answer
        return None

    def put(self, row: Row) -> None:
        insert_row(self._own_conn(), row)

    def put_many(self, rows: list[Row]) -> None:
        insert_rows(self._own_conn(), rows)

    # -- claims ----------------------------------------------------------------------------
    def claim(self, keys: Sequence[str], limit: int, owner: str, lease: float) -> Claimed:
        self.refresh()
        out = Claimed()
        listed = False  # the folder listed again since the first claim of this call
        for k in keys:
            resp = self.get(k)
            if resp is not None:
                out.answered[k] = resp
                continue
            held = self.claims.holder(k)
            if held is not None and held[0] != owner and self.claims.fresh(held):
                out.busy[k] = held[0]
                continue
            if len(out.mine) >= limit:
                out.rest.append(k)
                continue
            if not self.claims.acquire(k, held):
                now = self.claims.holder(k)
                out.busy[k] = now[0] if now else "<another process>"
                continue
            if held is not None and held[0] != owner:
                out.taken_over.append(held[0])
            if not listed:  # the answer may be in a shard created since the last listing
                self.refresh(force=True)
                listed = True
            resp = self.get(k)  # answered and released between our lookup and our claim
            if resp is not None:
                self.claims.release([k])
                out.answered[k] = resp
            else:
                out.mine.append(k)
        return out

    def release(self, keys: Sequence[str], owner: str) -> None:
        self.claims.release(list(keys))

    def renewer(self, owner: str, lease: float) -> Callable[[list[str]], None]:
        return self.claims.renew

    # -- inspection ------------------------------------------------------------------------
    def _files(self) -> list[Path]:
        files = [self.path] if self.path.exists() else []
        return files + sorted(self.dir.glob("*.sqlite"))

    def count(self) -> int:
        """Distinct answered keys over the main file and every shard."""
        mem = sqlite3.connect("file::memory:", uri=True, isolation_level=None)
        try:
            mem.execute("CREATE TABLE k (key TEXT PRIMARY KEY)")
            for f in self._files():
                uri = f"file:{urllib.parse.quote(str(f.resolve()))}?mode=ro"
                mem.execute("ATTACH DATABASE ? AS s", (uri,))
                try:
                    # fetchall: a statement left unfinished would keep s locked for the DETACH
                    if mem.execute("SELECT 1 FROM s.sqlite_master WHERE name = 'responses'").fetchall():
                        mem.execute("INSERT OR IGNORE INTO k SELECT key FROM s.responses")
                finally:
                    mem.execute("DETACH DATABASE s")
            return mem.execute("SELECT COUNT(*) FROM k").fetchone()[0]
        finally:
            mem.close()

    def stats(self) -> dict:
        firsts, lasts = [], []
        for conn in [c for c in (self._own, self._main) if c is not None] + list(self._others.values()):
            first, last = conn.execute("SELECT MIN(created), MAX(created) FROM responses").fetchone()
            firsts += [first] if first is not None else []
            lasts += [last] if last is not None else []
        files = self._files()
        return {
            "entries": self.count(),
            "first": min(firsts, default=None),
            "last": max(lasts, default=None),
            "bytes": sum(f.stat().st_size for f in files),
            "shards": len(files) - (self.path in files),
            "shard": str(self.own_path),
        }

    def pending_sources(self) -> list[Path]:
        """The own pending file first (where this process writes), then every other one."""
        own = Path(f"{self.own_path}.pending.jsonl")
        others = sorted(p for p in self.dir.glob("*.pending.jsonl") if p != own)
        return [own, Path(f"{self.path}.pending.jsonl"), *others]

    def close(self) -> None:
        for conn in [self._own, self._main, *self._others.values()]:
            if conn is not None:
                self._close(conn)
        self._own = self._main = None
        self._others.clear()
        _LIVE_SHARDS.discard(self.own_path)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def _merge_sql(intact: str, digests: bool) -> str:
    """Copy the intact answers of the attached shard ``s`` into the main file (with their digest,
    unless the main file is a legacy one without the column): a key the main file has keeps its
    answer, unless that one is damaged."""
    cols = "key, request, response, created" + (", digest" if digests else "")
    new = "key, request, response, created" + (", judgelab_digest(key, response)" if digests else "")
    update = "request = excluded.request, response = excluded.response, created = excluded.created"
    own = intact_sql(
        "main.responses.key", "main.responses.response", "main.responses.digest" if digests else "NULL"
    )
    return (
        f"INSERT INTO main.responses ({cols}) SELECT {new} FROM s.responses WHERE {intact} "
        f"ON CONFLICT (key) DO UPDATE SET {update}{', digest = excluded.digest' if digests else ''} "
        f"WHERE NOT {own}"
    )


def merge_shards(path: str | Path, timeout: float = 120.0) -> dict:
    """Fold every shard of the cache ``path`` (and every pending-answers file) into the main file.

    The main file is created if absent and left in rollback-journal mode (as shards mode reads it).
    Returns ``{"main", "added", "shards", "removed", "in_use", "damaged"}``: answers new to the
    main file, the shards read, those removed (finished: no live writer), those kept (their writer
    still runs, or the filesystem has no locks to tell), damaged answers left behind (their digest
    does not hold: asked again by the next run that needs them; logged with their shard). An
    intact answer replaces a damaged one of the main file. Nothing is removed before its answers
    are committed."""
    main = Path(path)
    folder = shard_folder(main)
    try:
        conn = connect_db(main, timeout, wal=False)
        conn.execute(RESPONSES_SCHEMA)
        conn.execute(CLAIMS_SCHEMA)
    except sqlite3.Error as exc:
        raise explain(main, exc, "opening the main cache file to merge shards") from None
    digests = add_digest_column(conn, main)

    def put_many(rows: list[Row]) -> None:
        insert_rows(conn, rows, digests)

    damaged = 0

    added = 0
    before = conn.total_changes
    for pending in [Path(f"{main}.pending.jsonl"), *sorted(folder.glob("*.pending.jsonl"))]:
        PendingFile(pending).import_into(put_many)
    added += conn.total_changes - before
    shards, removed, in_use = [], [], []
    for shard in sorted(folder.glob("*.sqlite")) if folder.is_dir() else []:
        lock_path = Path(f"{shard}.lock")
        fd: int | None = None
        live = shard in _LIVE_SHARDS
        if not live and lock_path.exists():
            try:
                fd = _lock(lock_path, block=False)
                live = fd is None
            except OSError as exc:
                if exc.errno not in (errno.ENOLCK, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                    raise
                log.warning("%s: no file locks here (%s): kept, it may be in use", shard, exc)
                live = True
        try:
            try:
                conn.execute("ATTACH DATABASE ? AS s", (str(shard),))
            except sqlite3.Error as exc:
                raise explain(shard, exc, "opening a shard to merge it") from None
            try:
                has = conn.execute("SELECT 1 FROM s.sqlite_master WHERE name = 'responses'").fetchall()
                if has:
                    digest = digest_column(conn, "s")
                    intact = intact_sql(digest=digest)
                    bad = conn.execute(f"SELECT COUNT(*) FROM s.responses WHERE NOT {intact}").fetchone()[0]
                    if bad:
                        damaged += bad
                        log.warning(
                            "%s: %d damaged answers (their digest does not hold) are not merged; "
                            "the next run that needs them asks them again",
                            shard,
                            bad,
                        )
                    before = conn.total_changes
                    conn.execute(_merge_sql(intact, digests))
                    added += conn.total_changes - before
            except sqlite3.Error as exc:
                raise explain(shard, exc, "merging a shard") from None
            finally:
                conn.execute("DETACH DATABASE s")
            shards.append(str(shard))
            if live:
                in_use.append(str(shard))
            else:
                for f in (shard, Path(f"{shard}-journal"), lock_path):
                    f.unlink(missing_ok=True)
                removed.append(str(shard))
        finally:
            if fd is not None:
                os.close(fd)
    conn.close()
    log.info(
        "%s: merged %d shards (%d new answers), removed %d, %d still in use",
        main,
        len(shards),
        added,
        len(removed),
        len(in_use),
    )
    return {
        "main": str(main),
        "added": added,
        "shards": shards,
        "removed": removed,
        "in_use": in_use,
        "damaged": damaged,
    }
