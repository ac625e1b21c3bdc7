"""A request in flight is paid once: separate processes asking the same uncached requests through
one cache make each call exactly once (a claim with a lease in the cache), a claim of a process
killed with SIGKILL on this host is taken over at once (another host's only when its lease runs out), a lease is renewed while its owner
works, and a failed call releases its claims at once. Real processes (multiprocessing, spawn),
real SQLite files; the backend counts the calls that reach it in a file. The same in ``shards``
mode (the multi-node layout), with the shards merged afterwards."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgelab.cache import filehash as cache_mod
from judgelab.cache.claims import owner_gone
from judgelab.cache.keys import request_key
from judgelab.cache.shards import merge_shards, shard_folder
from judgelab.cache.store import RequestCache
from judgelab.llm.backends.base import Backend, Completion, Request
from judgelab.llm.client import CachedClient, cache_request

CTX = mp.get_context("spawn")


class Counting(Backend):
    """Answers after ``delay`` seconds; appends ``start <pid> <text>`` to ``count_file`` when a call
    begins (a paid call) and ``done <pid> <text>`` when it ends; raises after ``fail_after`` s."""

    def __init__(self, count_file: str, delay: float, fail_after: float | None = None):
        self.count_file, self.delay, self.fail_after = count_file, delay, fail_after

    def identity(self):
        return {"kind": "counting", "model": "m"}

    def _log(self, what: str, text: str) -> None:
        with open(self.count_file, "a", encoding="utf-8") as fh:
            fh.write(f"{what} {os.getpid()} {text}\n")

    def complete(self, request):
        text = request.messages[-1][1]
        self._log("start", text)
        if self.fail_after is not None:
            time.sleep(self.fail_after)
            raise RuntimeError("provider error")
        time.sleep(self.delay)
        self._log("done", text)
        return Completion(text=f"answer to {text}")


def req(text: str) -> Request:
    return Request.from_messages([{"role": "user", "content": text}], 4)


def _ask(
    cache_path: str,
    mode: str,
    lease: float,
    count_file: str,
    texts: list[str],
    delay: float,
    barrier,
    out_file: str,
    fail_after: float | None = None,
) -> None:
    """One process: ask ``texts`` through a CachedClient, write what it got to ``out_file``."""
    backend = Counting(count_file, delay, fail_after)
    with RequestCache(cache_path, mode=mode, lease=lease) as cache:
        client = CachedClient(backend, cache)
        client.poll_max = 0.2
        if barrier is not None:
            barrier.wait(60)
        t0 = time.monotonic()
        try:
            out = client.run([req(t) for t in texts], progress=False)
            result = {"texts": [c.text for c, _ in out], "hits": [h for _, h in out]}
        except RuntimeError as exc:
            result = {"error": str(exc)}
        result.update(calls=client.calls, waited=client.waited, elapsed=time.monotonic() - t0)
    Path(out_file).write_text(json.dumps(result))


def starts(count_file: Path) -> list[str]:
    if not count_file.exists():
        return []
    return [line for line in count_file.read_text().splitlines() if line.startswith("start")]


def run_two(
    tmp_path: Path,
    texts_a: list[str],
    texts_b: list[str],
    *,
    delay: float,
    mode: str = "wal",
    lease: float = 30.0,
) -> tuple[dict, dict, Path]:
    cache, count = tmp_path / "cache" / "requests.sqlite", tmp_path / "calls.txt"
    barrier = CTX.Barrier(2)
    procs = [
        CTX.Process(
            target=_ask,
            args=(str(cache), mode, lease, str(count), texts, delay, barrier, str(tmp_path / f"out{i}.json")),
        )
        for i, texts in enumerate((texts_a, texts_b))
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    return (
        json.loads((tmp_path / "out0.json").read_text()),
        json.loads((tmp_path / "out1.json").read_text()),
        count,
    )


def test_two_processes_asking_the_same_uncached_request_pay_once(tmp_path):
    a, b, count = run_two(tmp_path, ["q1"], ["q1"], delay=1.5)
    assert len(starts(count)) == 1  # one real call for two askers
    assert a["texts"] == b["texts"] == ["answer to q1"]
    assert sorted([a["calls"], b["calls"]]) == [0, 1]
    waiter = a if a["calls"] == 0 else b
    assert waiter["hits"] == [True] and waiter["waited"] == 1
    with sqlite3.connect(tmp_path / "cache" / "requests.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 1
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0  # released


def test_overlapping_request_lists_share_the_work_and_pay_each_once(tmp_path):
    texts = [f"q{i}" for i in range(40)]
    a, b, count = run_two(tmp_path, texts, list(reversed(texts)), delay=0.1)
    calls = starts(count)
    assert len(calls) == 40 and len({c.split()[2] for c in calls}) == 40
    assert a["texts"] == [f"answer to {t}" for t in texts]
    assert b["texts"] == [f"answer to {t}" for t in reversed(texts)]
    assert a["calls"] + b["calls"] == 40
    assert a["calls"] > 0 and b["calls"] > 0  # both worked, neither only waited


def _claim_holders(cache: Path, mode: str) -> list[tuple[str, float]]:
    """(owner, expiry) of every claim, read straight from the files."""
    if mode == "wal":
        with sqlite3.connect(cache) as db:
            return db.execute("SELECT owner, expires FROM claims").fetchall()
    out = []
    for f in (shard_folder(cache) / "claims").iterdir():
        obj = json.loads(f.read_text())
        out.append((obj["owner"], f.stat().st_mtime + obj["lease"]))
    return out


@pytest.mark.parametrize("mode", ["wal", "shards"])
def test_claim_of_a_killed_process_on_this_host_is_taken_over_at_once(tmp_path, mode):
    cache, count = tmp_path / "requests.sqlite", tmp_path / "calls.txt"
    lease = 30.0  # the dead owner's claim is still within its lease when the taker asks
    owner = CTX.Process(
        target=_ask,
        args=(str(cache), mode, lease, str(count), ["q1"], 600.0, None, str(tmp_path / "killed.json")),
    )
    owner.start()
    deadline = time.monotonic() + 60
    while not starts(count) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(starts(count)) == 1  # the owner is inside its (endless) call, holding the claim
    ((holder, expires),) = _claim_holders(cache, mode)
    assert holder.split(":")[3] == str(owner.pid) and expires > time.time()
    assert not owner_gone(holder)
    os.kill(owner.pid, signal.SIGKILL)
    owner.join(10)
    assert owner.exitcode == -signal.SIGKILL
    assert owner_gone(holder)  # this host, this boot, this PID namespace: its process is gone

    _ask(str(cache), mode, lease, str(count), ["q1"], 0.0, None, str(tmp_path / "taker.json"))
    taker = json.loads((tmp_path / "taker.json").read_text())
    assert taker["texts"] == ["answer to q1"] and taker["calls"] == 1
    assert taker["elapsed"] < 5.0  # taken over at once, not after the 30 s lease
    assert len(starts(count)) == 2  # the dead owner's call (never answered) and the taker's
    assert _claim_holders(cache, mode) == []


@pytest.mark.parametrize("mode", ["wal", "shards"])
def test_a_claim_of_another_host_is_taken_over_only_after_its_lease(tmp_path, mode):
    """Where the owner cannot be proven gone (another host), the lease rule stays."""
    cache, count = tmp_path / "requests.sqlite", tmp_path / "calls.txt"
    lease = 1.5
    with RequestCache(cache, mode=mode, lease=lease) as c:
        key = request_key(cache_request(Counting(str(count), 0.0), req("q1")))
        other = c.owner.split(":")
        other[0] = "another-node"
        c._store.claim([key], 1, ":".join(other), lease)  # a live-looking claim of another node
    assert not owner_gone(":".join(other))
    t0 = time.monotonic()
    _ask(str(cache), mode, lease, str(count), ["q1"], 0.0, None, str(tmp_path / "taker.json"))
    taker = json.loads((tmp_path / "taker.json").read_text())
    assert taker["texts"] == ["answer to q1"] and taker["calls"] == 1
    assert lease - 0.5 <= time.monotonic() - t0 < lease + 5.0  # waited for the lease, then took over


@pytest.mark.parametrize("mode", ["wal", "shards"])
def test_lease_is_renewed_while_the_owner_works(tmp_path, mode):
    """A call that lasts 4 x the lease: the owner's renewals keep the second asker waiting."""
    a, b, count = run_two(tmp_path, ["q1"], ["q1"], delay=2.4, lease=0.6, mode=mode)
    assert len(starts(count)) == 1
    assert a["texts"] == b["texts"] == ["answer to q1"]


