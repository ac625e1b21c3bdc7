"""The Bedrock backend through a real boto3 ``bedrock-runtime`` client: botocore's Stubber with
Converse response shapes (validated by the Stubber against the service model) for requests,
parsing, retries, errors and the cache; a ``before-send`` hook answering with raw HTTP bodies for
the bounded thread concurrency. Fake credentials in environment variables, a fixed region, no
file of ~/.aws and no instance metadata are read."""

from __future__ import annotations

import dataclasses
import json
import threading
import time

import pytest
from botocore.awsrequest import AWSResponse
from botocore.stub import Stubber

from judgelab.cache.keys import request_key
from judgelab.cache.store import RequestCache
from judgelab.errors import InputError, ProviderError
from judgelab.llm.backends import make_backend
from judgelab.llm.backends.base import Request
from judgelab.llm.backends.bedrock import BedrockBackend, BedrockError, check_aws_chain
from judgelab.llm.client import CachedClient, cache_request
from judgelab.llm.pricing import Prices
from judgelab.llm.prompts import build_messages

KEY_ID = "AKIAJUDGELABFAKE0001"
SECRET = "judgelab/fake/secret/DoNotUse0000000000000"
TOKEN = "judgelab-fake-session-token-0000"
REGION = "us-east-1"
NOVA = "us.amazon.nova-premier-v1:0"

#: every variable of the AWS chain these tests control (the rest of the chain is switched off)
AWS_VARS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
)


@pytest.fixture(autouse=True)
def aws_env(monkeypatch, tmp_path):
    """Fake credentials and a fixed region in the environment; no ~/.aws files, no IMDS."""
    for var in AWS_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws" / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws" / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_SESSION_TOKEN", TOKEN)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    return monkeypatch


def spec(**over) -> dict:
    return {"backend": "bedrock", "model": NOVA, "concurrency": 1, "timeout": 5, "max_retries": 3, **over}


def backend(**over) -> BedrockBackend:
    b = make_backend(spec(**over), "nova")
    assert isinstance(b, BedrockBackend)
    b.settings = dataclasses.replace(b.settings, backoff_base=0.001, backoff_max=0.01)
    return b


def converse_response(
    text: str,
    input_tokens: int = 412,
    output_tokens: int = 9,
    stop: str = "end_turn",
    latency_ms: int = 713,
    reasoning: str | None = None,
) -> dict:
    """A Converse response as bedrock-runtime returns it (DeepSeek-R1 puts a reasoningContent
    block before the text)."""
    content = [{"text": text}]
    if reasoning is not None:
        content.insert(0, {"reasoningContent": {"reasoningText": {"text": reasoning}}})
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {
            "inputTokens": input_tokens,
            "outputTokens": output_tokens,
            "totalTokens": input_tokens + output_tokens,
        },
        "metrics": {"latencyMs": latency_ms},
    }


def judge_request(persona: str, task: str, placement: str = "system", max_tokens: int = 64) -> Request:
    return Request.from_messages(build_messages(persona, task, placement), max_tokens)


TASK = "Which response is better?\nResponse A: ...\nResponse B: ...\nAnswer <judgment>A|N|B</judgment>"


# -- requests and answers -----------------------------------------------------------------------


