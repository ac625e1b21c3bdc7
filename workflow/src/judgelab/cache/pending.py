"""Answers the request cache could not write, kept in a side file until the next open imports them.

When writing an answer to the cache fails (disk full, I/O error, a damaged or read-only file),
:class:`~judgelab.cache.store.RequestCache` appends it to ``<cache>.pending.jsonl`` instead, one JSON
object a line (``key``, ``request``, ``response``: canonical JSON texts, ``created``: epoch
seconds). The next open of the cache imports the file and removes it, so a rerun does not pay
for those answers again.

Guarantees: every append and the import hold an exclusive lock on the file (``flock``), so an
answer appended while another process imports is either imported or left in the file, never
lost; an appended line is flushed and fsynced before :meth:`PendingFile.append` returns. A line
that does not parse (a crash mid-append leaves a torn last line) is not imported: it is moved to
``<pending>.rejected`` and logged with its file and line.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from judgelab.cache.sqlite import Row

try:  # POSIX; without it (Windows) appends and imports are not serialised across processes
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)


class PendingFile:
    """One pending-answers file (it need not exist)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def _open_locked(self, mode: str):
        """The file opened in ``mode`` and locked, or None if it does not exist (mode ``r+``).
        Retries when the file it locked was removed meanwhile by an import."""
        while True:
            try:
                fh = open(self.path, mode, encoding="utf-8")
            except FileNotFoundError:
                if mode == "r+":
                    return None
                raise
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            if os.fstat(fh.fileno()).st_nlink > 0:
                return fh
            fh.close()  # an import removed the file between our open and our lock: open anew

    def append(self, rows: Iterable[Row]) -> None:
        """Append ``rows`` durably; raises :class:`OSError` if they cannot be written."""
        text = "".join(
            json.dumps({"key": k, "request": q, "response": r, "created": t}, ensure_ascii=False) + "\n"
            for k, q, r, t in rows
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = self._open_locked("a")
        try:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        finally:
            fh.close()

    def import_into(self, store: Callable[[list[Row]], None]) -> int:
        """Hand every parsable row to ``store`` (which must write them all or raise), then remove
        the file; returns the number of rows. If ``store`` raises, the file is left as it was."""
        fh = self._open_locked("r+")
        if fh is None:
            return 0
        try:
            rows: list[Row] = []
            bad: list[str] = []
            for no, line in enumerate(fh.read().splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                    rows.append(
                        (str(obj["key"]), str(obj["request"]), str(obj["response"]), float(obj["created"]))
                    )
                except (ValueError, KeyError, TypeError) as exc:
                    log.warning(
                        "%s:%d: not a pending answer (%s); moved to %s.rejected",
                        self.path,
                        no,
                        exc,
                        self.path.name,
                    )
                    bad.append(line)
            if rows:
                store(rows)
            if bad:
                with open(f"{self.path}.rejected", "a", encoding="utf-8") as out:
                    out.write("".join(b + "\n" for b in bad))
            os.unlink(self.path)
            if rows:
                log.info(
                    "%s: imported %d answers that an earlier job could not write to the cache",
                    self.path,
                    len(rows),
                )
            return len(rows)
        finally:
            fh.close()
