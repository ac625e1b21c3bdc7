"""The OpenAI-compatible backend through the real ``openai`` SDK against local servers on
127.0.0.1, plus what every API backend shares: settings, keys, retries, cache keys."""

from __future__ import annotations

import dataclasses
import math
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest
from conftest import ROOT
from fake_openai import FakeOpenAI, ServerThread, expected_label, expected_probs

from judgelab.cache.keys import request_key
from judgelab.cache.store import RequestCache
from judgelab.data.prepare import build_trec_table
from judgelab.data.tables import write_dataset
from judgelab.errors import InputError, ProviderError
from judgelab.llm.backends import make_backend
from judgelab.llm.backends.api import api_key_envvars, backoff_delay, label_distribution, retry_after_seconds
from judgelab.llm.backends.base import Request
from judgelab.llm.backends.openai_compat import OpenAIBackend
from judgelab.llm.client import CachedClient, cache_request
from judgelab.llm.judge import Judge
from judgelab.llm.judging import judgment_requests, run_judgments
from judgelab.llm.prompts import load_template
from judgelab.llm.session import JobContext
from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import judge_job

SAMPLE = ROOT / "resources" / "sample" / "dl19"


def sample_pairs():
    return build_trec_table("dl19", SAMPLE / "qrels.txt", SAMPLE / "topics.txt", SAMPLE / "texts.tsv")


def openai_spec(base_url: str, **over) -> dict:
    return {
        "backend": "openai",
        "model": "fake-judge",
        "base_url": base_url,
        "api_key_env": None,
        "concurrency": 4,
        "timeout": 5,
        "max_retries": 6,
        **over,
    }


def fast_backoff(backend):
    """Shorter backoff steps, so that retry tests take seconds (Retry-After is still honoured)."""
    backend.settings = dataclasses.replace(backend.settings, backoff_base=0.02, backoff_max=0.2)
    return backend


class Recording(OpenAIBackend):
    """Counts how often each request index is handed to the caller."""

    yielded: Counter

    def complete_many(self, requests):
        self.yielded = Counter()
        for i, completion in super().complete_many(requests):
            self.yielded[i] += 1
            yield i, completion


# -- settings and keys --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "over, key",
    [
        ({"concurrency": 0}, "models.m.concurrency"),
        ({"timeout": -1}, "models.m.timeout"),
        ({"max_retries": 1.5}, "models.m.max_retries"),
        ({"api_key_env": "NOT-A-NAME"}, "models.m.api_key_env"),
        ({"model": ""}, "models.m.model"),
        ({"base_url": "ftp://x"}, "models.m.base_url"),
        ({"top_logprobs": 50}, "models.m.top_logprobs"),
        ({"batch": "yes"}, "models.m.batch"),
        ({"token_limit_param": "max"}, "models.m.token_limit_param"),
        ({"backend": "cohere"}, "models.m.backend"),
    ],
)
def test_bad_settings_name_the_config_key(over, key):
    with pytest.raises(InputError) as err:
        make_backend({**openai_spec("http://127.0.0.1:1/v1"), **over}, "m")
    assert err.value.key == key and key in str(err.value)


def test_missing_key_fails_at_construction_naming_the_variable(monkeypatch):
    monkeypatch.delenv("JL_TEST_KEY", raising=False)
    spec = openai_spec("http://127.0.0.1:1/v1", api_key_env="JL_TEST_KEY")
    with pytest.raises(InputError, match="JL_TEST_KEY") as err:
        make_backend(spec, "gpt")
    assert err.value.key == "models.gpt.api_key_env"
    with pytest.raises(InputError, match="ANTHROPIC_API_KEY"):
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        make_backend({"backend": "anthropic", "model": "claude-x"}, "claude")
    # an estimate builds the backend without a key; a call would still fail naming the variable
    backend = make_backend(spec, "gpt", need_key=False)
    with pytest.raises(InputError, match="JL_TEST_KEY"):
        backend.complete(Request.from_messages([{"role": "user", "content": "hi"}], 2))


def test_only_the_key_variables_of_used_api_models_are_declared():
    local = {"models": {"smollm2": {"backend": "local"}}}
    assert api_key_envvars(local) == []
    cfg = {
        "models": {
            "smollm2": {"backend": "local"},
            "gpt": {"backend": "openai", "model": "gpt-4o-mini"},
            "claude": {"backend": "anthropic", "model": "c", "api_key_env": "MY_CLAUDE"},
            "vllm": {
                "backend": "openai",
                "model": "llama",
                "api_key_env": None,
                "base_url": "http://127.0.0.1:8000/v1",
            },
        }
    }
    assert api_key_envvars(cfg) == ["MY_CLAUDE", "OPENAI_API_KEY"]