def test_a_failed_call_releases_its_claim_at_once(tmp_path):
    cache, count = tmp_path / "requests.sqlite", tmp_path / "calls.txt"
    failing = CTX.Process(
        target=_ask,
        args=(str(cache), "wal", 60.0, str(count), ["q1"], 0.0, None, str(tmp_path / "failed.json"), 1.0),
    )
    failing.start()
    deadline = time.monotonic() + 60
    while not starts(count) and time.monotonic() < deadline:
        time.sleep(0.05)
    _ask(str(cache), "wal", 60.0, str(count), ["q1"], 0.0, None, str(tmp_path / "second.json"))
    failing.join(30)
    second = json.loads((tmp_path / "second.json").read_text())
    assert json.loads((tmp_path / "failed.json").read_text())["error"] == "provider error"
    assert second["texts"] == ["answer to q1"] and second["calls"] == 1
    assert second["elapsed"] < 10.0  # far less than the 60 s lease: released on the error


class Chunks(Backend):
    """Records the sizes of the lists handed to complete_many."""

    def __init__(self, settings=None):
        self.sizes: list[int] = []
        if settings is not None:
            self.settings = settings

    def identity(self):
        return {"kind": "chunks"}

    def complete(self, request):
        return Completion(text="x")

    def complete_many(self, requests):
        self.sizes.append(len(requests))
        return super().complete_many(requests)