def test_converse_request_parameters_and_response_parsing():
    b = backend()
    stub = Stubber(b.boto_client)
    stub.add_response(
        "converse",
        converse_response("<judgment>B</judgment>"),
        {
            "modelId": NOVA,
            "system": [{"text": "You simulate evaluator E7."}],
            "messages": [{"role": "user", "content": [{"text": TASK}]}],
            "inferenceConfig": {"maxTokens": 64, "temperature": 0.0, "topP": 1.0},
        },
    )
    # few-shot turns: consecutive user turns merge into one message of two blocks
    turns = Request.from_messages(
        [
            {"role": "system", "content": "S1"},
            {"role": "user", "content": "example"},
            {"role": "assistant", "content": "<judgment>N</judgment>"},
            {"role": "user", "content": "item 1"},
            {"role": "user", "content": "item 2"},
            {"role": "system", "content": "S2"},
        ],
        8,
    )
    stub.add_response(
        "converse",
        converse_response("<judgment>A</judgment>", 30, 5),
        {
            "modelId": NOVA,
            "system": [{"text": "S1"}, {"text": "S2"}],
            "messages": [
                {"role": "user", "content": [{"text": "example"}]},
                {"role": "assistant", "content": [{"text": "<judgment>N</judgment>"}]},
                {"role": "user", "content": [{"text": "item 1"}, {"text": "item 2"}]},
            ],
            "inferenceConfig": {"maxTokens": 8, "temperature": 0.0, "topP": 1.0},
        },
    )
    # the persona in the user turn (placement user): no system blocks at all
    stub.add_response(
        "converse",
        converse_response("N"),
        {
            "modelId": NOVA,
            "messages": [{"role": "user", "content": [{"text": f"You simulate evaluator E7.\n\n{TASK}"}]}],
            "inferenceConfig": {"maxTokens": 64, "temperature": 0.0, "topP": 1.0},
        },
    )
    with stub:
        c = b.complete(judge_request("You simulate evaluator E7.", TASK))
        c2 = b.complete(turns)
        c3 = b.complete(judge_request("You simulate evaluator E7.", TASK, placement="user"))
        stub.assert_no_pending_responses()
    assert c.text == "<judgment>B</judgment>"
    assert (c.prompt_tokens, c.completion_tokens) == (412, 9)
    assert c.label_probs is None and c.label_mass is None  # Converse has no logprobs
    assert c.extra["finish_reason"] == "end_turn" and c.extra["server_latency_ms"] == 713
    assert c.extra["retries"] == 0 and c.latency_s >= 0
    assert "reasoning" not in c.extra
    assert (c2.text, c2.prompt_tokens, c2.completion_tokens) == ("<judgment>A</judgment>", 30, 5)
    assert c3.text == "N"
    assert b.stats["requests"] == 3 and b.stats["attempts"] == 3


def test_reasoning_blocks_stay_out_of_the_answer_and_options_reach_the_request():
    b = backend(model="us.deepseek.r1-v1:0", send_sampling=False, extra_body={"top_k": 1})
    stub = Stubber(b.boto_client)
    stub.add_response(
        "converse",
        converse_response(
            "\n\n<judgment>A</judgment>", 250, 180, reasoning="Okay, the evaluator prefers concise..."
        ),
        {
            "modelId": "us.deepseek.r1-v1:0",
            "messages": [{"role": "user", "content": [{"text": TASK}]}],
            "inferenceConfig": {"maxTokens": 64},  # send_sampling false: no temperature, no topP
            "additionalModelRequestFields": {"top_k": 1},
        },
    )
    stub.add_response("converse", converse_response("<judgment>", 250, 64, stop="max_tokens"))
    with stub:
        c = b.complete(judge_request("", TASK))
        cut = b.complete(judge_request("", TASK))
    assert c.text == "\n\n<judgment>A</judgment>"
    assert c.extra["reasoning"] == "Okay, the evaluator prefers concise..."
    assert (c.prompt_tokens, c.completion_tokens) == (250, 180)
    assert cut.extra["finish_reason"] == "max_tokens"
    assert b.sampling() == {"temperature": None, "top_p": None, "extra_body": {"top_k": 1}}
    r = judge_request("", TASK)
    sampled = backend(model="us.deepseek.r1-v1:0")
    assert request_key(cache_request(b, r)) != request_key(cache_request(sampled, r))


# -- retries and errors --------------------------------------------------------------------------