def test_cache_key_has_endpoint_and_model_never_the_key(monkeypatch):
    monkeypatch.setenv("JL_TEST_KEY", "sk-secret-value-123")
    req = Request.from_messages([{"role": "user", "content": "judge this"}], 4, ("0", "1", "2", "3"))
    base = openai_spec("http://127.0.0.1:1/v1", api_key_env="JL_TEST_KEY")
    key = request_key(cache_request(make_backend(base, "a"), req))
    assert "sk-secret" not in str(cache_request(make_backend(base, "a"), req))
    monkeypatch.setenv("JL_TEST_KEY", "sk-another-key")
    assert request_key(cache_request(make_backend(base, "a"), req)) == key  # key-independent
    for over in (
        {"base_url": "http://127.0.0.1:2/v1"},
        {"model": "other"},
        {"extra_body": {"top_k": 1}},
        {"send_sampling": False},
    ):
        assert request_key(cache_request(make_backend({**base, **over}, "a"), req)) != key


# -- retry helpers and the label distribution ---------------------------------------------------


def test_retry_after_headers():
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    future = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 < retry_after_seconds({"retry-after": future}) <= 30
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_honours_retry_after_and_grows_with_jitter():
    import random

    rng = random.Random(0)
    waits = [backoff_delay(0, 2.0, base=1, cap=60, rng=rng) for _ in range(50)]
    assert all(2.0 <= w <= 2.2 for w in waits) and len(set(waits)) > 1
    assert all(4.0 <= backoff_delay(3, None, base=1, cap=60, rng=rng) <= 8.0 for _ in range(50))
    assert all(30.0 <= backoff_delay(10, None, base=1, cap=60, rng=rng) <= 60.0 for _ in range(50))


def test_label_distribution_reads_the_label_tokens_like_the_local_backend():
    top = [("2", math.log(0.5)), (" 2", math.log(0.2)), ("1", math.log(0.1)), ("The", math.log(0.1))]
    probs, mass = label_distribution(top, ("0", "1", "2", "3"))
    assert mass == pytest.approx(0.6)  # exact token match: " 2" is another token
    assert probs == pytest.approx([0.0, 0.1 / 0.6, 0.5 / 0.6, 0.0])
    assert label_distribution([("The", -0.1)], ("0", "1", "2", "3")) == (None, 0.0)


# -- against a local fault-injecting server ------------------------------------------------------


def one_request() -> Request:
    return Request(messages=(("user", "Is this relevant? Answer 0-3."),), max_tokens=4)


def test_provider_errors_say_what_where_and_what_to_do_in_one_line(monkeypatch):
    """Issue 38, case 6: an unknown model id (HTTP 404), a used-up quota (a 429 that waiting does
    not cure) and a 500 after every retry are each one error naming the model, the endpoint, the
    provider's words and what to do - never the key; only the 500 is retried."""
    monkeypatch.setenv("JL_TEST_KEY", "sk-never-in-a-message-42")
    key = {"api_key_env": "JL_TEST_KEY"}
    fake = FakeOpenAI(models=frozenset({"served-judge"}))
    with ServerThread(fake.app()) as srv:
        b = OpenAIBackend.from_spec(openai_spec(srv.base_url, model="no-such-judge", **key), "gpt")
        with pytest.raises(InputError) as err:
            b.complete(one_request())
    msg = str(err.value)
    assert msg.startswith(f"config key 'models.gpt.model': openai no-such-judge at {srv.base_url} answered ")
    assert "HTTP 404 (The model `no-such-judge` does not exist or you do not have access to it.)" in msg
    assert "name a model id it serves" in msg and "\n" not in msg
    assert fake.arrivals == 1 and b.stats["retries"] == 0

    fake = FakeOpenAI(fault="quota")
    with ServerThread(fake.app()) as srv:
        b = OpenAIBackend.from_spec(openai_spec(srv.base_url, **key), "gpt")
        with pytest.raises(ProviderError) as perr:
            b.complete(one_request())
    assert perr.value.status == 429 and fake.arrivals == 1  # not retried: waiting does not cure it
    assert "the account's quota is used up (HTTP 429, insufficient_quota: You exceeded" in str(perr.value)
    assert "add credit" in str(perr.value)

    fake = FakeOpenAI(fault="500")
    with ServerThread(fake.app()) as srv:
        b = fast_backoff(OpenAIBackend.from_spec(openai_spec(srv.base_url, max_retries=2, **key), "gpt"))
        with pytest.raises(ProviderError) as perr:
            b.complete(one_request())
    assert fake.arrivals == 3 and b.stats["gave_up"] == 1
    assert str(perr.value).startswith(
        f"openai fake-judge at {srv.base_url}: giving up after 3 attempts (max_retries=2): HTTP 500: boom; "
    )
    assert "rerun later" in str(perr.value) and "models.gpt.max_retries" in str(perr.value)
    for e in (err.value, perr.value):
        assert "sk-never-in-a-message-42" not in str(e)


