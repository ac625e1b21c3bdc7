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
import struct
import urllib.parse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from judgelab.cache.shards import shard_folder
from judgelab.cache.sqlite import CacheError, Row, check_wal_pair, explain
from judgelab.cache.store import RequestCache
from judgelab.errors import InputError

log = logging.getLogger(__name__)

#: rows read per query while salvaging (a window that fails is split in halves)
_WINDOW = 2000


def _varint(buf: bytes, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at ``buf[at:]``: (value, offset after it)."""
    value = 0
    for k in range(9):
        if at + k >= len(buf):
            raise ValueError("varint runs past the page")
        byte = buf[at + k]
        if k == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + k + 1
    raise ValueError("bad varint")  # pragma: no cover


def _record(payload: bytes) -> list | None:
    """The column values of a record (SQLite's record format), or None if it is not one."""
    try:
        size, at = _varint(payload, 0)
        types = []
        while at < size:
            t, at = _varint(payload, at)
            types.append(t)
        values: list[Any] = []
        at = size
        for t in types:
            if t == 0:
                values.append(None)
            elif t in (8, 9):
                values.append(t - 8)
            elif 1 <= t <= 6:
                n = (1, 2, 3, 4, 6, 8)[t - 1]
                values.append(int.from_bytes(payload[at : at + n], "big", signed=True))
                at += n
            elif t == 7:
                values.append(struct.unpack(">d", payload[at : at + 8])[0])
                at += 8
            elif t >= 12:
                n = (t - 12) // 2
                chunk = payload[at : at + n]
                values.append(chunk.decode("utf-8") if t % 2 else chunk)
                at += n
            else:
                return None
            if at > len(payload):
                return None
        return values
    except (ValueError, UnicodeDecodeError, struct.error):
        return None


def scan_pages(path: str | Path) -> Iterator[tuple[Row, int]]:
    """Every answer row found on the table leaf pages of the SQLite file ``path``, read page by page
    from the file's bytes (SQLite's file format), without the b-tree above them: the rows on the
    pages a truncated or partly overwritten file still has, also those whose parent pages are lost.
    A row counts when it has the answers table's shape: a key, a request and a response that are
    JSON, a time; one whose overflow pages are gone is left out. Yields (row, rowid)."""
    data = Path(path).read_bytes()
    if len(data) < 100 or not data.startswith(b"SQLite format 3\x00"):
        return
    page_size = int.from_bytes(data[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    usable = page_size - data[20]
    most_local = usable - 35
    least_local = ((usable - 12) * 32 // 255) - 23
    pages = -(-len(data) // page_size)  # a last page cut short still holds whole rows

    def page(n: int) -> bytes:
        return data[(n - 1) * page_size : n * page_size]

    def overflow(first: int, need: int) -> bytes | None:
        out, n, seen = b"", first, set()
        while n and len(out) < need:
            if n > pages or n in seen:
                return None
            seen.add(n)
            body = page(n)
            n = int.from_bytes(body[:4], "big")
            out += body[4:usable]
        return out[:need] if len(out) >= need else None

    for number in range(1, pages + 1):
        body = page(number)
        head = 100 if number == 1 else 0
        if len(body) < head + 8 or body[head] != 0x0D:
            continue
        cells = int.from_bytes(body[head + 3 : head + 5], "big")
        for c in range(cells):
            try:
                ptr = int.from_bytes(body[head + 8 + 2 * c : head + 10 + 2 * c], "big")
                size, at = _varint(body, ptr)
                rowid, at = _varint(body, at)
            except ValueError:
                continue
            if size <= most_local:
                payload: bytes | None = body[at : at + size]
            else:
                k = least_local + (size - least_local) % (usable - 4)
                local = k if k <= most_local else least_local
                rest = overflow(int.from_bytes(body[at + local : at + local + 4], "big"), size - local)
                payload = None if rest is None else body[at : at + local] + rest
            values = _record(payload) if payload is not None and len(payload) == size else None
            if values is None or len(values) != 4:
                continue
            key, request, response, created = values
            if not (isinstance(key, str) and key and isinstance(request, str)):
                continue
            if not isinstance(response, str) or not isinstance(created, (int, float)):
                continue
            try:
                json.loads(request), json.loads(response)
            except ValueError:
                continue
            yield (key, request, response, float(created)), rowid


def salvage(damaged: str | Path, dest: str | Path) -> dict:
    """Copy every readable answer of the damaged cache file ``damaged`` into the cache ``dest``.

        Two readings, as far as each gets: the file's pages one by one (:func:`scan_pages`: also rows
        whose parent pages are lost), and SQLite's (the schema read with ``writable_schema``, so a file
        cut short or with a damaged page still opens; rows read by rowid windows, a window that fails
        split in halves down to single rows). Rows whose request or response is not
        valid JSON any more are left behind. Answers already in ``dest`` are kept (``INSERT OR
        IGNORE``). Returns ``{"copied", "by_sqlite", "by_pages", "unreadable", "dest"}`` (``copied``:
        distinct answers; ``by_sqlite``, ``by_pages``: what each reading found; ``unreadable``: rows
    SQLite could not read, where the page scan may have found them). Raises
        :class:`~judgelab.cache.sqlite.CacheError` if nothing of ``damaged`` can be read."""
    damaged, dest = Path(damaged), Path(dest)
    if not damaged.is_file():
        raise CacheError("no such file to salvage", path=str(damaged))
    scanned: dict[str, Row] = {}
    last_rowid = 0
    for row, rowid in scan_pages(damaged):
        scanned.setdefault(row[0], row)
        last_rowid = max(last_rowid, rowid)
    found: dict[str, Row] = {}
    unreadable = 0
    src = sqlite3.connect(str(damaged), isolation_level=None)
    try:
        readable = True
        try:
            src.execute("PRAGMA writable_schema=ON")
            src.execute("SELECT 1 FROM responses LIMIT 0").fetchall()
        except sqlite3.DatabaseError:
            readable = False  # its first page is damaged: what the page scan found is all there is
        if readable:
            try:
                top = src.execute("SELECT MAX(rowid) FROM responses").fetchone()[0] or 0
            except sqlite3.DatabaseError:  # the rightmost pages are gone: the last row found on a page
                top = last_rowid

            def take(lo: int, hi: int) -> None:
                nonlocal unreadable
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
                for key, request, response, created in rows:
                    try:
                        json.loads(request), json.loads(response)
                        found.setdefault(str(key), (str(key), request, response, float(created)))
                    except (TypeError, ValueError):
                        continue

            for lo in range(1, top + 1, _WINDOW):
                take(lo, min(top, lo + _WINDOW - 1))
    finally:
        src.close()
    by_sqlite, by_pages = len(found), len(scanned)
    for key, row in scanned.items():
        found.setdefault(key, row)
    if not found and not readable:
        raise CacheError(
            "nothing can be salvaged: neither SQLite nor a scan of its pages finds a table of answers",
            path=str(damaged),
        )
    with RequestCache(dest) as out:
        rows = list(found.values())
        for start in range(0, len(rows), _WINDOW):
            try:
                out._store.put_many(rows[start : start + _WINDOW])
            except sqlite3.Error as exc:
                raise explain(dest, exc, "writing salvaged answers") from None
    log.info(
        "%s: %d answers copied to %s (%d read by SQLite, %d found page by page), %d stretches unreadable",
        damaged,
        len(found),
        dest,
        by_sqlite,
        by_pages,
        unreadable,
    )
    return {
        "copied": len(found),
        "by_sqlite": by_sqlite,
        "by_pages": by_pages,
        "unreadable": unreadable,
        "dest": str(dest),
    }


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
