"""Cache faults: a cache file that is not a database, is damaged or cannot be written gets one
error naming the file and what to do; the model-file hash memo is rebuilt when unreadable; an
answer whose write fails is kept (a pending file the next open imports, else memory) so the rerun
does not pay for it; a network filesystem under the cache is detected (a fake mount table) and WAL
refused there. Real SQLite files throughout; the full disk is SQLite's own ``max_page_count``
limit (the same SQLITE_FULL a full disk gives), the read-only cache a process without the rights."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from judgelab.cache import filehash as cache_mod
from judgelab.cache import fsdetect
from judgelab.cache.filehash import file_sha256, sha256_of_file
from judgelab.cache.keys import request_key
from judgelab.cache.pending import PendingFile
from judgelab.cache.sqlite import CacheError
from judgelab.cache.store import RequestCache, resolve_mode
from judgelab.llm.backends import make_backend
from judgelab.llm.backends.base import Backend, Completion, Request
from judgelab.llm.client import CachedClient, cache_request

SRC = Path(cache_mod.__file__).resolve().parents[2]


class Counting(Backend):
    def __init__(self):
        self.calls = 0

    def identity(self):
        return {"kind": "counting"}

    def complete(self, request):
        self.calls += 1
        return Completion(text=f"answer {request.messages[-1][1]}")


def req(text: str) -> Request:
    return Request.from_messages([{"role": "user", "content": text}], 4)


def test_a_file_that_is_not_a_database_gets_one_error_naming_it(tmp_path):
    path = tmp_path / "requests.sqlite"
    path.write_text("these are not the bytes of a database\n" * 200)
    with pytest.raises(CacheError) as err:
        RequestCache(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: opening the request cache failed: file is not a database")
    assert f"`python -m judgelab.cache.tools salvage {path}` moves it aside" in msg


def _damaged_cache(tmp_path: Path, n: int = 3000) -> Path:
    path = tmp_path / "requests.sqlite"
    with RequestCache(path) as cache:
        for i in range(n):
            cache.put(f"k{i:05d}", {"i": i}, {"text": "x" * 300})
    data = bytearray(path.read_bytes())
    page = 4096
    for off in range(page * 20, page * 60):  # overwrite pages in the middle of the table
        data[off] = 0x5A
    path.write_bytes(bytes(data))
    return path


def test_a_damaged_cache_names_the_file_and_how_to_recover(tmp_path):
    path = _damaged_cache(tmp_path)
    with pytest.raises(CacheError) as err:
        with RequestCache(path) as cache:
            for i in range(3000):
                cache.get(f"k{i:05d}")
    msg = str(err.value)
    assert msg.startswith(f"{path}: reading the request cache failed: database disk image is malformed")
    advice = f"python -m judgelab.cache.tools salvage {path}"  # in place: the WAL moves with the file
    assert f"`{advice}`" in msg
    # follow the advice (a real shell, the module's command line)
    done = subprocess.run(
        advice.replace("python", sys.executable, 1),
        shell=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["copied"] > 2000 and summary["unreadable"] > 0  # the overwritten pages are lost
    assert summary["by_sqlite"] + summary["unreadable"] == 3000  # every rowid read or counted
    assert summary["copied"] >= summary["by_sqlite"]  # the page scan adds rows, never loses one
    with RequestCache(path) as cache:
        assert len(cache) == summary["copied"]
        assert cache.get("k00000") == {"text": "x" * 300} and cache.get("k02999") == {"text": "x" * 300}


def test_salvaging_a_file_that_is_not_a_database_says_nothing_can_be_read(tmp_path):
    from judgelab.cache.tools import salvage

    bad = tmp_path / "broken.sqlite"
    bad.write_bytes(b"\0" * 8192)
    with pytest.raises(CacheError, match=f"^{bad}: nothing can be salvaged"):
        salvage(bad, tmp_path / "new.sqlite")


def _unprivileged() -> tuple[list[str], dict]:
    """How to run a child process that file permissions apply to (root ignores them)."""
    if os.geteuid() != 0:
        return [sys.executable], {}
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("running as root without a system python3 to run as 'nobody'")
    return [python], {"user": "nobody"}


def test_an_unwritable_cache_names_the_file_and_what_to_do(tmp_path):
    cmd, how = _unprivileged()
    base = Path(tempfile.mkdtemp(prefix="judgelab-ro-", dir="/tmp"))
    try:
        base.chmod(0o755)
        path = base / "cache" / "requests.sqlite"
        with RequestCache(path) as cache:
            cache.put("k", {"q": 1}, {"text": "x"})
        path.chmod(0o444)
        path.parent.chmod(0o555)
        script = (
            "import sys; sys.path.insert(0, sys.argv[1])\n"
            "from judgelab.cache.store import RequestCache, CacheError\n"
            "try:\n    RequestCache(sys.argv[2])\nexcept CacheError as exc:\n    print(exc)"
        )
        out = subprocess.run(
            [*cmd, "-c", script, str(SRC), str(path)], capture_output=True, text=True, timeout=60, **how
        )
        assert out.returncode == 0, out.stderr
        msg = out.stdout.strip()
        assert msg.startswith(f"{path}: opening the request cache failed: attempt to write a readonly")
        assert "make the file and its folder writable" in msg and "JUDGELAB_CACHE" in msg
    finally:
        for p in (base / "cache", base / "cache" / "requests.sqlite"):
            if p.exists():
                p.chmod(0o755)
        shutil.rmtree(base)


def _fill_up(cache: RequestCache) -> None:
    """Let the cache file grow by no page more: SQLite then fails writes with SQLITE_FULL, the error
    a full disk gives ("database or disk is full")."""
    conn = cache._store._conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count={pages}")


def test_answers_whose_write_fails_are_kept_and_not_paid_again(tmp_path, caplog):
    path = tmp_path / "requests.sqlite"
    backend = Counting()
    with RequestCache(path) as cache:
        client = CachedClient(backend, cache)
        client.run([req("warm")], progress=False)
        _fill_up(cache)
        with caplog.at_level(logging.ERROR, logger="judgelab.cache"):
            out = client.run([req(f"q{i} " + "y" * 2000) for i in range(5)], progress=False)
        assert [c.text[:9] for c, _ in out] == [f"answer q{i}" for i in range(5)]  # returned to the job
        assert backend.calls == 6 and cache.failed_writes == 5 and cache.unsaved == []
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1  # one error, naming the file, what failed and where the answer went
    assert errors[0].startswith(
        f"{path}: writing an answer to the request cache failed: database or disk is full"
    )
    assert f"kept in {path}.pending.jsonl" in errors[0]
    pending = Path(f"{path}.pending.jsonl")
    assert len(pending.read_text().splitlines()) == 5

    again = Counting()  # the rerun: the next open imports the pending answers
    with RequestCache(path) as cache:
        out = CachedClient(again, cache).run([req(f"q{i} " + "y" * 2000) for i in range(5)], progress=False)
    assert again.calls == 0 and all(hit for _, hit in out)
    assert not pending.exists()


def test_when_the_side_file_fails_too_answers_go_to_the_fallback_on_another_disk(
    tmp_path, monkeypatch, caplog
):
    # the cache and its side file on one full disk; the fallback folder elsewhere
    other_disk = tmp_path / "other-disk"
    monkeypatch.setenv("JUDGELAB_CACHE_FALLBACK", str(other_disk))
    path = tmp_path / "full-disk" / "requests.sqlite"
    pending = Path(f"{path}.pending.jsonl")
    requests = [req(f"q{i} " + "y" * 5000) for i in range(3)]
    with RequestCache(path) as cache:
        _fill_up(cache)
        pending.mkdir()  # the side file cannot be written either
        with caplog.at_level(logging.ERROR, logger="judgelab"):
            out = CachedClient(Counting(), cache).run(requests, progress=False)
        assert [c.text[:9] for c, _ in out] == ["answer q0", "answer q1", "answer q2"]
        assert cache.unsaved == [] and cache.failed_writes == 3
        fallback = cache.fallback.path
    assert fallback.parent == other_disk / "judgelab-pending" and fallback.name.startswith("requests.sqlite-")
    assert len(fallback.read_text(encoding="utf-8").splitlines()) == 3
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and f"kept in {fallback} (imported by the next open" in errors[0]
    pending.rmdir()
    again = Counting()  # the rerun on this host: the open imports the fallback file
    with RequestCache(path) as cache:
        out = CachedClient(again, cache).run(requests, progress=False)
    assert again.calls == 0 and all(hit for _, hit in out)
    assert not fallback.exists()


def test_when_every_place_fails_the_job_holds_its_answers_and_waits_for_space(tmp_path, monkeypatch, caplog):
    """No writable place left (cache, side file, fallback): the job stops sending, holds the paid
    answer, says how many it holds and where they will go, and writes them once space returns."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("", encoding="utf-8")  # the fallback folder cannot be made either
    monkeypatch.setenv("JUDGELAB_CACHE_FALLBACK", str(blocked))
    path = tmp_path / "requests.sqlite"
    pending = Path(f"{path}.pending.jsonl")
    backend = Counting()
    with RequestCache(path, space_wait=60) as cache:
        cache.space_poll = 0.05
        _fill_up(cache)
        pending.mkdir()
        # space returns (the side file can be written) half a second into the wait
        threading.Timer(0.5, pending.rmdir).start()
        t0 = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="judgelab"):
            out = CachedClient(backend, cache).run(
                [req("q1 " + "y" * 5000), req("q2 " + "y" * 5000)], progress=False
            )
        waited = time.monotonic() - t0
        assert [c.text[:9] for c, _ in out] == ["answer q1", "answer q2"]
        assert cache.unsaved == [] and backend.calls == 2
    assert 0.4 < waited < 30
    said = [r.getMessage() for r in caplog.records]
    held = [m for m in said if "paid answers are held in memory" in m]
    assert len(held) == 1, said  # the first answer: held until space returned, then the second went aside
    assert held[0].startswith(f"{path}: 1 paid answers are held in memory: no place could take them")
    assert "Waiting up to 60 s (config key cache_space_wait)" in held[0]
    assert f"they go to {path} (else {pending}, else {blocked}" in held[0]
    assert any(f"space again: the 1 held answers are written to {pending}" in m for m in said)
    again = Counting()  # the rerun finds both without a call
    with RequestCache(path) as cache:
        out = CachedClient(again, cache).run(
            [req("q1 " + "y" * 5000), req("q2 " + "y" * 5000)], progress=False
        )
    assert again.calls == 0 and all(hit for _, hit in out)