class Settings:
    def __init__(self, concurrency: int, batch: bool):
        self.concurrency, self.batch = concurrency, batch


@pytest.mark.parametrize(
    "settings, sizes",
    [
        (None, [16, 16, 8]),
        (Settings(2, False), [16, 16, 8]),
        (Settings(4, False), [32, 8]),
        (Settings(2, True), [40]),
    ],
)
def test_misses_are_claimed_and_sent_in_chunks(tmp_path, settings, sizes):
    backend = Chunks(settings)
    with RequestCache(tmp_path / "c.sqlite") as cache:
        CachedClient(backend, cache).run([req(f"q{i}") for i in range(40)], progress=False)
    assert backend.sizes == sizes


class Streaming(Chunks):
    """An online backend that takes its requests one by one (as an API backend's workers do):
    records how many it took in each call, and how many claims the cache held as it took each."""

    def __init__(self, settings, cache):
        super().__init__(settings)
        self.cache, self.held = cache, []

    def streams_requests(self):
        return True

    def complete_many(self, requests):
        taken = 0
        for i, r in enumerate(requests):
            taken += 1
            self.held.append(len(self.cache._held))
            yield i, self.complete(r)
        self.sizes.append(taken)


def test_a_streaming_backend_gets_the_next_chunk_claimed_as_it_reaches_it(tmp_path):
    """No drain between chunks: one call takes all 40 misses, claimed 16 at a time (8 x the
    concurrency 2) as the stream reaches them; the answered keys' claims are released at each
    chunk boundary and every claim at the end."""
    with RequestCache(tmp_path / "c.sqlite") as cache:
        backend = Streaming(Settings(2, False), cache)
        claims = []
        real = cache.claim

        def spy(keys, limit=None):
            got = real(keys, limit=limit)
            claims.append(len(got.mine))
            return got

        cache.claim = spy
        out = CachedClient(backend, cache).run([req(f"q{i}") for i in range(40)], progress=False)
        assert backend.sizes == [40] and claims == [16, 16, 8]
        # never more than one chunk (and the request being answered) held at once
        assert max(backend.held) <= 16 and cache._held == set()
        assert [c.text for c, hit in out] == ["x"] * 40 and not any(hit for _, hit in out)
    with RequestCache(tmp_path / "c.sqlite") as cache:
        again = Streaming(Settings(2, False), cache)
        out = CachedClient(again, cache).run([req(f"q{i}") for i in range(40)], progress=False)
        assert again.sizes == [] and all(hit for _, hit in out)


