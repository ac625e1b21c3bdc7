"""Reading a cache file as a job would see it - with the answers its ``-wal`` holds - without
writing a byte beside it (``judgelab cache check`` and ``salvage``).

SQLite itself, opening a WAL-mode file, may create or rewrite the ``-shm`` beside it, and a
read-write connection folds the WAL into the file when it closes. So the WAL is applied here, in
memory, as SQLite's file format states (https://www.sqlite.org/fileformat2.html#the_write_ahead_log):
the frames whose salts match the WAL header and whose running checksum holds, up to the last
commit frame; the database size is that commit's. The image is then opened by SQLite in memory
(:func:`open_image`). A WAL SQLite would ignore (:func:`~judgelab.cache.sqlite.wal_header_problem`)
adds nothing, as it would add nothing for SQLite.
"""

from __future__ import annotations

import sqlite3
import tempfile
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from judgelab.cache.sqlite import CacheError, _wal_checksum, text, wal_header_problem

_WAL_HEADER = 32
_FRAME_HEADER = 24


@dataclass
class WalFrames:
    """What a WAL adds to its database: ``pages`` (page number -> content) of the committed
    frames, ``size`` (the database's size in pages after the last commit; 0: no commit),
    ``page_size``, ``frames`` (committed frames read) and ``ignored`` (frames after the last
    commit or after the first invalid frame: a transaction that never committed, or a torn tail)."""

    pages: dict[int, bytes]
    size: int
    page_size: int
    frames: int
    ignored: int


def wal_frames(db: Path, wal: Path) -> WalFrames:
    """The committed frames of the WAL file ``wal`` of the database ``db`` (module docstring)."""
    data = wal.read_bytes() if wal.is_file() else b""
    if len(data) < _WAL_HEADER or wal_header_problem(db, wal) is not None:
        return WalFrames({}, 0, 0, 0, 0)
    big_endian = int.from_bytes(data[0:4], "big") & 1 == 1
    page_size = int.from_bytes(data[8:12], "big")
    salts = data[16:24]
    check = (int.from_bytes(data[24:28], "big"), int.from_bytes(data[28:32], "big"))
    frame = _FRAME_HEADER + page_size
    committed: dict[int, bytes] = {}
    pending: dict[int, bytes] = {}
    size = frames = in_txn = 0
    at = _WAL_HEADER
    while at + frame <= len(data):
        head = data[at : at + _FRAME_HEADER]
        body = data[at + _FRAME_HEADER : at + frame]
        if head[8:16] != salts:
            break
        check = _wal_checksum(head[:8] + body, big_endian, check)
        if check != (int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")):
            break
        pending[int.from_bytes(head[0:4], "big")] = body
        in_txn += 1
        commit = int.from_bytes(head[4:8], "big")
        if commit:
            committed.update(pending)
            pending.clear()
            size, frames, in_txn = commit, frames + in_txn, 0
        at += frame
    ignored = (len(data) - _WAL_HEADER) // frame - frames
    return WalFrames(committed, size, page_size, frames, ignored)


def database_image(path: Path) -> tuple[bytes, WalFrames]:
    """The bytes of the database ``path`` as SQLite reads it with its ``-wal``: the file with the
    WAL's committed pages put in, cut or padded to the last commit's size; and the frames used."""
    wal = wal_frames(path, Path(f"{path}-wal"))
    data = path.read_bytes()
    if not wal.size:
        return data, wal
    ps = wal.page_size
    image = bytearray(data[: wal.size * ps].ljust(wal.size * ps, b"\0"))
    for number, content in wal.pages.items():
        if 1 <= number <= wal.size:
            image[(number - 1) * ps : number * ps] = content
    return bytes(image), wal


def open_file_readonly(path: Path) -> sqlite3.Connection:
    """The named file alone, read-only and ``immutable``: SQLite neither locks it, nor reads or
    creates its ``-wal`` and ``-shm``, nor creates the file if it is missing."""
    uri = f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro&immutable=1"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None)
    conn.text_factory = text
    return conn


def open_image(image: bytes) -> sqlite3.Connection:
    """A database image (:func:`database_image`) opened by SQLite in memory, as a rollback-journal
    database (memory databases have no WAL). Nothing is written anywhere (Python 3.11+; on 3.10 the
    image is written to a temporary file first)."""
    buf = bytearray(image)
    if len(buf) >= 20 and buf.startswith(b"SQLite format 3\x00"):
        buf[18] = buf[19] = 1  # the write and read versions: legacy (rollback journal), not WAL
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.text_factory = text
    deserialize = getattr(conn, "deserialize", None)
    if deserialize is not None:
        deserialize(bytes(buf))
        return conn
    conn.close()  # pragma: no cover - Python 3.10: a temporary file, removed once SQLite has it open
    try:  # pragma: no cover
        with tempfile.NamedTemporaryFile(prefix="judgelab-check-", suffix=".sqlite", delete=False) as fh:
            fh.write(buf)
        conn = sqlite3.connect(fh.name, isolation_level=None)
        conn.text_factory = text
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()
    except (OSError, sqlite3.Error) as exc:  # pragma: no cover
        raise CacheError(f"cannot read a temporary copy of the cache ({exc}); use Python 3.11+") from None
    finally:  # pragma: no cover
        Path(fh.name).unlink(missing_ok=True)
    return conn  # pragma: no cover


def open_as_a_job_would(path: Path) -> tuple[sqlite3.Connection, WalFrames]:
    """The cache ``path`` with its WAL, read-only, nothing written beside it: the file itself
    (:func:`open_file_readonly`) when its WAL holds no committed frame, else its image in memory."""
    wal = wal_frames(path, Path(f"{path}-wal"))
    if not wal.size:
        return open_file_readonly(path), wal
    image, wal = database_image(path)
    return open_image(image), wal