def test_when_the_wait_for_space_ends_the_error_names_the_answers_lost(tmp_path, monkeypatch, caplog):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("JUDGELAB_CACHE_FALLBACK", str(blocked))
    path = tmp_path / "requests.sqlite"
    pending = Path(f"{path}.pending.jsonl")
    cache = RequestCache(path, space_wait=0.3)
    cache.space_poll = 0.05
    _fill_up(cache)
    pending.mkdir()
    requests = [req("q1 " + "y" * 5000), req("q2 " + "y" * 5000)]
    with caplog.at_level(logging.ERROR, logger="judgelab"), pytest.raises(CacheError) as err:
        CachedClient(Counting(), cache).run(requests, progress=False)
    msg = str(err.value)
    key = request_key(cache_request(Counting(), requests[0]))
    assert msg.startswith(f"{path}: 1 paid answers are lost: no place could take them within 0 s (")
    assert f"a rerun pays for them again: requests {key}." in msg
    assert str(pending) in msg and "JUDGELAB_CACHE_FALLBACK" in msg and "cache_space_wait" in msg
    assert "output" not in msg  # the job failed: there is no output that holds them
    with caplog.at_level(logging.ERROR, logger="judgelab"):
        cache.close()  # one last try; still nowhere to go: not waited for, not said twice
    lost = [r.getMessage() for r in caplog.records if "paid answers are lost" in r.getMessage()]
    assert lost == [msg]


