"""The SQLite layer of the request cache: connections, the schema, writing rows, the digest every
stored answer carries (:func:`entry_digest`, checked whenever an answer is read:
:func:`served`), the one error type (:class:`CacheError`, with what to do about each SQLite
failure) and the checks of a cache file and its WAL that run before it is opened (a named file
copied without its ``-wal``, a WAL SQLite would ignore)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shlex
import sqlite3
import struct
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

from judgelab.errors import InputError

log = logging.getLogger(__name__)

#: The answers: one row per request key (the first answer stored wins, unless it is damaged).
#: ``digest``: :func:`entry_digest` of the row's key and answer; NULL in a row written before
#: digests existed (a legacy row, trusted as long as its answer is JSON).
RESPONSES_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL,
    digest TEXT
)
"""


#: In-flight requests (see :mod:`judgelab.cache.claims`); rows live seconds to hours.
CLAIMS_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires REAL NOT NULL
)
"""


#: SQLite's limit of host parameters per statement is 999 on old versions: stay below it.
CHUNK = 500


class CacheError(InputError):
    """The request cache cannot be used as it is: the message names the file and what to do."""


# -- the digest of a stored answer --------------------------------------------------------------


def entry_digest(key: str, response: str) -> str:
    """The digest a stored answer carries: the SHA-256 of its request key and its answer's JSON
    text. The request's own text is not part of it: it is never served (the key stands for it)."""
    return hashlib.sha256(f"{key}\n{response}".encode("utf-8", "surrogatepass")).hexdigest()


def entry_problem(key: object, response: object, digest: object) -> str | None:
    """Why the stored answer ``response`` of ``key`` must not be served (its digest does not hold;
    a legacy row without a digest: its answer is not a JSON object), or None: it is intact."""
    if not isinstance(key, str) or not isinstance(response, str):
        return "its key or answer is not text"
    if digest is not None:
        if digest != entry_digest(key, response):
            return "its digest does not match its content"
        return None
    try:
        response.encode("utf-8")
    except UnicodeEncodeError:
        return "its answer is not UTF-8 text"
    try:
        value = json.loads(response)
    except ValueError as exc:
        return f"its answer is not JSON ({exc})"
    return None if isinstance(value, dict) else "its answer is not a JSON object"


def text(data: bytes) -> str:
    """SQLite text as Python reads it from a cache (the connections' ``text_factory``): bytes that
    are not UTF-8 (a damaged row) become lone surrogates instead of an error naming no entry, and
    the row's digest then does not hold (:func:`entry_problem`)."""
    return data.decode("utf-8", "surrogateescape")


def _intact(key: object, response: object, digest: object) -> int:
    """:func:`entry_problem` as an SQL function (``judgelab_intact``): 1 if the row is intact.
    The SQL passes key and response as BLOBs (:func:`intact_sql`): text that is not UTF-8 would not
    even reach a Python function."""
    values = [text(v) if isinstance(v, bytes) else v for v in (key, response, digest)]
    return int(entry_problem(*values) is None)


def intact_sql(key: str = "key", response: str = "response", digest: str = "digest") -> str:
    """The SQL test that a row is intact (``judgelab_intact`` of :func:`connect_db`'s connections)."""
    return f"judgelab_intact(CAST({key} AS BLOB), CAST({response} AS BLOB), {digest})"


_told: set[tuple[str, str]] = set()
_told_lock = threading.Lock()


def served(path: str | Path, key: str, response: str, digest: str | None) -> dict | None:
    """The answer to serve from a row of the cache file ``path``, or None when it is damaged
    (:func:`entry_problem`): then it is treated as absent - the request is asked again and its new
    answer replaces the row (:func:`insert_rows`) - and a warning names the file, the entry and
    why (once per entry and process)."""
    why = entry_problem(key, response, digest)
    if why is None:
        return json.loads(response)
    with _told_lock:
        first = (str(path), key) not in _told
        _told.add((str(path), key))
    if first:
        log.warning(
            "%s: the stored answer of request %s is damaged (%s); it is not served: the request is "
            "asked again (paid again) and the new answer replaces it. `judgelab cache check --cache "
            "%s` lists every damaged entry",
            path,
            key,
            why,
            path,
        )
    return None


