"""Persistent request cache shared by every backend.

One SQLite file (WAL mode) holds ``key -> response``. The key is the SHA-256 of a canonical JSON
of everything that determines the answer: backend identity (kind, model, model-file hash or
base URL), every sampling parameter and the exact messages. API keys are never part of it.
Each response is committed as soon as it arrives, so a job that crashes after k of n calls has
k answers saved; several Snakemake jobs may read and write the same file at once.

Everything the cache needs lives beside the cache file: the memo of model-file hashes
(``file-hashes.json``) and the API backends' batch ids (``batches.sqlite``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def connect_wal(path: str | Path, timeout: float = 120.0) -> sqlite3.Connection:
    """An autocommit connection in WAL mode, safe to open while other processes open it too.

    Switching a fresh database to WAL needs an exclusive lock and SQLite's busy handler does not
    always wait for it, so two connections opening a new file at once can get "database is
    locked"; the switch is retried until ``timeout``.
    """
    conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None)
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return conn
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                conn.close()
                raise
            time.sleep(0.05)


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_key(request: dict) -> str:
    return hashlib.sha256(canonical(request).encode("utf-8")).hexdigest()


def default_cache_path() -> Path:
    return Path(os.environ.get("JUDGELAB_CACHE", ".judgelab-cache/requests.sqlite"))


#: The folder of the most recently opened cache: where :func:`file_sha256` keeps its memo.
_SIDE_DIR: Path | None = None


class RequestCache:
    """A key/value store of JSON requests and responses in one SQLite file. Opening it makes its
    folder the home of the model-file hash memo (:func:`file_sha256`)."""

    def __init__(self, path: str | Path | None = None, timeout: float = 120.0):
        global _SIDE_DIR
        self.path = Path(path) if path else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _SIDE_DIR = self.path.parent
        self._conn = connect_wal(self.path, timeout)
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(_SCHEMA)

    def get(self, key: str) -> dict | None:
        row = self._conn.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, request: dict, response: dict) -> None:
        # INSERT OR IGNORE: two jobs answering the same request keep the first answer.
        self._conn.execute(
            "INSERT OR IGNORE INTO responses (key, request, response, created) VALUES (?, ?, ?, ?)",
            (key, canonical(request), canonical(response), time.time()),
        )

    def __len__(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def stats(self) -> dict:
        n, first, last = self._conn.execute(
            "SELECT COUNT(*), MIN(created), MAX(created) FROM responses"
        ).fetchone()
        return {
            "path": str(self.path),
            "entries": n,
            "first": first,
            "last": last,
            "bytes": self.path.stat().st_size if self.path.exists() else 0,
        }

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> RequestCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_HASHES: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str | Path, memo_dir: str | Path | None = None) -> str:
    """SHA-256 of a (model) file, memoised on (path, size, mtime) in-process and in the side file
    ``file-hashes.json`` in ``memo_dir`` (default: beside the request cache opened last, else
    beside the default cache)."""
    p = Path(path).resolve()
    st = p.stat()
    memo_key = (str(p), st.st_size, st.st_mtime_ns)
    if memo_key in _HASHES:
        return _HASHES[memo_key]
    side = Path(memo_dir or _SIDE_DIR or default_cache_path().parent) / "file-hashes.json"
    table: dict = {}
    if side.exists():
        try:
            table = json.loads(side.read_text())
        except json.JSONDecodeError:
            table = {}
    tag = f"{memo_key[0]}|{memo_key[1]}|{memo_key[2]}"
    digest = table.get(tag)
    if digest is None:
        h = hashlib.sha256()
        with open(p, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        digest = h.hexdigest()
        table[tag] = digest
        side.parent.mkdir(parents=True, exist_ok=True)
        tmp = side.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(table, indent=0))
        tmp.replace(side)
    _HASHES[memo_key] = digest
    return digest