def test_an_append_that_fails_part_way_is_cut_back_so_no_line_is_torn(tmp_path, monkeypatch):
    pending = PendingFile(tmp_path / "requests.sqlite.pending.jsonl")
    pending.append([("k1", '{"q":1}', '{"text":"one"}', 1.0)])
    before = pending.path.read_bytes()

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)  # the write reached the file, its flush to disk failed
    with pytest.raises(OSError, match="No space left"):
        pending.append([("k2", '{"q":2}', '{"text":"two"}', 2.0)])
    monkeypatch.undo()
    assert pending.path.read_bytes() == before
    pending.append([("k3", '{"q":3}', '{"text":"three"}', 3.0)])
    with RequestCache(tmp_path / "requests.sqlite") as cache:
        assert cache.get("k1") == {"text": "one"} and cache.get("k3") == {"text": "three"}
        assert cache.get("k2") is None and len(cache) == 2


def test_a_cache_whose_creation_failed_before_its_tables_is_made_anew_not_refused(tmp_path, caplog):
    # the first open on a full disk: the file got its WAL-mode header, the tables never came
    path = tmp_path / "requests.sqlite"
    Path(f"{path}.creating").write_text("", encoding="utf-8")  # what the failed first open left
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    assert path.stat().st_size == 4096 and not Path(f"{path}-wal").exists()
    with caplog.at_level(logging.WARNING, logger="judgelab.cache"), RequestCache(path) as cache:
        cache.put("k", {"q": 1}, {"text": "a"})
        assert len(cache) == 1
    assert any(
        "a creation that failed left it without tables; made anew" in r.getMessage() for r in caplog.records
    )
    assert not Path(f"{path}.creating").exists()
    with RequestCache(path) as cache:  # an ordinary cache from now on
        assert cache.get("k") == {"text": "a"}


