"""Answers the request cache could not write, kept in a side file until the next open imports them.

When writing an answer to the cache fails (disk full, I/O error, a damaged or read-only file),
:class:`~judgelab.cache.store.RequestCache` appends it to ``<cache>.pending.jsonl`` instead, one JSON
object a line (``key``, ``request``, ``response``: canonical JSON texts, ``created``: epoch
seconds, ``digest``: :func:`~judgelab.cache.sqlite.entry_digest` of key and response). The next open of the cache imports the file and removes it, so a rerun does not pay
for those answers again.

Guarantees: every append and the import hold an exclusive lock on the file (``flock``), so an
answer appended while another process imports is either imported or left in the file, never
lost; an appended line is flushed and fsynced before :meth:`PendingFile.append` returns. A line
that does not parse (a crash mid-append leaves a torn last line), or whose digest does not match
its key and answer (a line written before digests existed has none and is taken as it is), is not
imported: it is moved to ``<pending>.rejected`` and logged with its file and line. An append that fails part way (the disk
filled) is cut back to where it began, so a torn line never swallows the next good one.

When the side file cannot be written either (it is on the same full disk), the answers go to the
cache's fallback file (:func:`fallback_path`): ``judgelab-pending/`` in the system's temporary
directory (another disk, usually), or in ``$JUDGELAB_CACHE_FALLBACK``; the next open of the cache on
this host imports it like the side file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from judgelab.cache.sqlite import Row, entry_digest, entry_problem

try:  # POSIX; without it (Windows) appends and imports are not serialised across processes
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)


def fallback_path(cache: str | Path) -> Path:
    """Where answers go that neither the cache ``cache`` nor its side file could take: in
    ``$JUDGELAB_CACHE_FALLBACK``, else the system's temporary directory, under
    ``judgelab-pending/``, named after the cache file and a digest of its full path (one fallback
    file per cache, found again by the next open on this host)."""
    full = str(Path(cache).resolve())
    digest = hashlib.sha256(full.encode("utf-8")).hexdigest()[:16]
    folder = Path(os.environ.get("JUDGELAB_CACHE_FALLBACK") or tempfile.gettempdir()) / "judgelab-pending"
    return folder / f"{Path(cache).name}-{digest}.pending.jsonl"


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
            json.dumps(
                {"key": k, "request": q, "response": r, "created": t, "digest": entry_digest(k, r)},
                ensure_ascii=False,
            )
            + "\n"
            for k, q, r, t in rows
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = self._open_locked("a")
        try:
            start = os.fstat(fh.fileno()).st_size
            try:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            except OSError:
                with contextlib.suppress(OSError):  # cutting a file back needs no space
                    os.ftruncate(fh.fileno(), start)
                raise
        finally:
            with contextlib.suppress(OSError):  # the failed flush is raised above
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
                    row = (str(obj["key"]), str(obj["request"]), str(obj["response"]), float(obj["created"]))
                    why = entry_problem(row[0], row[2], obj.get("digest"))
                    if why is not None:
                        raise ValueError(why)
                    rows.append(row)
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
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
