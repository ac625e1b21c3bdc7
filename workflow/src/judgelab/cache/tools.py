"""Maintenance of the request cache: check what a copy of the file holds, merge shards, salvage a
damaged file.

``python -m judgelab.cache.tools check <cache>``
    the answers the cache holds (read with its ``-wal``, as a job reads them), SQLite's integrity
    check and every answer's digest, how many answers the named file holds alone (without its
    ``-wal``), the WAL's size, shards and pending answers (:func:`check`); exit status 0 when the
    named file alone is complete and intact (safe to copy on its own), 1 when the cache is sound
    but the named file alone is not complete, 2 when it is damaged (the next run would stop, or
    ask damaged answers again). It writes nothing, anywhere.

``python -m judgelab.cache.tools merge <cache>``
    fold the shards of a ``shards``-mode cache into its main file
    (:func:`judgelab.cache.shards.merge_shards`); run it when no job runs.
``python -m judgelab.cache.tools salvage <damaged file> [<new cache>]``
    copy every intact answer that can still be read from a damaged cache file (read with its
    ``-wal``) into a new (or existing) cache file (:func:`salvage`). The damaged file is only read.
    Without a new cache: in place (:func:`salvage_in_place`): the file is moved aside to
    ``<cache>.broken`` with its ``-wal`` and ``-shm`` and salvaged into a new file at its place.

Each prints a JSON summary; an error prints one line naming the file and exits with status 1.
"""

from __future__ import annotations

import argparse
import json
import logging
import sqlite3
import struct
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from judgelab.cache.pending import fallback_path
from judgelab.cache.readonly import database_image, open_as_a_job_would, open_file_readonly, open_image
from judgelab.cache.shards import shard_folder
from judgelab.cache.sqlite import (
    CacheError,
    Row,
    digest_column,
    entry_problem,
    explain,
    salvage_command,
    wal_pair_problem,
)
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
                values.append(chunk.decode("utf-8", "surrogateescape") if t % 2 else chunk)
                at += n
            else:
                return None
            if at > len(payload):
                return None
        return values
    except (ValueError, UnicodeDecodeError, struct.error):
        return None


def scan_pages(source: str | Path | bytes) -> Iterator[tuple[Row, str | None, int]]:
    """Every answer row found on the table leaf pages of the SQLite file ``source`` (a path, or a
    database image: :func:`~judgelab.cache.readonly.database_image`), read page by page from its
    bytes (SQLite's file format), without the b-tree above them: the rows on the pages a truncated
    or partly overwritten file still has, also those whose parent pages are lost. A row counts when
    it has the answers table's shape: a key, a request that is JSON, a response, a time and, in a
    table with digests, a digest; one whose overflow pages are gone is left out. Whether its
    answer is intact is for the caller to judge (:func:`~judgelab.cache.sqlite.entry_problem`).
    Yields (row, digest or None, rowid)."""
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
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
            if values is None or len(values) not in (4, 5):
                continue
            key, request, response, created = values[:4]
            digest = values[4] if len(values) == 5 else None
            if not (isinstance(key, str) and key and isinstance(request, str)):
                continue
            if not isinstance(response, str) or not isinstance(created, (int, float)):
                continue
            if digest is not None and not isinstance(digest, str):
                continue
            try:
                json.loads(request)  # the request is JSON: the shape of an answer's row
            except ValueError:
                continue
            yield (key, request, response, float(created)), digest, rowid


def _reason(why: str) -> str:
    """A damaged entry's reason without its details (``its answer is not JSON``)."""
    return why.split(" (", 1)[0]


_COMPANIONS = ("", "-wal", "-shm")


def salvage_in_place(path: str | Path) -> dict:
    """Salvage the damaged cache file ``path`` where it is: move it aside to ``<cache>.broken``
    together with its ``-wal`` and ``-shm`` (never one without the other), then :func:`salvage` it
    into a new file at ``path``. Refuses when a ``<cache>.broken`` file is there already. Run it
    when no job uses the cache."""
    path = Path(path)
    if not path.is_file():
        raise CacheError("no such cache file to salvage", path=str(path))
    broken = Path(f"{path}.broken")
    taken = [Path(f"{broken}{s}") for s in _COMPANIONS if Path(f"{broken}{s}").exists()]
    if taken:
        raise CacheError(
            f"{taken[0]} is in the way: move it elsewhere first (an earlier salvage left it?), then run "
            "this again",
            path=str(path),
        )
    for suffix in _COMPANIONS:
        if Path(f"{path}{suffix}").exists():
            Path(f"{path}{suffix}").rename(f"{broken}{suffix}")
    log.info("%s: moved aside to %s (with its WAL)", path, broken)
    return salvage(broken, path)