def has_digest_column(conn: sqlite3.Connection, schema: str = "main") -> bool:
    """Whether the ``responses`` table of ``schema`` has the ``digest`` column (a cache made
    before digests existed has not)."""
    return any(row[1] == "digest" for row in conn.execute(f"PRAGMA {schema}.table_info(responses)"))


def digest_column(conn: sqlite3.Connection, schema: str = "main") -> str:
    """The SQL expression of a row's digest: the column, or NULL on a legacy table without it."""
    return "digest" if has_digest_column(conn, schema) else "NULL"


def add_digest_column(conn: sqlite3.Connection, path: str | Path) -> bool:
    """Give a legacy ``responses`` table its ``digest`` column (its rows keep NULL: legacy, trusted
    while their answers are JSON). True: the table has it now. A cache that cannot be written
    right now (a full disk) is used without digests for new rows until a later open adds it."""
    if has_digest_column(conn):
        return True
    try:
        with transaction(conn):
            if not has_digest_column(conn):  # another process may have added it meanwhile
                conn.execute("ALTER TABLE responses ADD COLUMN digest TEXT")
    except sqlite3.OperationalError as exc:
        if "duplicate column" in str(exc):
            return True
        log.warning(
            "%s: cannot add the digest column to this cache made by an older judgelab (%s); new "
            "answers are stored without digests until a later open adds it",
            path,
            exc,
        )
        return False
    log.info("%s: added the digest column (answers stored before it are trusted as they are)", path)
    return True