def test_the_first_open_leaves_no_creation_marker(tmp_path):
    path = tmp_path / "requests.sqlite"
    with RequestCache(path) as cache:
        assert len(cache) == 0
    assert path.exists() and not Path(f"{path}.creating").exists()


def test_a_torn_pending_line_is_set_aside_and_the_rest_imported(tmp_path, caplog):
    path = tmp_path / "requests.sqlite"
    pending = PendingFile(f"{path}.pending.jsonl")
    pending.append([("k1", '{"q":1}', '{"text":"one"}', 1.0), ("k2", '{"q":2}', '{"text":"two"}', 2.0)])
    with open(pending.path, "a") as fh:
        fh.write('{"key": "k3", "request": "{}", "resp')  # a crash in the middle of an append
    with caplog.at_level(logging.WARNING, logger="judgelab.cache.pending"), RequestCache(path) as cache:
        assert cache.get("k1") == {"text": "one"} and cache.get("k2") == {"text": "two"}
        assert len(cache) == 2
    assert any(f"{pending.path}:3: not a pending answer" in r.getMessage() for r in caplog.records)
    assert Path(f"{pending.path}.rejected").read_text().startswith('{"key": "k3"')
    assert not pending.path.exists()


@pytest.mark.parametrize("memo", [b"\xff\xfe not utf-8 \x80", b"{not json", b"[1, 2]", b'{"x": 1}'])
def test_an_unreadable_hash_memo_is_rebuilt(tmp_path, memo):
    model = tmp_path / "model.gguf"
    model.write_bytes(b"weights" * 1000)
    memo_dir = tmp_path / "cache"
    memo_dir.mkdir()
    (memo_dir / "file-hashes.json").write_bytes(memo)
    cache_mod._HASHES.clear()
    digest = file_sha256(model, memo_dir=memo_dir)
    assert digest == hashlib.sha256(model.read_bytes()).hexdigest()
    table = json.loads((memo_dir / "file-hashes.json").read_text(encoding="utf-8"))
    assert list(table.values()) == [digest]  # rebuilt: only the new entry


def test_an_unwritable_hash_memo_is_skipped(tmp_path, caplog):
    model = tmp_path / "model.gguf"
    model.write_bytes(b"weights" * 1000)
    (tmp_path / "memo" / "file-hashes.json").mkdir(parents=True)  # neither readable nor replaceable
    cache_mod._HASHES.clear()
    with caplog.at_level(logging.WARNING, logger="judgelab.cache"):
        digest = file_sha256(model, memo_dir=tmp_path / "memo")
    assert digest == hashlib.sha256(model.read_bytes()).hexdigest()
    assert any("cannot write the hash memo" in r.getMessage() for r in caplog.records)


# -- network filesystems ----------------------------------------------------------------------

MOUNTS = r"""proc /proc proc rw,relatime 0 0
/dev/vda / ext4 rw,relatime 0 0
tmpfs /tmp tmpfs rw 0 0
nas:/export/home /home nfs4 rw,vers=4.2 0 0
auto.scratch /scratch autofs rw 0 0
10.0.0.5@tcp:/lfs /scratch lustre rw,flock 0 0
storage:/proj /proj\040data nfs rw,vers=3 0 0
user@box:/srv /mnt/box fuse.sshfs rw 0 0
/dev/vdb /home/local ext4 rw 0 0
"""


@pytest.mark.parametrize(
    "path, found",
    [
        ("/home/alice/run/.judgelab-cache/requests.sqlite", ("nfs4", "/home")),
        ("/scratch/u1/cache/requests.sqlite", ("lustre", "/scratch")),  # the mount on top wins
        ("/proj data/x/requests.sqlite", ("nfs", "/proj data")),  # \040 is a space
        ("/mnt/box/requests.sqlite", ("fuse.sshfs", "/mnt/box")),
        ("/home/local/cache.sqlite", None),  # a local disk inside /home
        ("/homework/cache.sqlite", None),  # not inside /home
        ("/tmp/cache.sqlite", None),
    ],
)
def test_network_filesystems_are_detected_from_the_mount_table(path, found):
    assert fsdetect.network_filesystem(path, MOUNTS) == found


