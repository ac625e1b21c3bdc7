"""State of provider batches (OpenAI Batch API, Anthropic Message Batches), beside the cache.

One SQLite file, ``batches.sqlite`` in the request cache's folder, records every submitted batch
and which request keys (the cache keys, also used as the batches' ``custom_id``) it holds:

* ``batches(batch_id, kind, identity, tag, n_requests, status, submitted, updated)``;
  ``tag`` is the SHA-256 of the sorted request keys of the submission.
* ``batch_requests(key, batch_id, state)``, ``state`` = ``pending`` (sent, no answer yet),
  ``done`` (answered and handed to the cache) or ``failed`` (the batch returned no answer).

A request whose key is ``pending`` or ``done`` in some batch is never submitted again: a job
restarted mid-batch finds its batch here and resumes polling; a ``done`` request missing from the
cache is downloaded again from its batch. Only ``failed`` requests are submitted anew. Submissions
happen under an exclusive file lock (``batches.lock``), so concurrent jobs cannot both submit the
same request. Nothing here is secret: no key is stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from judgelab.cache.sqlite import connect_db

try:  # POSIX; without it (Windows) submissions are not serialised across processes
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    batch_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    identity TEXT NOT NULL,
    tag TEXT NOT NULL,
    n_requests INTEGER NOT NULL,
    status TEXT NOT NULL,
    submitted REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_requests (
    key TEXT NOT NULL,
    batch_id TEXT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (key, batch_id)
);
CREATE INDEX IF NOT EXISTS batch_requests_key ON batch_requests (key);
"""

LIVE_STATES = ("pending", "done")


class BatchStore:
    """The batch state file. Every write is committed at once (autocommit; WAL mode, except beside a
    cache in ``shards`` mode, where several hosts may open it: rollback journal)."""

    def __init__(self, path: str | Path, *, wal: bool, timeout: float = 120.0):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = connect_db(self.path, timeout, wal=wal)
        self._conn.executescript(_SCHEMA)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the exclusive submission lock (blocks while another process holds it)."""
        if fcntl is None:  # pragma: no cover
            yield
            return
        with open(self.path.with_suffix(".lock"), "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    @staticmethod
    def submission_tag(keys: Sequence[str]) -> str:
        return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()

    def live_batches(self, keys: Sequence[str]) -> dict[str, str]:
        """key -> id of the newest batch holding it as pending or done (keys in none are absent)."""
        found: dict[str, str] = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT r.key, r.batch_id FROM batch_requests r JOIN batches b USING (batch_id) "
                f"WHERE r.key IN ({marks}) AND r.state IN ('pending', 'done') "
                f"ORDER BY b.submitted",
                chunk,
            ).fetchall()
            found.update(dict(rows))  # later (newer) batches win
        return found

    def record(self, batch_id: str, kind: str, identity: dict, tag: str, keys: Sequence[str]) -> None:
        """Save a submitted batch and its request keys, in one transaction."""
        now = time.time()
        with self._conn:
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.execute(
                "INSERT OR REPLACE INTO batches VALUES (?, ?, ?, ?, ?, 'submitted', ?, ?)",
                (batch_id, kind, json.dumps(identity, sort_keys=True), tag, len(keys), now, now),
            )
            self._conn.executemany(
                "INSERT OR REPLACE INTO batch_requests (key, batch_id, state) VALUES (?, ?, 'pending')",
                [(k, batch_id) for k in keys],
            )

    def set_status(self, batch_id: str, status: str) -> None:
        self._conn.execute(
            "UPDATE batches SET status = ?, updated = ? WHERE batch_id = ?", (status, time.time(), batch_id)
        )

    def mark(self, batch_id: str, keys: Sequence[str], state: str) -> None:
        if not keys:
            return
        with self._conn:
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.executemany(
                "UPDATE batch_requests SET state = ? WHERE key = ? AND batch_id = ?",
                [(state, k, batch_id) for k in keys],
            )

    def batches(self) -> list[dict]:
        """Every recorded batch, oldest first (for ``judgelab cache`` and tests)."""
        cur = self._conn.execute("SELECT * FROM batches ORDER BY submitted")
        cols = [c[0] for c in cur.description]
        return [dict(zip(cols, row)) for row in cur.fetchall()]

    def states(self, batch_id: str) -> dict[str, int]:
        return dict(
            self._conn.execute(
                "SELECT state, COUNT(*) FROM batch_requests WHERE batch_id = ? GROUP BY state", (batch_id,)
            ).fetchall()
        )

    def close(self) -> None:
        self._conn.close()
