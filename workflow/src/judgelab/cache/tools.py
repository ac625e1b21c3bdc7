"""Maintenance of the request cache: check what a copy of the file holds, merge shards, salvage a
damaged file.

``python -m judgelab.cache.tools check <cache>``
    the answers the cache holds, how many of them the named file holds alone (without its
    ``-wal``), the WAL's size, shards and pending answers (:func:`check`); exit status 0 when the
    named file alone is complete (safe to copy on its own), else 1. It writes nothing.

``python -m judgelab.cache.tools merge <cache>``
    fold the shards of a ``shards``-mode cache into its main file
    (:func:`judgelab.cache.shards.merge_shards`); run it when no job runs.
``python -m judgelab.cache.tools salvage <damaged file> <new cache>``
    copy every answer that can still be read from a damaged cache file into a new (or existing)
    cache file (:func:`salvage`). The damaged file is only read.

Each prints a JSON summary; an error prints one line naming the file and exits with status 1.
"""

from __future__ import annotations

import argparse
import json
import logging
import sqlite3
import urllib.parse
from collections.abc import Sequence
from pathlib import Path

from judgelab.cache.shards import shard_folder
from judgelab.cache.sqlite import CacheError, Row, check_wal_pair, explain
from judgelab.cache.store import RequestCache
from judgelab.errors import InputError

log = logging.getLogger(__name__)

#: rows read per query while salvaging (a window that fails is split in halves)
_WINDOW = 2000


def salvage(damaged: str | Path, dest: str | Path) -> dict:
    """Copy every readable answer of the damaged cache file ``damaged`` into the cache ``dest``.

    Rows are read by rowid windows; a window that fails (a damaged page) is split in halves down to
    single rows, so every row on an intact page is copied and only the rows SQLite cannot read, or
    whose request or response is not valid JSON any more, are left behind. Answers already in
    ``dest`` are kept (``INSERT OR IGNORE``). Returns ``{"copied", "unreadable", "dest"}``
    (``unreadable``: rowids that could not be read; at most one answer each). Raises
    :class:`~judgelab.cache.sqlite.CacheError` if nothing of ``damaged`` can be read (its first page,
    holding the schema, is damaged)."""
    damaged, dest = Path(damaged), Path(dest)
    if not damaged.is_file():
        raise CacheError("no such file to salvage", path=str(damaged))
    src = sqlite3.connect(str(damaged), isolation_level=None)
    try:
        try:
            src.execute("SELECT 1 FROM responses LIMIT 0").fetchall()
        except sqlite3.DatabaseError as exc:
            raise CacheError(
                f"nothing can be salvaged: {exc} (the table of answers cannot be found)", path=str(damaged)
            ) from None
        try:
            top = src.execute("SELECT MAX(rowid) FROM responses").fetchone()[0] or 0
        except sqlite3.DatabaseError:  # the rightmost pages are damaged: bound by the file's size
            pages, size = (src.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "page_size"))
            top = pages * size // 32
        copied, unreadable = 0, 0
        with RequestCache(dest) as out:

            def take(lo: int, hi: int) -> None:
                nonlocal copied, unreadable
                try:
                    rows = src.execute(
                        "SELECT key, request, response, created FROM responses WHERE rowid BETWEEN ? AND ?",
                        (lo, hi),
                    ).fetchall()
                except sqlite3.DatabaseError:
                    if lo == hi:
                        unreadable += 1
                        return
                    mid = (lo + hi) // 2
                    take(lo, mid)
                    take(mid + 1, hi)
                    return
                good: list[Row] = []
                for key, request, response, created in rows:
                    try:
                        json.loads(request), json.loads(response)
                        good.append((str(key), request, response, float(created)))
                    except (TypeError, ValueError):
                        unreadable += 1
                if good:
                    try:
                        out._store.put_many(good)
                    except sqlite3.Error as exc:
                        raise explain(dest, exc, "writing salvaged answers") from None
                    copied += len(good)

            for lo in range(1, top + 1, _WINDOW):
                take(lo, min(top, lo + _WINDOW - 1))
    finally:
        src.close()
    log.info("%s: %d answers copied to %s, %d rows unreadable", damaged, copied, dest, unreadable)
    return {"copied": copied, "unreadable": unreadable, "dest": str(dest)}