def test_this_machines_tmp_is_local(tmp_path):
    assert fsdetect.mount_of(tmp_path) is not None  # /proc/self/mounts was read
    assert fsdetect.network_filesystem(tmp_path) is None
    assert resolve_mode(tmp_path / "c.sqlite") == "wal"


def test_wal_is_refused_on_a_network_filesystem(tmp_path, monkeypatch, caplog):
    fake = tmp_path / "mounts"
    fake.write_text(f"/dev/vda / ext4 rw 0 0\nnas:/export {tmp_path} nfs4 rw 0 0\n")
    monkeypatch.setattr(fsdetect, "MOUNTS", fake)
    path = tmp_path / "cache" / "requests.sqlite"
    monkeypatch.delenv("JUDGELAB_CACHE_MODE", raising=False)
    with pytest.raises(CacheError) as err:
        RequestCache(path)
    msg = str(err.value)
    assert msg.startswith(
        f"{path}: the request cache is on a network filesystem (nfs4, mounted at {tmp_path})"
    )
    assert "JUDGELAB_CACHE_MODE=shards" in msg and "JUDGELAB_CACHE_MODE=wal" in msg
    assert not path.exists()
    # an API backend's batch state beside a cache it is not bound to opens as that cache would
    monkeypatch.setenv("JUDGELAB_CACHE", str(path))
    api = make_backend(
        {"backend": "openai", "model": "m", "api_key_env": None, "base_url": "http://127.0.0.1:9/v1"}
    )
    with pytest.raises(CacheError, match="on a network filesystem"):
        api._batch_store()

    monkeypatch.setenv("JUDGELAB_CACHE_MODE", "shards")
    with RequestCache(path) as cache:
        assert cache.mode == "shards"
        cache.put("k", {"q": 1}, {"text": "x"})
        assert cache.get("k") == {"text": "x"}
        api.bind_cache(cache)
        store = api._batch_store()  # beside a shards cache: no WAL
        assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        store.close()
    assert len(list(Path(f"{path}.d").glob("*.sqlite"))) == 1 and not path.exists()

    monkeypatch.setenv("JUDGELAB_CACHE_MODE", "wal")  # explicit: one host only, allowed with a warning
    with caplog.at_level(logging.WARNING, logger="judgelab.cache"), RequestCache(path) as cache:
        assert cache.mode == "wal"
    assert any("WAL mode was asked for explicitly" in r.getMessage() for r in caplog.records)

    monkeypatch.setenv("JUDGELAB_CACHE_MODE", "nfs-safe")
    with pytest.raises(CacheError, match="JUDGELAB_CACHE_MODE 'nfs-safe' is not a cache mode"):
        RequestCache(path)


def test_a_damaged_shard_of_another_process_is_skipped_not_fatal(tmp_path, caplog):
    path = tmp_path / "requests.sqlite"
    with RequestCache(path, mode="shards") as cache:
        cache.put("k1", {"q": 1}, {"text": "one"})
    (Path(f"{path}.d") / "otherhost-1-deadbeef.sqlite").write_text("garbage, not a database\n" * 100)
    with (
        caplog.at_level(logging.WARNING, logger="judgelab.cache.shards"),
        RequestCache(path, mode="shards") as cache,
    ):
        assert cache.get("k1") == {"text": "one"}
        assert cache.get("k2") is None
    assert any(
        "otherhost-1-deadbeef.sqlite: cannot read this shard" in r.getMessage() for r in caplog.records
    )


def test_the_file_digest_is_hashlibs_over_block_boundaries(tmp_path):
    """judgelab.cache.filehash.sha256_of_file, the package's one file digest (model files, the
    ranking score cache's run files, downloads), equals hashlib's over the whole bytes: empty, one
    byte, a 1 MB block exactly, a block and one byte."""
    for size in (0, 1, 1 << 20, (1 << 20) + 1):
        data = os.urandom(size)
        path = tmp_path / f"f{size}"
        path.write_bytes(data)
        assert sha256_of_file(path) == hashlib.sha256(data).hexdigest(), size
