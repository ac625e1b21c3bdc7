"""A job that crashes after k of n calls, rerun, makes only the n - k missing calls."""

import pytest

from judgelab.cache.store import RequestCache
from judgelab.data.prepare import build_trec_table
from judgelab.llm.backends.base import Backend
from judgelab.llm.client import CachedClient
from judgelab.llm.judge import Judge
from judgelab.llm.judging import run_judgments
from judgelab.llm.prompts import load_template

pytestmark = pytest.mark.slow


class Crash(RuntimeError):
    pass


class Counting(Backend):
    """Wraps a real backend; counts the calls that reach it and can crash after ``crash_after``."""

    def __init__(self, inner, crash_after=None):
        self.inner, self.crash_after, self.calls = inner, crash_after, 0

    def identity(self):
        return self.inner.identity()

    def complete(self, request):
        if self.crash_after is not None and self.calls >= self.crash_after:
            raise Crash(f"simulated crash after {self.calls} calls")
        self.calls += 1
        return self.inner.complete(request)


def test_rerun_after_crash_pays_only_for_missing_calls(local_backend, fixtures, tmp_path):
    d = fixtures / "trec"
    pairs = build_trec_table("fx", d / "qrels.txt", d / "topics.txt", d / "texts.tsv")
    n, k = len(pairs), 3
    template = load_template("peras/wo_cot")
    cache_path = tmp_path / "cache.sqlite"

    crashing = Counting(local_backend, crash_after=k)
    with RequestCache(cache_path) as cache, pytest.raises(Crash):
        run_judgments(
            pairs,
            Judge("judge", template=template, max_tokens=4),
            CachedClient(crashing, cache),
            progress=False,
        )
    assert crashing.calls == k

    resumed = Counting(local_backend)
    with RequestCache(cache_path) as cache:
        assert len(cache) == k  # every answer was saved the moment it arrived
        out = run_judgments(
            pairs,
            Judge("judge", template=template, max_tokens=4),
            CachedClient(resumed, cache),
            progress=False,
        )
    assert resumed.calls == n - k
    assert int(out["cache_hit"].sum()) == k
    assert len(out) == n and out["answer"].notna().all()

    again = Counting(local_backend)
    with RequestCache(cache_path) as cache:
        out2 = run_judgments(
            pairs, Judge("judge", template=template, max_tokens=4), CachedClient(again, cache), progress=False
        )
    assert again.calls == 0 and out2["cache_hit"].all()
    assert out2["answer"].tolist() == out["answer"].tolist()
    # an unparsable answer stays missing: never a grade
    assert (out["label"].isna() == ~out["parsed"]).all()