def test_every_judgment_arrives_once_through_429_bursts_500s_and_a_timeout(tmp_path):
    pairs = sample_pairs()
    template = load_template("peras/wo_cot")
    faults = {**{i: "429" for i in range(6)}, 8: "500", 9: "500", 14: "slow", 20: "500"}
    fake = FakeOpenAI(latency=0.01, faults=faults, retry_after=0.3, slow_s=2.0)
    with ServerThread(fake.app()) as srv, RequestCache(tmp_path / "c.sqlite") as cache:
        backend = fast_backoff(Recording.from_spec(openai_spec(srv.base_url, timeout=0.8), "fake"))
        t0 = time.perf_counter()
        out = run_judgments(
            pairs,
            Judge("judge", template=template, max_tokens=4),
            CachedClient(backend, cache),
            progress=False,
        )
        elapsed = time.perf_counter() - t0
        assert len(cache) == len(pairs)
    n = len(pairs)
    assert set(backend.yielded) == set(range(n)) and set(backend.yielded.values()) == {1}
    requests = judgment_requests(pairs, Judge("judge", template=template, max_tokens=4))
    prompts = [r.messages[-1][1] for r in requests]
    assert out["label"].tolist() == [expected_label(p) for p in prompts]  # each answer to its request
    for (_, row), prompt in zip(out.iterrows(), prompts):
        assert [row.p0, row.p1, row.p2, row.p3] == pytest.approx(expected_probs(prompt))
        assert row.label_mass == pytest.approx(0.9)
    assert backend.stats["rate_limited"] == 6 and backend.stats["server_error"] == 3
    assert backend.stats["timeout"] == 1
    assert backend.stats["retries"] == 10 and backend.stats["requests"] == n
    assert fake.arrivals == n + 10
    # a request told "429, Retry-After: 0.3" came back no sooner than 0.3 s later
    for k, (t, prompt, fault) in enumerate(fake.history):
        if fault == "429":
            t_next = next(t2 for t2, p2, _ in fake.history[k + 1 :] if p2 == prompt)
            assert t_next - t >= 0.3
    assert elapsed >= 0.3


def test_a_server_without_logprobs_still_answers_and_leaves_the_distribution_missing(tmp_path):
    pairs = sample_pairs().head(6)
    fake = FakeOpenAI(refuse_logprobs=True)
    with ServerThread(fake.app()) as srv, RequestCache(tmp_path / "c.sqlite") as cache:
        backend = OpenAIBackend.from_spec(openai_spec(srv.base_url, concurrency=1), "fake")
        out = run_judgments(
            pairs,
            Judge("judge", template=load_template("peras/wo_cot"), max_tokens=4),
            CachedClient(backend, cache),
            progress=False,
        )
    assert out["parsed"].all() and out["p0"].isna().all() and out["label_mass"].isna().all()
    assert fake.arrivals == len(pairs) + 1  # one refusal, then no more logprobs requests


def test_judge_job_sends_the_key_but_never_writes_it(tmp_path, monkeypatch):
    secret = "sk-judgelab-test-secret-42"
    monkeypatch.setenv("JL_TEST_KEY", secret)
    table = tmp_path / "pairs.tsv"
    write_dataset(sample_pairs().head(5), table)
    fake = FakeOpenAI()
    with ServerThread(fake.app()) as srv:
        spec = openai_spec(srv.base_url, api_key_env="JL_TEST_KEY", prices={"input": 0.15, "output": 0.6})
        out, log = tmp_path / "j.tsv", tmp_path / "judge.log"
        with script_logging(str(log)):
            judge_job(
                str(table),
                str(out),
                Judge("fake", spec, template=load_template("peras/wo_cot"), max_tokens=4),
                JobContext(str(tmp_path / "cache" / "requests.sqlite"), desc="judge fake"),
            )
    assert fake.auth == Counter({f"Bearer {secret}": 5})
    text = log.read_text()
    assert "5 new calls" in text and "tokens sent" in text and "cost $" in text
    for path in [out, log, *(tmp_path / "cache").iterdir()]:
        assert secret.encode() not in path.read_bytes(), path