def salvage(damaged: str | Path, dest: str | Path) -> dict:
    """Copy every intact answer of the damaged cache file ``damaged`` (read with its ``-wal``, as
    a job would: :func:`~judgelab.cache.readonly.database_image`; nothing beside it is written)
    into the cache ``dest``.

    Two readings, as far as each gets: the file's pages one by one (:func:`scan_pages`: also rows
    whose parent pages are lost), and SQLite's (the schema read with ``writable_schema``, so a file
    cut short or with a damaged page still opens; rows read by rowid windows, a window that fails
    split in halves down to single rows). Only intact answers are copied: a row whose digest does
    not hold (or, in a legacy row without a digest, whose answer is not JSON) is left behind when
    no intact copy of it is found, and counted with the reason. Answers already in ``dest`` are
    kept; the copies get their digest (also legacy rows). Returns ``{"copied", "by_sqlite",
    "by_pages", "unreadable", "dropped", "dropped_why", "wal_frames", "dest"}`` (``copied``:
    distinct answers; ``by_sqlite``, ``by_pages``: the intact answers each reading found;
    ``unreadable``: rows SQLite could not read, where the page scan may have found them;
    ``dropped``: damaged answers left behind, ``dropped_why``: how many for each reason;
    ``wal_frames``: frames of the WAL read with the file). Raises
    :class:`~judgelab.cache.sqlite.CacheError` if nothing of ``damaged`` can be read."""
    damaged, dest = Path(damaged), Path(dest)
    if not damaged.is_file():
        raise CacheError("no such file to salvage", path=str(damaged))
    stray = Path(f"{dest}-wal")
    if not dest.exists() and stray.is_file() and stray.stat().st_size:
        # a new file at dest would open with this WAL's pages: the WAL of the file moved away?
        raise CacheError(
            f"{stray.name} lies beside no file: it is the WAL of the cache that was there (moved to "
            f"{damaged}?), and may hold answers. Move it with that file (`mv {stray} {damaged}-wal`, "
            f"and {dest.name}-shm likewise if present) and salvage again, or salvage in place: "
            f"`{salvage_command(dest)}`",
            path=str(dest),
        )
    image, wal = database_image(damaged)
    found: dict[str, Row] = {}
    bad: dict[str, str] = {}  # key -> why, while no intact copy of it is found

    def offer(row: Row, digest: str | None) -> bool:
        key = row[0]
        if key in found:
            return True
        why = entry_problem(key, row[2], digest)
        if why is not None:
            bad.setdefault(key, why)
            return False
        found[key] = row
        bad.pop(key, None)
        return True

    by_pages: set[str] = set()
    last_rowid = 0
    for row, digest, rowid in scan_pages(image):
        if offer(row, digest):
            by_pages.add(row[0])
        last_rowid = max(last_rowid, rowid)
    by_sqlite: set[str] = set()
    unreadable = 0
    src = open_image(image)
    try:
        readable = True
        try:
            src.execute("PRAGMA writable_schema=ON")
            src.execute("SELECT 1 FROM responses LIMIT 0").fetchall()
            digest_sql = digest_column(src)
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
                        f"SELECT key, request, response, created, {digest_sql} FROM responses "
                        "WHERE rowid BETWEEN ? AND ?",
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
                for key, request, response, created, digest in rows:
                    if not (isinstance(key, str) and isinstance(request, str)):
                        continue
                    try:
                        row = (key, request, response, float(created))
                    except (TypeError, ValueError):
                        continue
                    if offer(row, digest):
                        by_sqlite.add(key)

            for lo in range(1, top + 1, _WINDOW):
                take(lo, min(top, lo + _WINDOW - 1))
    finally:
        src.close()
    if not found and not bad and not readable:
        raise CacheError(
            "nothing can be salvaged: neither SQLite nor a scan of its pages finds a table of answers",
            path=str(damaged),
        )
    dropped_why = dict(Counter(_reason(why) for why in bad.values()))
    with RequestCache(dest) as out:
        rows = list(found.values())
        for start in range(0, len(rows), _WINDOW):
            try:
                out._store.put_many(rows[start : start + _WINDOW])
            except sqlite3.Error as exc:
                raise explain(dest, exc, "writing salvaged answers") from None
    log.info(
        "%s: %d answers copied to %s (%d read by SQLite, %d found page by page, %d frames of its WAL "
        "read with it), %d stretches unreadable; %d damaged answers left behind%s",
        damaged,
        len(found),
        dest,
        len(by_sqlite),
        len(by_pages),
        wal.frames,
        unreadable,
        len(bad),
        f" ({', '.join(f'{n}: {why}' for why, n in dropped_why.items())})" if bad else "",
    )
    return {
        "copied": len(found),
        "by_sqlite": len(by_sqlite),
        "by_pages": len(by_pages),
        "unreadable": unreadable,
        "dropped": len(bad),
        "dropped_why": dropped_why,
        "wal_frames": wal.frames,
        "dest": str(dest),
    }


