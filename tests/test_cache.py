import multiprocessing as mp

from judgelab.cache.keys import request_key
from judgelab.cache.store import RequestCache
from judgelab.llm.backends.base import Backend, Completion, Request
from judgelab.llm.client import CachedClient, cache_request


def _writer(path, start, n):
    cache = RequestCache(path)
    for i in range(start, start + n):
        cache.put(f"k{i}", {"i": i}, {"text": str(i)})
    cache.close()


def test_put_get_persist(tmp_path):
    path = tmp_path / "c.sqlite"
    with RequestCache(path) as cache:
        cache.put("a", {"q": 1}, {"text": "x"})
        cache.put("a", {"q": 1}, {"text": "second answer is ignored"})
    with RequestCache(path) as cache:
        assert cache.get("a") == {"text": "x"}
        assert cache.get("b") is None
        assert len(cache) == 1


def test_concurrent_processes_write_safely(tmp_path):
    path = str(tmp_path / "c.sqlite")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, k * 200, 200)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with RequestCache(path) as cache:
        assert len(cache) == 800
        assert cache.get("k799") == {"text": "799"}


class Echo(Backend):
    """A scripted backend for cache-key tests (the real local model runs in test_local_backend)."""

    def __init__(self, model="m", temperature=0.0):
        self.model, self.temperature, self.calls = model, temperature, 0

    def identity(self):
        return {"kind": "echo", "model": self.model}

    def complete(self, request):
        self.calls += 1
        return Completion(text=request.messages[-1][1][::-1])


def req(text, max_tokens=4):
    return Request.from_messages([{"role": "user", "content": text}], max_tokens, ("0", "1"))


def test_key_covers_backend_model_sampling_and_messages():
    base = request_key(cache_request(Echo(), req("hello")))
    assert base == request_key(cache_request(Echo(), req("hello")))
    assert base != request_key(cache_request(Echo(model="other"), req("hello")))
    assert base != request_key(cache_request(Echo(temperature=0.7), req("hello")))
    assert base != request_key(cache_request(Echo(), req("hello", max_tokens=5)))
    assert base != request_key(cache_request(Echo(), req("hello!")))


def test_client_sends_only_misses_and_dedupes(tmp_path):
    backend = Echo()
    with RequestCache(tmp_path / "c.sqlite") as cache:
        client = CachedClient(backend, cache)
        out = client.run([req("ab"), req("cd"), req("ab")], progress=False)
        assert [c.text for c, _ in out] == ["ba", "dc", "ba"]
        assert backend.calls == 2 and [hit for _, hit in out] == [False, False, True]
        out = client.run([req("ab"), req("ef")], progress=False)
        assert backend.calls == 3 and [hit for _, hit in out] == [True, False]


def test_many_connections_opening_a_new_file_at_once(tmp_path):
    """Switching a fresh file to WAL races between connections ("database is locked"); every
    opener must wait instead of failing."""
    import threading

    path = tmp_path / "fresh.sqlite"
    barrier, errors = threading.Barrier(8), []

    def opener(i):
        try:
            barrier.wait()
            with RequestCache(path) as cache:
                cache.put(f"k{i}", {"i": i}, {"text": str(i)})
        except Exception as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=opener, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    with RequestCache(path) as cache:
        assert len(cache) == 8