def test_throttling_and_unavailable_answers_are_retried_and_counted():
    b = backend(max_retries=4)
    stub = Stubber(b.boto_client)
    stub.add_client_error(
        "converse", "ThrottlingException", "Too many requests, please wait before trying again.", 429
    )
    stub.add_client_error(
        "converse", "ServiceUnavailableException", "Bedrock is unable to process your request.", 503
    )
    stub.add_client_error("converse", "ModelNotReadyException", "Model is not ready.", 429)
    stub.add_client_error(
        "converse",
        "ModelTimeoutException",
        "Model has timed out in processing the request. Try your request again.",
        408,
    )
    stub.add_response("converse", converse_response("<judgment>N</judgment>"))
    with stub:
        c = b.complete(judge_request("", TASK))
        stub.assert_no_pending_responses()
    assert c.text == "<judgment>N</judgment>" and c.extra["retries"] == 4
    assert b.stats["attempts"] == 5 and b.stats["retries"] == 4
    assert b.stats["rate_limited"] == 1 and b.stats["server_error"] == 2 and b.stats["timeout"] == 1

    # max_retries 1: the second throttle gives up, naming the attempts
    b = backend(max_retries=1)
    stub = Stubber(b.boto_client)
    for _ in range(2):
        stub.add_client_error("converse", "ThrottlingException", "Too many requests", 429)
    with stub, pytest.raises(RuntimeError, match=r"giving up after 2 attempts .*ThrottlingException"):
        b.complete(judge_request("", TASK))
    assert b.stats["gave_up"] == 1


def test_a_validation_error_is_not_retried_and_surfaces_clearly():
    b = backend()
    stub = Stubber(b.boto_client)
    stub.add_client_error("converse", "ValidationException", "Input is too long for requested model.", 400)
    with stub, pytest.raises(BedrockError) as err:
        b.complete(judge_request("", TASK))
    assert str(err.value) == (
        f"bedrock {NOVA} in {REGION}: ValidationException: Input is too long "
        "for requested model. (HTTP 400, not retried: the same request gets the same answer); "
        "check the model entry models.nova against what Bedrock accepts, then rerun"
    )
    assert isinstance(err.value, ProviderError) and err.value.status == 400
    assert b.stats["attempts"] == 1 and b.stats["retries"] == 0

    # a model id that needs an inference profile names the config key
    b = backend(model="anthropic.claude-3-7-sonnet-20250219-v1:0")
    stub = Stubber(b.boto_client)
    stub.add_client_error(
        "converse",
        "ValidationException",
        "Invocation of model ID "
        "anthropic.claude-3-7-sonnet-20250219-v1:0 with on-demand throughput isn't "
        "supported. Retry your request with the ID or ARN of an inference profile "
        "that contains this model.",
        400,
    )
    with stub, pytest.raises(InputError, match=r"^config key 'models\.nova\.model': .*inference-profile"):
        b.complete(judge_request("", TASK))


def test_refused_credentials_name_their_source_never_their_value():
    for code, status, message, key, source in [
        (
            "UnrecognizedClientException",
            403,
            "The security token included in the request is invalid.",
            "models.nova",
            "refused the AWS credentials found in env",
        ),
        (
            "AccessDeniedException",
            403,
            "You don't have access to the model with the specified model ID.",
            "models.nova.model",
            "the credentials from env may not invoke this model",
        ),
    ]:
        b = backend()
        stub = Stubber(b.boto_client)
        stub.add_client_error("converse", code, message, status)
        with stub, pytest.raises(InputError) as err:
            b.complete(judge_request("", TASK))
        text = str(err.value)
        assert text.startswith(f"config key '{key}': bedrock {NOVA} in {REGION}")
        assert f"{code}: {message}" in text and source in text
        assert KEY_ID not in text and SECRET not in text and TOKEN not in text
        assert b.stats["attempts"] == 1


# -- credentials and config ----------------------------------------------------------------------