#: damaged entries a check names (the rest are counted)
_NAMED = 10


def _read_entries(conn: sqlite3.Connection) -> tuple[int, int, list[dict]]:
    """(entries, legacy entries without a digest, damaged entries: key and why) of the cache
    opened as ``conn``; 0 entries when it has no table of answers. Raises sqlite3 errors."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'responses'")
    if not found.fetchall():
        return 0, 0, []
    entries = legacy = 0
    damaged: list[dict] = []
    for key, response, digest in conn.execute(f"SELECT key, response, {digest_column(conn)} FROM responses"):
        entries += 1
        legacy += digest is None
        why = entry_problem(key, response, digest)
        if why is not None:
            damaged.append({"key": key, "why": why})
    return entries, legacy, damaged


def _count_alone(path: Path) -> tuple[int | None, str | None]:
    """Answers in the named file alone, without its WAL (what a copy of just that file would open
    with), or None and why it cannot be read so."""
    try:
        conn = open_file_readonly(path)
        try:
            found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'responses'")
            if not found.fetchall():
                return 0, None
            return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]), None
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return None, f"{exc} ({getattr(exc, 'sqlite_errorname', type(exc).__name__)})"


#: check's status -> its exit status: 0 the named file alone holds every answer, intact; 1 the
#: cache is sound and a job reads every answer, but the named file alone is not complete (or it
#: never held an answer); 2 the next run would stop, or not serve some answers (damage)
STATUS_EXIT = {"complete": 0, "incomplete": 1, "damaged": 2}


def check(path: str | Path) -> dict:
    """What the cache file ``path`` holds, whether it is intact and whether the named file alone
    holds all of it. Writes nothing, anywhere: the file and its ``-wal`` are read as a job reads
    them, in memory (:func:`~judgelab.cache.readonly.open_as_a_job_would`); the named file alone with
    SQLite's ``immutable`` flag.

    ``entries``: answers readable with the WAL beside it (what a job opening the cache sees);
    ``integrity``: what SQLite's integrity check of that finds wrong (empty: nothing);
    ``damaged_entries``: answers whose digest does not hold (a legacy answer without a digest:
    whose text is not JSON), the first of them named in ``damaged`` (a job does not serve them:
    it asks them again); ``legacy_entries``: answers stored before digests existed (trusted);
    ``named_file_entries``: answers in the named file alone (None: it cannot be read without its
    WAL, ``named_file_problem`` says why); ``wal_bytes``, ``wal_frames`` (committed frames a job
    reads from the WAL); ``shards`` (``shards``-mode files not yet merged); ``pending_answers``
    (answers a failed write left in ``<cache>.pending.jsonl`` or in the cache's fallback file in
    the temporary directory, :func:`~judgelab.cache.pending.fallback_path`: imported at the next
    open on this host);
    ``complete``: the named file alone holds every answer; ``problem``: why the cache would not open
    as it is (see :func:`judgelab.cache.sqlite.check_wal_pair`), else None; ``status``
    (:data:`STATUS_EXIT`) and ``advice``: what the next run does and what to do before copying the
    cache. A cache another job is writing right now is counted as it is at that moment."""
    path = Path(path)
    if not path.is_file():
        raise CacheError("no such cache file", path=str(path))
    wal = Path(f"{path}-wal")
    problem, failed_creation = wal_pair_problem(path)
    alone, alone_problem = _count_alone(path)
    integrity: list[str] = []
    entries = legacy = frames = 0
    damaged: list[dict] = []
    if problem:  # the next open refuses it (or makes it anew): the named file alone is what there is
        entries = alone or 0
    else:
        try:
            conn, wal_read = open_as_a_job_would(path)
            frames = wal_read.frames
            try:
                integrity = [r[0] for r in conn.execute("PRAGMA integrity_check(20)") if r[0] != "ok"]
                entries, legacy, damaged = _read_entries(conn)
            finally:
                conn.close()
        except sqlite3.Error as exc:
            integrity.append(f"{exc} ({getattr(exc, 'sqlite_errorname', type(exc).__name__)})")
    folder = shard_folder(path)
    shards = sorted(folder.glob("*.sqlite")) if folder.is_dir() else []
    pending = [
        Path(f"{path}.pending.jsonl"),
        *(sorted(folder.glob("*.pending.jsonl")) if folder.is_dir() else []),
        fallback_path(path),  # where answers went that the disk holding the cache had no room for
    ]
    pending_answers = 0
    for p in pending:
        if p.is_file():
            with open(p, encoding="utf-8", errors="replace") as fh:
                pending_answers += sum(1 for line in fh if line.strip())
    complete = (
        problem is None
        and not integrity
        and alone_problem is None
        and alone == entries
        and not shards
        and not pending_answers
    )
    status = "incomplete"
    if failed_creation:
        advice = (
            "its creation failed (a full disk?) before its tables were written: it never held an "
            "answer, and the next open of the cache makes it anew. Nothing to copy"
        )
    elif problem:
        status = "damaged"
        advice = f"the next run stops: {problem}"
    elif integrity:
        status = "damaged"
        advice = (
            f"the cache is damaged (SQLite's integrity check: {integrity[0]}); the next run stops when "
            f"it reads a damaged page. With no job running, `{salvage_command(path)}` moves it aside "
            "with its WAL and copies every intact answer into a new file at its place; the answers it "
            "cannot read are asked again (and paid again) by the next run"
        )
    elif damaged:
        status = "damaged"
        advice = (
            f"{len(damaged)} answers are damaged (their digest does not hold, or a legacy answer is "
            "not JSON): the next run does not serve them; it asks those requests again (paid again) "
            "and stores the new answers in their place"
        )
        if not complete:
            advice += f". Before copying: {_incomplete(path, entries, alone, alone_problem, shards, pending_answers)}"
    elif complete:
        status = "complete"
        advice = f"the named file alone holds every answer: copying {path.name} is enough"
    else:
        advice = _incomplete(path, entries, alone, alone_problem, shards, pending_answers)
    return {
        "path": str(path),
        "status": status,
        "entries": entries,
        "integrity": integrity,
        "damaged_entries": len(damaged),
        "damaged": damaged[:_NAMED],
        "legacy_entries": legacy,
        "named_file_entries": alone,
        "named_file_problem": alone_problem,
        "wal_bytes": wal.stat().st_size if wal.exists() else 0,
        "wal_frames": frames,
        "shards": len(shards),
        "pending_answers": pending_answers,
        "complete": complete,
        "problem": problem,
        "advice": advice,
    }


def _incomplete(
    path: Path, entries: int, alone: int | None, alone_problem: str | None, shards: list, pending: int
) -> str:
    """What to do about a sound cache whose named file alone does not hold every answer."""
    wal = Path(f"{path}-wal")
    if shards:
        return f"merge the shards first (no job running): judgelab cache merge --cache {path}"
    if pending:
        return (
            f"{pending} answers wait in a pending file ({path.name}.pending.jsonl, or {fallback_path(path)}): "
            f"open the cache once on this host (any job, or `judgelab cache --cache {path}`) to import them"
        )
    fold = (
        f"let the jobs using the cache end (the last one to close it folds the WAL into the file; "
        f"after a crash or a full disk, `judgelab cache --cache {path}` with no job running and free "
        f"space on its disk does the same) and check again"
    )
    if alone is None:
        return (
            f"the cache with its {wal.name} is sound and holds {entries} answers, but the named file "
            f"alone cannot be read without it ({alone_problem}: writing the WAL back into it was cut "
            f"short, e.g. by a full disk). Keep {wal.name} with it: copy both files, or {fold}"
        )
    return f"{entries - alone} answers are only in {wal.name}: copy it with the file, or {fold}"


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
    p = sub.add_parser("salvage", help="copy the intact answers of a damaged cache file")
    p.add_argument("damaged", help="the damaged cache file (with only this: salvaged in place)")
    p.add_argument(
        "dest",
        nargs="?",
        help="the cache file to copy them into; without it, the damaged file is moved aside to "
        "<cache>.broken with its -wal and -shm and salvaged into a new file at its place",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    try:
        if args.cmd == "check":
            summary = check(args.cache)
            print(json.dumps(summary, indent=1))
            return STATUS_EXIT[summary["status"]]
        if args.cmd == "merge":
            from judgelab.cache.shards import merge_shards

            summary = merge_shards(args.cache)
        elif args.dest is None:
            summary = salvage_in_place(args.damaged)
        else:
            summary = salvage(args.damaged, args.dest)
    except InputError as exc:
        print(f"error: {exc}")
        return 1
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
