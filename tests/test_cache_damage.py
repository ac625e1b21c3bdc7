"""Damage the request cache can suffer and what follows (issue 38, cases 1, 3 and 4): every
stored answer carries a digest of its key and answer, checked when it is read - a damaged answer
is never served: it is asked again (one more paid call, logged naming the file and the entry)
and the new answer replaces it; `judgelab cache check` reads the file with its WAL in memory,
runs SQLite's integrity check and every digest, writes nothing anywhere and exits 0 (complete),
1 (sound, but the named file alone is not complete) or 2 (damaged); salvage keeps only intact
answers and says how many it dropped and why; a cache written before digests stays readable.

The answers come from the counting fake OpenAI-compatible server through the real openai backend
(request building, parsing), so the calls paid are counted; the WAL replay of the check is
compared with SQLite's own reading of a copy of the file and its WAL."""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, ServerThread, expected_label

from judgelab.cache.keys import request_key
from judgelab.cache.pending import PendingFile
from judgelab.cache.sqlite import CacheError
from judgelab.cache.store import RequestCache
from judgelab.cache.tools import check, salvage
from judgelab.llm.backends.base import Request
from judgelab.llm.client import cache_request
from judgelab.llm.session import LLMSession

SRC = Path(__file__).resolve().parents[1] / "workflow" / "src"
SPEC = {"backend": "openai", "model": "fake-judge", "api_key_env": None, "concurrency": 2}


def prompts_with(label: int, n: int, also: int = 0) -> list[str]:
    """``n`` prompts the fake server answers with ``label`` (its label is the prompt's SHA-256
    mod 4), then ``also`` prompts with other labels."""
    out, other, i = [], [], 0
    while len(out) < n or len(other) < also:
        prompt = f"Is passage {i} relevant? Answer 0-3."
        (out if expected_label(prompt) == label else other).append(prompt)
        i += 1
    return out[:n] + other[:also]


def requests_of(prompts: list[str]) -> list[Request]:
    return [Request.from_messages([{"role": "user", "content": p}], 4) for p in prompts]


def ask(server: ServerThread, cache: Path, prompts: list[str]) -> list[str]:
    """The answers' texts of one job asking ``prompts`` through the cache."""
    with LLMSession({**SPEC, "base_url": server.base_url}, str(cache), name="fake") as client:
        return [c.text for c, _ in client.run(requests_of(prompts), progress=False)]


def key_of(server: ServerThread, prompt: str) -> str:
    with LLMSession({**SPEC, "base_url": server.base_url}, None, name="fake") as client:
        return request_key(cache_request(client.backend, requests_of([prompt])[0]))


def rewrite_in_file(path: Path, old: bytes, new: bytes) -> None:
    """Replace the one occurrence of ``old`` in the file with ``new`` (same length), in place."""
    data = path.read_bytes()
    assert len(old) == len(new) and data.count(old) == 1, data.count(old)
    path.write_bytes(data.replace(old, new))


def stored(path: Path, key: str) -> str:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()[0]