def _count(uri: str) -> int:
    """Rows of ``responses`` in the database at ``uri`` (0: no such table)."""
    conn = sqlite3.connect(uri, uri=True, isolation_level=None)
    try:
        found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'responses'")
        if not found.fetchall():
            return 0
        return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    finally:
        conn.close()


def check(path: str | Path) -> dict:
    """What the cache file ``path`` holds, and whether the named file alone holds all of it.

    ``entries``: answers readable with the WAL beside it (what a job opening the cache sees);
    ``named_file_entries``: answers in the named file alone (what a copy of just that file would
    open with; read with SQLite's ``immutable`` flag, which ignores the WAL); ``wal_bytes``,
    ``shards`` (``shards``-mode files not yet merged), ``pending_answers`` (answers a failed write
    left in ``<cache>.pending.jsonl``, imported at the next open); ``complete``: the named file alone
    holds every answer; ``problem``: why the cache would not open as it is (see
    :func:`judgelab.cache.sqlite.check_wal_pair`), else None; ``advice``: what to do before copying it.
    Writes nothing; a cache another job is writing right now is counted as it is at that moment."""
    path = Path(path)
    if not path.is_file():
        raise CacheError("no such cache file", path=str(path))
    wal = Path(f"{path}-wal")
    quoted = urllib.parse.quote(str(path.resolve()))
    problem = None
    try:
        check_wal_pair(path, settle=0.0)
    except CacheError as exc:
        problem = exc.message
    try:
        alone = _count(f"file:{quoted}?immutable=1")
        entries = alone if problem else _count(f"file:{quoted}?mode=ro")
    except sqlite3.Error as exc:
        raise explain(path, exc, "reading the request cache") from None
    folder = shard_folder(path)
    shards = sorted(folder.glob("*.sqlite")) if folder.is_dir() else []
    pending = [
        Path(f"{path}.pending.jsonl"),
        *(sorted(folder.glob("*.pending.jsonl")) if folder.is_dir() else []),
    ]
    pending_answers = 0
    for p in pending:
        if p.is_file():
            with open(p, encoding="utf-8", errors="replace") as fh:
                pending_answers += sum(1 for line in fh if line.strip())
    complete = problem is None and alone == entries and not shards and not pending_answers
    if complete:
        advice = f"the named file alone holds every answer: copying {path.name} is enough"
    elif problem:
        advice = problem
    elif shards:
        advice = f"merge the shards first (no job running): judgelab cache merge --cache {path}"
    elif pending_answers:
        advice = (
            f"{pending_answers} answers wait in a pending file: open the cache once (any job, or "
            f"`judgelab cache --cache {path}`) to import them"
        )
    else:
        advice = (
            f"{entries - alone} answers are only in {wal.name}: copy it with the file, or let the jobs "
            "using the cache end (the last one to close it folds the WAL into the file; after a crash, "
            f"`judgelab cache --cache {path}` with no job running does the same) and check again"
        )
    return {
        "path": str(path),
        "entries": entries,
        "named_file_entries": alone,
        "wal_bytes": wal.stat().st_size if wal.exists() else 0,
        "shards": len(shards),
        "pending_answers": pending_answers,
        "complete": complete,
        "problem": problem,
        "advice": advice,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m judgelab.cache.tools", description="maintenance of the request cache"
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("check", help="whether the named cache file alone holds every answer")
    p.add_argument("cache", help="the cache file (config key `cache`)")
    p = sub.add_parser("merge", help="fold the shards <cache>.d/*.sqlite into the main cache file")
    p.add_argument("cache", help="the main cache file (config key `cache`)")
    p = sub.add_parser("salvage", help="copy the readable answers of a damaged cache file")
    p.add_argument("damaged", help="the damaged cache file (moved aside)")
    p.add_argument("dest", help="the cache file to copy them into")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    try:
        if args.cmd == "check":
            summary = check(args.cache)
            print(json.dumps(summary, indent=1))
            return 0 if summary["complete"] else 1
        if args.cmd == "merge":
            from judgelab.cache.shards import merge_shards

            summary = merge_shards(args.cache)
        else:
            summary = salvage(args.damaged, args.dest)
    except InputError as exc:
        print(f"error: {exc}")
        return 1
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