def test_missing_credentials_or_region_fail_before_any_call_naming_what_is_missing(aws_env):
    aws_env.delenv("AWS_ACCESS_KEY_ID")
    aws_env.delenv("AWS_SECRET_ACCESS_KEY")
    aws_env.delenv("AWS_SESSION_TOKEN")
    with pytest.raises(
        InputError,
        match=r"^config key 'models\.nova': the bedrock backend found no "
        r"AWS credentials \(set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.*AWS_PROFILE",
    ):
        make_backend(spec(), "nova")
    aws_env.delenv("AWS_DEFAULT_REGION")
    with pytest.raises(InputError, match=r"found no AWS region \(set AWS_REGION.*\) and no AWS credentials"):
        make_backend(spec(), "nova")
    with pytest.raises(InputError, match=r"models\.nova"):
        check_aws_chain({"models": {"smol": {"backend": "local"}, "nova": spec()}})
    assert check_aws_chain({"models": {"smol": {"backend": "local"}}}) is None

    # estimates build it without credentials; the first call then fails the same way, sending nothing
    lazy = make_backend(spec(), "nova", need_key=False)
    assert lazy.identity() == {"kind": "bedrock", "model": NOVA}
    with pytest.raises(InputError, match="no AWS region"):
        lazy.complete(judge_request("", TASK))
    assert lazy.stats["attempts"] == 0

    aws_env.setenv("AWS_REGION", "us-west-2")
    aws_env.setenv("AWS_ACCESS_KEY_ID", KEY_ID)  # the secret is still missing
    with pytest.raises(InputError, match="AWS_SECRET_ACCESS_KEY") as err:
        make_backend(spec(), "nova")
    assert KEY_ID not in str(err.value)

    aws_env.delenv("AWS_ACCESS_KEY_ID")
    aws_env.setenv("AWS_PROFILE", "nowhere")
    with pytest.raises(InputError, match=r"AWS_PROFILE.*nowhere"):
        make_backend(spec(), "nova")


def test_the_chain_decides_region_and_credentials_and_neither_enters_the_cache_key(aws_env, tmp_path):
    r = judge_request("", TASK)
    env_backend = backend()
    assert env_backend._chain.source == "env" and env_backend.boto_client.meta.region_name == REGION
    aws_env.setenv("AWS_REGION", "us-west-2")  # AWS_REGION before AWS_DEFAULT_REGION (AWS CLI v2)
    assert backend().boto_client.meta.region_name == "us-west-2"

    # a profile of the shared files, in another region, with other credentials
    for var in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
    ):
        aws_env.delenv(var)
    (tmp_path / "aws").mkdir()
    (tmp_path / "aws" / "config").write_text("[profile judge]\nregion = eu-central-1\n")
    (tmp_path / "aws" / "credentials").write_text(
        "[judge]\naws_access_key_id = AKIAPROFILEFAKE00002\naws_secret_access_key = profile-secret-2\n"
    )
    aws_env.setenv("AWS_PROFILE", "judge")
    profiled = backend()
    assert profiled._chain.source == "shared-credentials-file" and profiled._chain.region == "eu-central-1"
    assert profiled.describe() == f"bedrock {NOVA} in eu-central-1"
    assert request_key(cache_request(profiled, r)) == request_key(cache_request(env_backend, r))
    assert "secret" not in repr(profiled._chain) and "AKIA" not in repr(profiled._chain)

    # a Bedrock API key counts as credentials
    aws_env.delenv("AWS_PROFILE")
    aws_env.setenv("AWS_DEFAULT_REGION", REGION)
    aws_env.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-fake")
    assert backend()._chain.source == "bearer token $AWS_BEARER_TOKEN_BEDROCK"


@pytest.mark.parametrize(
    "over, key",
    [
        ({"base_url": "https://bedrock-runtime.us-east-1.amazonaws.com"}, "models.nova.base_url"),
        ({"api_key_env": "AWS_SECRET_ACCESS_KEY"}, "models.nova.api_key_env"),
        ({"batch": True}, "models.nova.batch"),
        ({"model": " "}, "models.nova.model"),
        ({"concurrency": 0}, "models.nova.concurrency"),
    ],
)
def test_bad_settings_name_the_config_key(over, key):
    with pytest.raises(InputError, match=rf"^config key '{key}'"):
        make_backend(spec(**over), "nova")


# -- cache, tokens, cost -------------------------------------------------------------------------