def cli(*args: str) -> subprocess.CompletedProcess:
    """``judgelab`` on the command line (this checkout's code)."""
    return subprocess.run(
        [sys.executable, "-m", "judgelab.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=120,
    )


def copy_cache(path: Path, folder: Path) -> Path:
    """A copy of a closed cache file (no WAL beside it) in ``folder``."""
    assert not Path(f"{path}-wal").exists()
    folder.mkdir()
    return Path(shutil.copy(path, folder / path.name))


def files_beside(path: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted(path.parent.iterdir()) if f.is_file()}


@pytest.fixture(scope="module")
def server():
    fake = FakeOpenAI()
    with ServerThread(fake.app()) as srv:
        srv.fake = fake  # type: ignore[attr-defined]
        yield srv


# -- case 3: a flipped byte in a stored answer, a byte that breaks an entry's JSON ------------------


def test_a_flipped_answer_byte_is_never_served_but_asked_again(server, tmp_path, caplog):
    fake: FakeOpenAI = server.fake
    path = tmp_path / "cache" / "requests.sqlite"
    prompts = prompts_with(2, 1, also=5)
    assert ask(server, path, prompts)[0] == "2"
    key = key_of(server, prompts[0])
    answer = stored(path, key)
    assert '"text":"2"' in answer
    rewrite_in_file(path, answer.encode(), answer.replace('"text":"2"', '"text":"3"').encode())
    before_run = copy_cache(path, tmp_path / "as-damaged")

    before = fake.served[prompts[0]]
    with caplog.at_level(logging.WARNING, logger="judgelab.cache"):
        assert ask(server, path, prompts)[0] == "2"  # the true answer, never the flipped "3"
    assert fake.served[prompts[0]] == before + 1  # asked again: one more paid call
    assert all(fake.served[p] == 1 for p in prompts[1:])  # the others were cache hits
    warned = [r.getMessage() for r in caplog.records if "is damaged" in r.getMessage()]
    assert warned and warned[0].startswith(
        f"{path}: the stored answer of request {key} is damaged (its digest does not match its content); "
        "it is not served: the request is asked again"
    )

    report = cli("cache", "check", "--cache", str(before_run))  # check, on the cache as it was
    assert report.returncode == 2, report.stdout + report.stderr
    summary = json.loads(report.stdout)
    assert summary["status"] == "damaged" and summary["damaged_entries"] == 1
    assert summary["damaged"] == [{"key": key, "why": "its digest does not match its content"}]
    assert summary["integrity"] == []  # SQLite's own check cannot see it: only the digest does
    assert '"text":"2"' in stored(path, key)  # the new answer replaced the damaged one
    assert ask(server, path, prompts)[0] == "2" and fake.served[prompts[0]] == before + 1
    assert cli("cache", "check", "--cache", str(path)).returncode == 0


def legacy(path: Path) -> None:
    """Turn a cache into one written before digests existed: the table without the column."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        if "digest" in [r[1] for r in conn.execute("PRAGMA table_info(responses)")]:
            conn.execute("ALTER TABLE responses DROP COLUMN digest")
        assert "digest" not in [r[1] for r in conn.execute("PRAGMA table_info(responses)")]
    assert not Path(f"{path}-wal").exists()  # closed: everything is in the named file


def test_a_cache_written_before_digests_stays_readable_and_trusted(server, tmp_path):
    fake: FakeOpenAI = server.fake
    path = tmp_path / "old" / "requests.sqlite"
    prompts = prompts_with(1, 3, also=3)
    first = ask(server, path, prompts)
    legacy(path)
    summary = check(path)
    assert (summary["status"], summary["entries"], summary["legacy_entries"]) == ("complete", 6, 6)
    paid = sum(fake.served[p] for p in prompts)
    assert ask(server, path, prompts) == first  # every answer served from the old cache
    assert sum(fake.served[p] for p in prompts) == paid
    # the open gave the table its digest column; the old rows keep none (trusted as they are)
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM responses WHERE digest IS NULL").fetchone()[0] == 6
    assert check(path)["legacy_entries"] == 6
    # salvage copies legacy answers too, with a digest from now on
    report = salvage(path, tmp_path / "new.sqlite")
    assert (report["copied"], report["dropped"]) == (6, 0)
    assert check(tmp_path / "new.sqlite")["legacy_entries"] == 0


@pytest.mark.parametrize("digests", [True, False])
def test_an_answer_whose_json_is_broken_names_the_file_and_entry_and_is_asked_again(
    server, tmp_path, caplog, digests
):
    """A byte that breaks a stored answer's JSON: no bare JSONDecodeError naming no file; the log
    names the file and the entry, and the request is asked again. With a digest, the digest finds
    it; in a legacy answer (no digest), the JSON reader does."""
    fake: FakeOpenAI = server.fake
    path = tmp_path / "c" / "requests.sqlite"
    prompts = prompts_with(0, 1, also=3)
    ask(server, path, prompts)
    if not digests:
        legacy(path)
    key = key_of(server, prompts[0])
    answer = stored(path, key)
    rewrite_in_file(path, answer.encode(), answer.replace('{"', "{'", 1).encode())
    why = "its digest does not match its content" if digests else "its answer is not JSON (Expecting"
    before_run = copy_cache(path, tmp_path / "as-damaged")

    paid = [fake.served[p] for p in prompts]
    with caplog.at_level(logging.WARNING, logger="judgelab.cache"):
        assert ask(server, path, prompts)[0] == "0"
    assert [fake.served[p] for p in prompts] == [paid[0] + 1, *paid[1:]]
    said = [r.getMessage() for r in caplog.records if "is damaged" in r.getMessage()]
    assert said and said[0].startswith(f"{path}: the stored answer of request {key} is damaged ({why}")

    summary = check(before_run)
    assert summary["status"] == "damaged" and summary["damaged_entries"] == 1
    assert summary["damaged"][0]["key"] == key and summary["damaged"][0]["why"].startswith(why)
    assert check(path)["status"] == "complete"


def test_answer_text_that_is_not_utf8_is_a_damaged_entry_not_a_crash(tmp_path):
    path = tmp_path / "requests.sqlite"
    with RequestCache(path) as cache:
        cache.put("k1", {"q": 1}, {"text": "caf\u00e9 au lait"})
        cache.put("k2", {"q": 2}, {"text": "two"})
    rewrite_in_file(path, "caf\u00e9".encode(), b"caf\xff\xfe")  # no longer UTF-8
    summary = check(path)
    assert summary["damaged"] == [{"key": "k1", "why": "its digest does not match its content"}]
    with RequestCache(path) as cache:
        assert cache.get("k1") is None and cache.get("k2") == {"text": "two"}
        cache.put("k1", {"q": 1}, {"text": "asked again"})
        assert cache.get("k1") == {"text": "asked again"}


def test_random_bytes_in_the_middle_of_a_finished_cache_fail_the_check(tmp_path):
    """1 KB of random bytes written into the middle of a finished cache: `check` exits non-zero,
    and its verdict agrees with the next run: every answer it calls intact is served as it was
    stored, a damaged one is not served, and a run can stop only where SQLite finds damage."""
    path = tmp_path / "requests.sqlite"
    answers = {f"{i:064x}": {"text": str(i % 4), "pad": "p" * (i % 700)} for i in range(300)}
    with RequestCache(path) as cache:
        for key, answer in answers.items():
            cache.put(key, {"i": key}, answer)
    assert cli("cache", "check", "--cache", str(path)).returncode == 0
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 1024] = random.Random(38).randbytes(1024)
    path.write_bytes(bytes(data))

    report = cli("cache", "check", "--cache", str(path))
    assert report.returncode == 2, report.stdout + report.stderr
    summary = json.loads(report.stdout)
    assert summary["status"] == "damaged" and (summary["integrity"] or summary["damaged_entries"])
    assert "complete" not in summary["advice"].split(":")[0]
    named = {d["key"] for d in summary["damaged"]}
    with RequestCache(path) as cache:
        for key, answer in answers.items():
            try:
                got = cache.get(key)
            except CacheError as exc:
                assert summary["integrity"], "a run stopped where check saw no damage"
                assert "python -m judgelab.cache.tools salvage" in str(exc)
                continue
            assert got in (answer, None)
            if got is None and summary["damaged_entries"] <= 10:
                assert key in named or summary["integrity"]


# -- case 4 and the rest of `check`: it writes nothing -------------------------------------------


def test_check_on_a_cache_whose_creation_failed_leaves_it_byte_for_byte(tmp_path):
    path = tmp_path / "requests.sqlite"
    Path(f"{path}.creating").write_text("", encoding="utf-8")  # what a first open on a full disk left
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    before = files_beside(path)
    assert path.stat().st_size == 4096
    report = cli("cache", "check", "--cache", str(path))
    assert files_beside(path) == before  # nothing made, removed or cut: not even a -shm
    assert report.returncode == 1, report.stdout + report.stderr
    summary = json.loads(report.stdout)
    assert summary["entries"] == 0 and "made anew" not in report.stderr
    assert summary["advice"].startswith("its creation failed (a full disk?) before its tables were written")
    with RequestCache(path) as cache:  # what the next open does, as check said: made anew
        assert len(cache) == 0


def _crashed_writer(path: Path, n: int, *, spill: int = 0) -> None:
    """A process that writes ``n`` answers and dies without closing (kill -9 alike): they stay in
    the WAL beside the file. ``spill``: then, in one transaction it never commits, ``spill``
    more with a tiny page cache, so SQLite writes uncommitted frames to the WAL."""
    code = (
        "import os, sys\n"
        "from judgelab.cache.store import RequestCache\n"
        "c = RequestCache(sys.argv[1])\n"
        "c._store._conn.execute('PRAGMA wal_autocheckpoint=0')\n"
        f"[c.put(f'k{{i}}', {{'i': i}}, {{'text': str(i) * (1 + i % 900)}}) for i in range({n})]\n"
        "conn = c._store._conn\n"
        "conn.execute('PRAGMA cache_size=2'); conn.execute('BEGIN')\n"
        f"[conn.execute('INSERT INTO responses VALUES (?, ?, ?, ?, NULL)', (f'u{{i}}', '{{}}', 'x' * 3000, 0.0)) for i in range({spill})]\n"
        "os._exit(0)\n"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(path)], check=True, env={**os.environ, "PYTHONPATH": str(SRC)}
    )


def _sqlite_reads(path: Path, tmp_path: Path) -> dict[str, str]:
    """What SQLite itself reads from a copy of the file with its WAL (not its -shm)."""
    copy = tmp_path / f"copy-{len(list(tmp_path.iterdir()))}" / path.name
    copy.parent.mkdir()
    shutil.copy(path, copy)
    if Path(f"{path}-wal").exists():
        shutil.copy(f"{path}-wal", f"{copy}-wal")
    with closing(sqlite3.connect(copy)) as conn:
        return dict(conn.execute("SELECT key, response FROM responses"))


@pytest.mark.parametrize("tail", ["", "torn", "uncommitted"])
def test_check_reads_the_wal_as_sqlite_does_and_writes_nothing(tmp_path, tail):
    path = tmp_path / "c" / "requests.sqlite"
    _crashed_writer(path, 120, spill=60 if tail == "uncommitted" else 0)
    wal = Path(f"{path}-wal")
    if tail == "torn":  # a frame whose checksum fails, and one cut short: SQLite ignores both
        with open(wal, "ab") as fh:
            fh.write(wal.read_bytes()[32 : 32 + 2 * (24 + 4096) - 1500])
    before = files_beside(path)
    assert f"{path.name}-shm" in before
    summary = check(path)
    assert files_beside(path) == before
    truth = _sqlite_reads(path, tmp_path)
    assert len(truth) == 120
    from judgelab.cache.readonly import open_as_a_job_would

    conn, frames = open_as_a_job_would(path)
    with conn:
        assert dict(conn.execute("SELECT key, response FROM responses")) == truth
    assert frames.frames > 0 and (frames.ignored > 0) == (tail != "")
    assert (summary["entries"], summary["named_file_entries"], summary["status"]) == (120, 0, "incomplete")
    assert summary["wal_frames"] == frames.frames and summary["integrity"] == []


def test_check_without_the_shm_creates_none(tmp_path):
    path = tmp_path / "c" / "requests.sqlite"
    _crashed_writer(path, 10)
    Path(f"{path}-shm").unlink()
    before = files_beside(path)
    assert cli("cache", "check", "--cache", str(path)).returncode == 1
    assert files_beside(path) == before


# -- case 1, in the small: answers only in the WAL, and the salvage command ----------------------


def test_salvage_in_place_keeps_the_wal_with_its_file(tmp_path):
    path = tmp_path / "c" / "requests.sqlite"
    _crashed_writer(path, 16)  # every answer in the WAL, none in the named file
    report = json.loads(
        subprocess.run(
            [sys.executable, "-m", "judgelab.cache.tools", "salvage", str(path)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": str(SRC)},
        ).stdout
    )
    assert (report["copied"], report["dropped"], report["dest"]) == (16, 0, str(path))
    assert report["wal_frames"] > 0
    assert Path(f"{path}.broken").exists() and Path(f"{path}.broken-wal").exists()
    with RequestCache(path) as cache:
        assert len(cache) == 16 and cache.get("k15") == {"text": "15" * 16}
    from judgelab.cache.tools import salvage_in_place

    with pytest.raises(CacheError, match="requests.sqlite.broken is in the way"):
        salvage_in_place(path)


def test_salvage_refuses_a_new_file_beside_the_wal_of_the_one_moved_away(tmp_path):
    """The command printed before: `mv X X.broken && salvage X.broken X` left X-wal behind, and the
    new X would have opened with it. Now salvage stops and says what to do; nothing is lost."""
    path = tmp_path / "c" / "requests.sqlite"
    _crashed_writer(path, 16)
    path.rename(f"{path}.broken")
    with pytest.raises(CacheError) as err:
        salvage(f"{path}.broken", path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: requests.sqlite-wal lies beside no file")
    assert f"mv {path}-wal {path}.broken-wal" in msg
    assert not path.exists()
    Path(f"{path}-wal").rename(f"{path}.broken-wal")
    Path(f"{path}-shm").rename(f"{path}.broken-shm")
    assert salvage(f"{path}.broken", path)["copied"] == 16


def test_salvage_keeps_only_intact_answers_and_says_how_many_it_dropped_and_why(tmp_path):
    path = tmp_path / "requests.sqlite"
    with RequestCache(path) as cache:
        for i in range(50):
            cache.put(f"k{i:02d}", {"i": i}, {"text": f"answer {i:02d} " + "z" * 100})
    rewrite_in_file(path, b'"answer 07 ', b'"answer 08 ')  # a digest no longer holds
    rewrite_in_file(path, b'"answer 31 ', b'"answer 13 ')
    report = salvage(path, tmp_path / "new.sqlite")
    assert (report["copied"], report["dropped"]) == (48, 2)
    assert report["dropped_why"] == {"its digest does not match its content": 2}
    with RequestCache(tmp_path / "new.sqlite") as cache:
        assert cache.get("k07") is None and cache.get("k31") is None
        assert cache.get("k08") == {"text": "answer 08 " + "z" * 100}


# -- the other places an answer is kept ------------------------------------------------------------


def test_a_pending_line_whose_digest_does_not_hold_is_rejected(tmp_path, caplog):
    from judgelab.cache.sqlite import entry_digest

    path = tmp_path / "requests.sqlite"
    pending = PendingFile(f"{path}.pending.jsonl")
    pending.append([("k1", '{"q":1}', '{"text":"2"}', 1.0), ("k2", '{"q":2}', '{"text":"1"}', 2.0)])
    text = pending.path.read_text(encoding="utf-8")
    assert (
        f'"digest": "{entry_digest("k1", chr(123) + chr(34) + "text" + chr(34) + ":" + chr(34) + "2" + chr(34) + chr(125))}"'
        in text
    )
    pending.path.write_text(
        text.replace('"{\\"text\\":\\"2\\"}"', '"{\\"text\\":\\"3\\"}"'), encoding="utf-8"
    )
    # a line written before digests existed is imported as it is
    with open(pending.path, "a", encoding="utf-8") as fh:
        fh.write(
            json.dumps({"key": "k3", "request": "{}", "response": '{"text":"0"}', "created": 3.0}) + "\n"
        )
    with caplog.at_level(logging.WARNING, logger="judgelab.cache"), RequestCache(path) as cache:
        assert cache.get("k1") is None
        assert cache.get("k2") == {"text": "1"} and cache.get("k3") == {"text": "0"}
    assert any(
        f"{pending.path}:1: not a pending answer (its digest does not match its content)" in r.getMessage()
        for r in caplog.records
    )
    assert '\\"3\\"' in Path(f"{pending.path}.rejected").read_text(encoding="utf-8")


def test_shards_mode_skips_a_damaged_answer_and_merge_leaves_it_behind(tmp_path, caplog):
    path = tmp_path / "requests.sqlite"
    with RequestCache(path, mode="shards") as cache:
        cache.put("k1", {"q": 1}, {"text": "2"})
        cache.put("k2", {"q": 2}, {"text": "1"})
    (shard,) = Path(f"{path}.d").glob("*.sqlite")
    rewrite_in_file(shard, b'{"text":"2"}', b'{"text":"3"}')
    with (
        caplog.at_level(logging.WARNING, logger="judgelab.cache"),
        RequestCache(path, mode="shards") as cache,
    ):
        assert cache.get("k1") is None and cache.get("k2") == {"text": "1"}
        cache.put("k1", {"q": 1}, {"text": "2"})  # asked again: into this process's own shard
        assert cache.get("k1") == {"text": "2"}
    assert any(
        f"{shard}: the stored answer of request k1 is damaged" in r.getMessage() for r in caplog.records
    )
    from judgelab.cache.shards import merge_shards

    report = merge_shards(path)
    assert report["damaged"] == 1 and report["added"] == 2
    with RequestCache(path, mode="shards") as cache:
        assert cache.get("k1") == {"text": "2"} and cache.get("k2") == {"text": "1"}
    assert check(path)["status"] == "complete"