def test_cache_hits_claim_nothing(tmp_path):
    with RequestCache(tmp_path / "c.sqlite") as cache:
        CachedClient(Chunks(), cache).run([req("a"), req("b")], progress=False)
    with RequestCache(tmp_path / "c.sqlite") as cache:
        backend = Chunks()
        out = CachedClient(backend, cache).run([req("a"), req("b")], progress=False)
        assert [hit for _, hit in out] == [True, True] and backend.sizes == []
        assert cache._keeper is None  # no claim made, so no lease thread started


def test_shards_mode_two_processes_pay_once_and_merge(tmp_path):
    """The multi-node layout on one machine: two processes, each writing its own shard, claims as
    files; every request is paid once, both get every answer; merging folds the shards into the
    main file, which a fresh process then answers from without a call."""
    texts = [f"q{i}" for i in range(12)]
    a, b, count = run_two(tmp_path, texts, texts, delay=0.15, mode="shards")
    assert len(starts(count)) == 12
    assert a["texts"] == b["texts"] == [f"answer to {t}" for t in texts]
    assert a["calls"] + b["calls"] == 12
    main = tmp_path / "cache" / "requests.sqlite"
    shards = sorted(shard_folder(main).glob("*.sqlite"))
    assert 1 <= len(shards) <= 2 and not main.exists()
    assert list((shard_folder(main) / "claims").iterdir()) == []  # every claim released

    summary = merge_shards(main)
    assert summary["added"] == 12 and summary["in_use"] == [] and len(summary["removed"]) == len(shards)
    assert list(shard_folder(main).glob("*.sqlite")) == []
    with sqlite3.connect(main) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 12

    _ask(str(main), "shards", 30.0, str(count), texts, 0.0, None, str(tmp_path / "after.json"))
    after = json.loads((tmp_path / "after.json").read_text())
    assert after["calls"] == 0 and all(after["hits"]) and len(starts(count)) == 12
    assert list(shard_folder(main).glob("*.sqlite")) == []  # no answer written: no shard created


def test_merge_keeps_a_shard_whose_writer_still_runs(tmp_path):
    main = tmp_path / "requests.sqlite"
    with RequestCache(main, mode="shards") as live:
        live.put("k1", {"q": 1}, {"text": "one"})
        # merge from another process: this process's flock marks the shard as in use
        proc = CTX.Process(target=_merge, args=(str(main), str(tmp_path / "merge.json")))
        proc.start()
        proc.join(60)
        assert proc.exitcode == 0
        summary = json.loads((tmp_path / "merge.json").read_text())
        assert summary["added"] == 1 and len(summary["in_use"]) == 1 and summary["removed"] == []
        live.put("k2", {"q": 2}, {"text": "two"})  # the live shard still takes answers
    # its writer closed it: merged and removed (the command the SLURM README gives)
    done = subprocess.run(
        [sys.executable, "-m", "judgelab.cache.tools", "merge", str(main)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(cache_mod.__file__).parents[2])},
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["added"] == 1 and len(summary["removed"]) == 1
    with RequestCache(main, mode="shards") as cache:
        assert cache.get("k1") == {"text": "one"} and cache.get("k2") == {"text": "two"}
        assert len(cache) == 2


def _merge(main: str, out: str) -> None:
    Path(out).write_text(json.dumps(merge_shards(main)))


def test_shards_mode_refuses_a_main_file_in_wal_mode_until_merged(tmp_path):
    main = tmp_path / "requests.sqlite"
    with RequestCache(main, mode="wal") as cache:
        cache.put("k", {"q": 1}, {"text": "old"})
    from judgelab.cache.sqlite import CacheError

    with pytest.raises(CacheError, match=r"in WAL mode.*python -m judgelab.cache.tools merge"):
        RequestCache(main, mode="shards")
    merge_shards(main)
    with RequestCache(main, mode="shards") as cache:
        assert cache.get("k") == {"text": "old"}