def salvage_command(path: str | Path) -> str:
    """The shell command that moves a damaged cache file aside to ``<cache>.broken`` together with
    its ``-wal`` and ``-shm`` (its answers may be in the WAL) and copies every intact answer into a
    new file at its place (:func:`judgelab.cache.tools.salvage_in_place`)."""
    return f"python -m judgelab.cache.tools salvage {shlex.quote(str(path))}"


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
            f"the cache file is damaged. With no job running, `{salvage_command(path)}` moves it aside "
            f"to {path.name}.broken together with its {path.name}-wal (which may hold answers) and "
            f"copies every intact answer into a new file at its place; answers on damaged pages are "
            f"computed (and paid for) again by the rerun{kept}. The tables the jobs already wrote "
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
    callers turn them into :class:`CacheError`). The connection knows the SQL functions
    ``judgelab_intact(key, response, digest)`` (:func:`entry_problem` is None) and
    ``judgelab_digest(key, response)`` (:func:`entry_digest`)."""
    conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None, check_same_thread=not any_thread)
    conn.text_factory = text
    conn.create_function("judgelab_intact", 3, _intact, deterministic=True)
    conn.create_function("judgelab_digest", 2, entry_digest, deterministic=True)
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


def creation_marker(path: Path) -> Path:
    """The file that says the cache ``path`` is being created and has never held an answer
    (:func:`begin_creation`)."""
    return Path(f"{path}.creating")


def begin_creation(path: Path) -> bool:
    """Before the first open of a cache file that does not exist: leave a marker beside it saying
    it is being created (True: this process made the marker and removes it once the tables are
    committed, :func:`end_creation`). A creation that fails - the disk full before the tables
    were written - leaves the marker, and the next open (:func:`check_wal_pair`) then knows the
    table-less file beside it never held answers and makes it anew, where a table-less file with
    no marker (a copy without its WAL) is refused."""
    if path.exists():
        return False
    try:
        os.close(os.open(creation_marker(path), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        return True
    except OSError:  # another process is creating it, or no room even for an empty file
        return False


def end_creation(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        creation_marker(path).unlink()


def connect_wal(path: str | Path, timeout: float = 120.0) -> sqlite3.Connection:
    """:func:`connect_db` in WAL mode (the name the batch store has always used)."""
    return connect_db(path, timeout, wal=True)


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


def _wal_checksum(data: bytes, big_endian: bool, start: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """SQLite's WAL checksum of ``data`` (a multiple of 8 bytes), as its file format states,
    continued from ``start`` (the checksum of what comes before ``data`` in the WAL)."""
    order: Literal[">", "<"] = ">" if big_endian else "<"
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    s0, s1 = start
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
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


def wal_pair_problem(path: Path) -> tuple[str | None, bool]:
    """Why the cache file ``path`` would open with fewer answers than it has (see
    :func:`check_wal_pair`), or None; and whether it is a table-less file whose creation failed
    (its marker beside it, :func:`begin_creation`: it never held an answer and the next open makes
    it anew). Reads only; None when no such file exists or a process has it open (``-shm``)."""
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    if not path.exists() or shm.exists():
        return None, False
    wal_size = wal.stat().st_size if wal.exists() else 0
    if wal_size:
        why = wal_header_problem(path, wal)
        if why is None:
            return None, False
        return (
            f"the WAL file beside it ({wal.name}, {wal_size} bytes) cannot be read: {why}. SQLite "
            "would ignore it and overwrite it at the next write, losing the answers it holds. If it "
            f"belongs to another copy of the cache, put it back there; if it is damaged, move it "
            f"aside (`mv {wal} {wal}.broken`) and open again (its answers are then computed again)"
        ), False
    if is_wal_database(path) and schema_is_empty(path):
        return (
            f"the file has no table of answers, but it is a WAL-mode database: its answers were "
            f"in {wal.name}, which is not beside it (the file was copied or backed up without "
            f"it, or {wal.name} was deleted). Put {wal.name} back beside it, or copy the cache "
            "again after `judgelab cache check` says the named file alone is complete; if this "
            "file never held answers, delete it"
        ), creation_marker(path).exists()
    return None, False


def check_wal_pair(path: Path, settle: float = 1.0) -> None:
    """Refuse to open a cache file that would open with fewer answers than it has, silently.

    Two cases, each only when no process has the file open (no ``-shm`` beside it): the named file
    is a WAL-mode database with no table at all and no WAL beside it (it was copied or backed up
    without its ``-wal``, or the ``-wal`` was deleted: the answers were there), or a WAL beside it
    that SQLite would ignore (:func:`wal_header_problem`). A file that a process is creating right
    now looks like the first case for a moment: the check looks again for ``settle`` seconds. A
    table-less file whose creation failed (its marker beside it, :func:`begin_creation`) never
    held answers: it is removed, to be made anew (:func:`wal_pair_problem` tells without acting)."""
    deadline = time.monotonic() + settle
    while True:
        problem, failed_creation = wal_pair_problem(path)
        if problem is None:
            return
        if time.monotonic() >= deadline:
            if failed_creation:
                # its creation failed before the tables were written (the disk full): no answer
                # was ever in it, so it is made anew
                log.warning("%s: a creation that failed left it without tables; made anew", path)
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                return
            raise CacheError(
                f"the request cache would open with fewer answers than it has: {problem}", path=str(path)
            )
        time.sleep(0.1)


#: a row of ``responses`` as it is stored: key, request JSON, response JSON, the time it was
#: stored (its digest, :func:`entry_digest`, is computed from the key and response when written)
Row = tuple[str, str, str, float]

#: a new answer is stored unless the key has one already; a damaged one (:func:`entry_problem`:
#: served as absent, so the request was asked again) is replaced
_UPSERT = (
    "INSERT INTO responses (key, request, response, created, digest) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (key) DO UPDATE SET request = excluded.request, response = excluded.response, "
    "created = excluded.created, digest = excluded.digest "
    f"WHERE NOT {intact_sql('responses.key', 'responses.response', 'responses.digest')}"
)
#: the same on a legacy table without the digest column
_UPSERT_LEGACY = (
    "INSERT INTO responses (key, request, response, created) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (key) DO UPDATE SET request = excluded.request, response = excluded.response, "
    f"created = excluded.created WHERE NOT {intact_sql('responses.key', 'responses.response', 'NULL')}"
)


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` on an autocommit connection; rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _with_digest(row: Row) -> tuple[str, str, str, float, str]:
    return (*row, entry_digest(row[0], row[2]))


def insert_row(conn: sqlite3.Connection, row: Row, digests: bool = True) -> None:
    """Store one answer with its digest (``digests``: False on a legacy table without the
    column). Two jobs answering the same request keep the first answer; a damaged
    stored answer is replaced (``conn`` from :func:`connect_db`)."""
    if digests:
        conn.execute(_UPSERT, _with_digest(row))
    else:
        conn.execute(_UPSERT_LEGACY, row)


def insert_rows(conn: sqlite3.Connection, rows: Sequence[Row], digests: bool = True) -> None:
    """Store many answers in one transaction (as :func:`insert_row`)."""
    with transaction(conn):
        if digests:
            conn.executemany(_UPSERT, [_with_digest(r) for r in rows])
        else:
            conn.executemany(_UPSERT_LEGACY, rows)