def test_cache_saves_every_answer_and_a_rerun_makes_no_call(tmp_path):
    requests = [judge_request("You simulate evaluator E7.", f"{TASK}\nitem {i}") for i in range(3)]
    requests.append(requests[1])  # a duplicate is sent once
    b = backend()
    stub = Stubber(b.boto_client)
    for i, (tin, tout) in enumerate([(400, 9), (410, 12), (420, 30)]):
        stub.add_response(
            "converse",
            converse_response(f"<judgment>{'ANB'[i]}</judgment>", tin, tout),
            b.params(requests[i]),
        )
    cache_dir = tmp_path / "cache"
    with RequestCache(cache_dir / "requests.sqlite") as cache:
        client = CachedClient(b, cache)
        with stub:
            first = client.run(requests, progress=False)
            stub.assert_no_pending_responses()
        assert [c.text for c, _ in first] == [
            "<judgment>A</judgment>",
            "<judgment>N</judgment>",
            "<judgment>B</judgment>",
            "<judgment>N</judgment>",
        ]
        assert [hit for _, hit in first] == [False, False, False, True]
        assert client.calls == 3 and client.hits == 0
        assert (client.prompt_tokens, client.completion_tokens) == (400 + 410 + 420, 9 + 12 + 30)
        # Claude 3.5 Sonnet's on-demand prices: (1230 * 3 + 51 * 15) / 1e6 = 0.00369 + 0.000765
        assert Prices(input=3.0, output=15.0, batch_factor=0.5).cost(
            client.prompt_tokens, client.completion_tokens
        ) == pytest.approx(0.004455)
        b.close()

        # a rerun: a fresh backend whose Stubber has nothing queued; any call would raise
        again = backend()
        with Stubber(again.boto_client) as empty:
            client2 = CachedClient(again, cache)
            second = client2.run(requests, progress=False)
            empty.assert_no_pending_responses()
        assert [c.text for c, _ in second] == [c.text for c, _ in first]
        assert all(hit for _, hit in second) and client2.calls == 0 and client2.hits == 4
        assert again.stats["attempts"] == 0
        again.close()

    stored = b"".join(p.read_bytes() for p in cache_dir.iterdir())
    assert b'"kind":"bedrock"' in stored and NOVA.encode() in stored
    for secret in (KEY_ID, SECRET, TOKEN, REGION):
        assert secret.encode() not in stored
        assert secret not in json.dumps(cache_request(b, requests[0]))


# -- concurrency ---------------------------------------------------------------------------------


class _Raw:
    def __init__(self, body: bytes):
        self.body = body

    def stream(self, **_):
        yield self.body


def test_calls_run_in_threads_bounded_by_concurrency_and_raw_bodies_parse():
    """A ``before-send`` hook stands in for the network: each call sleeps, the hook counts the calls
    in flight, and answers with a raw HTTP body that botocore's own parser reads."""
    b = backend(concurrency=3)
    lock = threading.Lock()
    state = {"now": 0, "peak": 0, "calls": 0}

    def send(request, **_):
        model = NOVA.replace(":", "%3A")
        assert request.url == f"https://bedrock-runtime.{REGION}.amazonaws.com/model/{model}/converse"
        assert KEY_ID in request.headers["Authorization"].decode()  # signed with the chain's key
        body = json.loads(request.body)
        with lock:
            state["now"] += 1
            state["calls"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        item = body["messages"][0]["content"][0]["text"].rsplit(" ", 1)[1]
        payload = json.dumps(converse_response(f"<judgment>{item}</judgment>", 100 + int(item), 7)).encode()
        return AWSResponse(
            request.url,
            200,
            {"content-type": "application/json", "x-amzn-requestid": f"req-{item}"},
            _Raw(payload),
        )

    b.boto_client.meta.events.register("before-send.bedrock-runtime.Converse", send)
    requests = [judge_request("", f"item {i}") for i in range(9)]
    answers = dict(b.complete_many(requests))
    # in parallel: 3 calls in flight at once (the peak), never more (the bound); no wall-clock
    # bound here - under a loaded CI machine it failed although the peak showed the overlap
    assert state["calls"] == 9 and state["peak"] == 3
    assert [answers[i].text for i in range(9)] == [f"<judgment>{i}</judgment>" for i in range(9)]
    assert [answers[i].prompt_tokens for i in range(9)] == [100 + i for i in range(9)]
