"""The file named by `cache:` holds the answers: every code path that opens the cache closes it
(the lease thread's connection too), so SQLite folds the WAL into the named file; a copy of the
named file without its WAL, or a WAL SQLite would ignore, is refused instead of opening empty;
`judgelab cache check` says whether the named file alone is complete."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, ServerThread

from judgelab.cache.sqlite import CacheError
from judgelab.cache.store import RequestCache
from judgelab.cache.tools import check
from judgelab.cli import main
from judgelab.llm.backends.base import Request
from judgelab.llm.session import LLMSession


def alone(path: Path, tmp: Path) -> int:
    """Answers a copy of ``path`` alone (no -wal, no -shm) opens with."""
    dest = tmp / f"alone-{time.monotonic_ns()}" / path.name
    dest.parent.mkdir(parents=True)
    shutil.copy(path, dest)
    with RequestCache(dest) as copy:
        return len(copy)


def test_a_closed_cache_file_alone_holds_every_answer_also_after_lease_renewals(tmp_path):
    path = tmp_path / "c" / "requests.sqlite"
    cache = RequestCache(path, lease=0.3)  # renewed every 0.1 s: the lease thread opens its connection
    claimed = cache.claim([f"k{i}" for i in range(30)])
    time.sleep(0.5)
    assert cache._store._renew_conn is not None
    for key in claimed.mine:
        cache.put(key, {"q": key}, {"text": key})
    cache.release(claimed.mine)
    cache.close()
    cache.close()  # closing twice is harmless
    assert not Path(f"{path}-wal").exists(), "the last connection's close folds and removes the WAL"
    assert alone(path, tmp_path) == 30


def test_a_model_session_closes_its_cache_so_the_named_file_holds_its_answers(tmp_path):
    path = tmp_path / "c" / "requests.sqlite"
    spec = {"backend": "openai", "model": "fake-judge", "api_key_env": None, "concurrency": 2}
    requests = [Request.from_messages([{"role": "user", "content": f"q{i}"}], 4) for i in range(6)]
    with ServerThread(FakeOpenAI().app()) as srv:
        with LLMSession({**spec, "base_url": srv.base_url}, str(path), name="fake") as client:
            client.run(requests, progress=False)
    assert alone(path, tmp_path) == 6
    summary = check(path)
    assert (summary["entries"], summary["named_file_entries"], summary["complete"]) == (6, 6, True)


def _crashed_writer(path: Path, n: int) -> None:
    """A process that writes ``n`` answers and dies without closing (kill -9 alike): they stay in
    the WAL beside the file."""
    code = (
        "import os, sys\n"
        "from judgelab.cache.store import RequestCache\n"
        "c = RequestCache(sys.argv[1])\n"
        f"[c.put(f'k{{i}}', {{'i': i}}, {{'text': str(i)}}) for i in range({n})]\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)


def test_a_copy_of_the_named_file_without_its_wal_is_refused_not_opened_empty(tmp_path):
    path = tmp_path / "c" / "requests.sqlite"
    _crashed_writer(path, 12)
    assert Path(f"{path}-wal").stat().st_size > 0
    copy = tmp_path / "backup" / "requests.sqlite"
    copy.parent.mkdir()
    shutil.copy(path, copy)  # the named file alone: 4096 bytes, no table; the answers were in the WAL
    with pytest.raises(CacheError, match=r"requests\.sqlite-wal, which is not beside it") as err:
        RequestCache(copy)
    assert str(copy) in str(err.value)
    report = check(copy)
    assert not report["complete"] and "not beside it" in report["problem"]
    # with the WAL beside it, the crashed writer's answers are all there, and closing folds them in
    shutil.copy(f"{path}-wal", f"{copy}-wal")
    with RequestCache(copy) as cache:
        assert len(cache) == 12
    assert check(copy)["complete"] and alone(copy, tmp_path) == 12


def test_a_wal_that_sqlite_would_ignore_is_refused(tmp_path):
    path = tmp_path / "c" / "requests.sqlite"
    _crashed_writer(path, 5)
    Path(f"{path}-shm").unlink()
    wal = Path(f"{path}-wal")
    data = bytearray(wal.read_bytes())
    data[12] ^= 0xFF  # a checkpoint sequence bit: the header's checksum no longer matches
    wal.write_bytes(bytes(data))
    with pytest.raises(CacheError, match="header checksum is wrong"):
        RequestCache(path)
    wal.write_bytes(b"<html>not a WAL</html>" * 4)
    with pytest.raises(CacheError, match="WAL magic number"):
        RequestCache(path)


def test_cache_check_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "c" / "requests.sqlite"
    _crashed_writer(path, 7)
    assert main(["cache", "check", "--cache", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["entries"], report["named_file_entries"], report["complete"]) == (7, 0, False)
    assert "7 answers are only in requests.sqlite-wal" in report["advice"]
    assert main(["cache", "--cache", str(path)]) == 0  # opening and closing folds the WAL in
    capsys.readouterr()
    assert main(["cache", "check", "--cache", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["entries"], report["named_file_entries"], report["wal_bytes"]) == (7, 7, 0)


def _answers(path: Path) -> dict[str, tuple[str, str]]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        return {k: (q, r) for k, q, r in conn.execute("SELECT key, request, response FROM responses")}


@pytest.fixture
def full_cache(tmp_path) -> Path:
    """96 answers of about 2.7 KB each (one table page each), keyed as the client keys them."""
    from judgelab.cache.keys import request_key

    path = tmp_path / "full" / "requests.sqlite"
    with RequestCache(path) as cache:
        for i in range(96):
            request = {"i": i, "messages": [{"role": "user", "content": "q" * 1500}]}
            cache.put(request_key(request), request, {"text": f"{i % 4}", "pad": "a" * 1200})
    return path


@pytest.mark.parametrize("kept", [0.97, 0.5, 0.25])
def test_salvage_reads_a_file_cut_short_as_far_as_its_pages_go(full_cache, tmp_path, kept):
    """One answer per table page: a file cut to a share of its pages keeps about that share of its
    answers (the first pages hold the schema and the tree above the leaves)."""
    from judgelab.cache.tools import salvage

    original = _answers(full_cache)
    cut = tmp_path / "cut.sqlite"
    data = full_cache.read_bytes()
    pages = len(data) // 4096
    assert 96 < pages < 110
    cut.write_bytes(data[: int(pages * kept) * 4096 - 700])  # cut mid-page
    report = salvage(cut, tmp_path / "new.sqlite")
    assert int(pages * kept) - 9 <= report["copied"] <= int(pages * kept), report
    got = _answers(tmp_path / "new.sqlite")
    assert len(got) == report["copied"] and all(got[k] == original[k] for k in got)  # byte for byte


def test_salvage_finds_the_rows_page_by_page_when_the_tables_root_is_overwritten(full_cache, tmp_path):
    from judgelab.cache.tools import salvage, scan_pages

    damaged = tmp_path / "damaged.sqlite"
    data = bytearray(full_cache.read_bytes())
    data[4096 : 4 * 4096] = bytes(3 * 4096)  # pages 2-4: the answers table's root, its index, claims
    damaged.write_bytes(bytes(data))
    report = salvage(damaged, tmp_path / "new.sqlite")
    assert (report["by_sqlite"], report["by_pages"], report["copied"]) == (0, 96, 96)
    assert _answers(tmp_path / "new.sqlite") == _answers(full_cache)
    assert sorted(rowid for _, _, rowid in scan_pages(full_cache)) == list(range(1, 97))
