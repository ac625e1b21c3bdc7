"""AWS Bedrock backend: the Converse API of ``bedrock-runtime`` through boto3.

* **Region and credentials** come from the standard AWS chain and nowhere else: the config names
  neither (nor a profile, an account or an endpoint), so the same config runs on any machine.
  Region: ``AWS_REGION``, else ``AWS_DEFAULT_REGION``, else ``region`` of the active profile in
  ``~/.aws/config`` (the AWS CLI v2 order; boto3 alone ignores ``AWS_REGION``). Credentials:
  botocore's chain (``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_SESSION_TOKEN``, the
  profile named by ``AWS_PROFILE`` incl. SSO and assume-role, container and instance roles), or a
  Bedrock API key in ``AWS_BEARER_TOKEN_BEDROCK``. A private endpoint is set with
  ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME``. When the backend is built (before any call) a missing
  region or missing credentials raise one :class:`~judgelab.errors.InputError` naming what is
  missing; :func:`check_aws_chain` does the same for a whole config. Credentials never enter the
  cache key, the backend identity, a log line or a result.
* **Identity** (cache key): the backend kind and the model id (a foundation-model id such as
  ``amazon.nova-premier-v1:0`` or an inference-profile id such as ``us.amazon.nova-premier-v1:0``),
  plus the sampling parameters. The region is not part of it: a model id names the same model in
  every region that serves it (the ``us.`` / ``eu.`` / ``apac.`` profile prefix is in the id).
* **Requests**: system-role messages become ``system`` text blocks (blank ones are left out:
  Bedrock refuses blank text); user and assistant turns go to ``messages`` in order as text
  content blocks, consecutive turns of one role merged into one message of several blocks (Converse
  requires the roles to alternate). ``inferenceConfig`` carries ``maxTokens``, ``temperature: 0``
  and ``topP: 1`` (``send_sampling: false``: ``maxTokens`` only). The model entry's ``extra_body``
  goes to ``additionalModelRequestFields`` (e.g. ``{top_k: 1}`` for Claude) and is part of the
  cache key.
* **Threads**: boto3 is synchronous. Each of the ``concurrency`` worker coroutines of
  :class:`~judgelab.llm.backends.api.ApiBackend` runs its call in a thread pool of exactly
  ``concurrency`` threads (and as many pooled HTTP connections), so at most ``concurrency`` calls
  are in flight. botocore's own retries are off (``total_max_attempts: 1``) so that ours are
  counted: ``ThrottlingException`` (rate_limited); ``ServiceUnavailableException``,
  ``ModelNotReadyException``, ``InternalServerException`` and any 5xx (server_error);
  ``ModelTimeoutException`` and read/connect timeouts (timeout); connection errors. ``timeout`` is
  botocore's connect and read timeout.
* **Errors that retries do not cure**: refused credentials, or credentials that may not invoke the
  model, raise :class:`InputError` naming where the credentials came from (never their value); an
  unknown model id, or one that needs an inference profile, an :class:`InputError` naming
  ``models.<name>.model``; anything else (e.g. ``ValidationException: Input is too long``) a
  :class:`BedrockError` with the model, the AWS error code and message.
* **Answers**: the text blocks joined; the reasoning blocks of reasoning models (DeepSeek-R1) go to
  ``extra['reasoning']``, never into the answer. Tokens from ``usage`` (``inputTokens``,
  ``outputTokens``), cost via ``models.<name>.prices``. Converse returns no logprobs, so p0..p3 and
  label_mass are missing. No batch mode (Bedrock batch inference runs as S3 jobs): ``batch: true``
  is refused.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import boto3
import botocore.exceptions as bexc
from botocore.config import Config

from judgelab.errors import InputError, ProviderError
from judgelab.llm.backends.api import ApiBackend, ApiSettings, BatchStatus, status_retry_kind
from judgelab.llm.backends.base import Completion, Request

#: AWS error codes worth another try, and how they are counted
RETRY_CODES = {
    "ThrottlingException": "rate_limited",
    "ServiceUnavailableException": "server_error",
    "ModelNotReadyException": "server_error",
    "InternalServerException": "server_error",
    "ModelTimeoutException": "timeout",
}
#: AWS error codes meaning "these credentials are not accepted"
AUTH_CODES = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "ExpiredTokenException",
        "IncompleteSignature",
        "MissingAuthenticationToken",
        "InvalidClientTokenId",
        "SignatureDoesNotMatch",
    }
)
#: botocore errors raised while looking for or refreshing credentials
CREDENTIAL_ERRORS = (
    bexc.NoCredentialsError,
    bexc.PartialCredentialsError,
    bexc.CredentialRetrievalError,
    bexc.SSOError,
    bexc.TokenRetrievalError,
)

BEARER_ENV = "AWS_BEARER_TOKEN_BEDROCK"
CREDENTIAL_HELP = (
    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN for "
    "temporary credentials), or AWS_PROFILE naming a profile of ~/.aws/credentials "
    "or ~/.aws/config (for SSO run `aws sso login --profile ...` first), or "
    f"{BEARER_ENV} holding a Bedrock API key, or run where a container or instance "
    "role provides them"
)
REGION_HELP = "set AWS_REGION (or AWS_DEFAULT_REGION), or `region` in the profile of ~/.aws/config"


class BedrockError(ProviderError):
    """Bedrock refused a request for a reason retries do not cure (the AWS code and message; one
    line, first, when a workflow job stops on it: :class:`~judgelab.errors.ProviderError`)."""


@dataclass(frozen=True)
class AwsChain:
    """What the standard AWS chain resolved to: the session, the region, and where the
    credentials were found (botocore's provider name, e.g. ``env``, ``shared-credentials-file``,
    ``sso``, ``iam-role``; or the bearer-token variable). Holds no secret in its text form."""

    session: Any
    region: str
    source: str

    def __repr__(self) -> str:
        return f"AwsChain(region={self.region!r}, source={self.source!r})"


def resolve_aws_chain(name: str = "model") -> AwsChain:
    """Region and credentials from the standard AWS chain (see the module docstring).

    Raises :class:`InputError` (config key ``models.<name>``) naming everything that is missing,
    so a run stops before any request is made."""
    key = f"models.{name}"
    try:
        session = boto3.session.Session()
        profile_region = session.region_name  # loads the profile: a missing one fails here
        region = os.environ.get("AWS_REGION", "").strip() or profile_region
        credentials = session.get_credentials()
    except bexc.ProfileNotFound as exc:
        profile = getattr(exc, "kwargs", {}).get("profile")
        raise InputError(
            f"AWS_PROFILE names the profile {profile!r}, which is in neither "
            "~/.aws/config nor ~/.aws/credentials (AWS_CONFIG_FILE, "
            "AWS_SHARED_CREDENTIALS_FILE)",
            key=key,
        ) from exc
    except CREDENTIAL_ERRORS as exc:
        raise InputError(
            f"the bedrock backend could not load AWS credentials ({exc}); {CREDENTIAL_HELP}", key=key
        ) from exc
    source: str | None
    if os.environ.get(BEARER_ENV, "").strip():
        source = f"bearer token ${BEARER_ENV}"
    else:
        source = getattr(credentials, "method", None) if credentials is not None else None
    missing = []
    if not region:
        missing.append(f"no AWS region ({REGION_HELP})")
    if source is None:
        missing.append(f"no AWS credentials ({CREDENTIAL_HELP})")
    if missing:
        raise InputError(
            f"the bedrock backend found {' and '.join(missing)}; the config never holds either", key=key
        )
    return AwsChain(session=session, region=region, source=str(source))


def check_aws_chain(config: Mapping[str, Any]) -> AwsChain | None:
    """For the workflow, before any job: the AWS chain when a model of ``config`` uses the
    bedrock backend (raising :class:`InputError` as :func:`resolve_aws_chain` does), else None."""
    names = [
        n for n, spec in (config.get("models") or {}).items() if (spec or {}).get("backend") == "bedrock"
    ]
    return resolve_aws_chain(names[0]) if names else None


def _client_error(exc: BaseException) -> tuple[str | None, int | None, str]:
    """AWS error code, HTTP status and message of a botocore ClientError (None, None, '' else)."""
    if not isinstance(exc, bexc.ClientError):
        return None, None, ""
    error = exc.response.get("Error") or {}
    status = (exc.response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    return error.get("Code"), status, error.get("Message") or ""


class _ConverseClient:
    """A boto3 bedrock-runtime client seen from the asyncio driver: ``converse`` runs in a pool of
    ``workers`` threads; ``close`` (awaited by the driver) shuts the pool down."""

    def __init__(self, client: Any, workers: int):
        self._client = client
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bedrock")

    def _timed(self, params: dict) -> tuple[dict, float]:
        t0 = time.perf_counter()
        response = self._client.converse(**params)
        return response, time.perf_counter() - t0

    async def converse(self, params: dict) -> tuple[dict, float]:
        """The Converse response and the call's wall time in seconds."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._timed, params)

    async def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class BedrockBackend(ApiBackend):
    kind = "bedrock"
    #: not an endpoint: the region of the AWS chain decides it (``base_url`` is refused)
    default_base_url = "https://bedrock-runtime.aws-region.amazonaws.com"
    timeout_errors = (bexc.ReadTimeoutError, bexc.ConnectTimeoutError)
    connection_errors = (bexc.ConnectionError, bexc.ConnectionClosedError)

    def __init__(self, settings: ApiSettings, *, need_key: bool = True, http_client=None):
        if http_client is not None:
            raise ValueError("the bedrock backend talks through boto3; it takes no http_client")
        super().__init__(settings, need_key=need_key)  # api_key_env is None: no key is read
        self._chain: AwsChain | None = resolve_aws_chain(settings.name) if need_key else None
        self._boto: Any = None

    @classmethod
    def options_from_spec(cls, spec: Mapping[str, Any], name: str) -> dict[str, Any]:
        refused = {
            "base_url": "the endpoint follows the region of the AWS chain (a private endpoint: "
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME)",
            "api_key_env": "credentials come from the standard AWS chain (AWS_ACCESS_KEY_ID..., "
            f"AWS_PROFILE, a role, or {BEARER_ENV})",
            "batch": "Bedrock batch inference (S3 jobs) is not supported; requests go online",
        }
        for key, why in refused.items():
            if spec.get(key) not in (None, False):
                raise InputError(f"the bedrock backend takes no {key}: {why}", key=f"models.{name}.{key}")
        return {}

    # -- identity (cache key): kind and model id, never the region, account or credentials -----
    def identity(self) -> dict:
        return {"kind": self.kind, "model": self.settings.model}

    def sampling(self) -> dict:
        out: dict[str, Any] = (
            {"temperature": self.temperature, "top_p": self.top_p}
            if self.settings.send_sampling
            else {"temperature": None, "top_p": None}
        )
        if self.settings.extra_body:
            out["extra_body"] = self.settings.extra_body
        return out

    def describe(self) -> str:
        where = f" in {self._chain.region}" if self._chain else ""
        return f"bedrock {self.settings.model}{where}"

    # -- the boto3 client ----------------------------------------------------------------------
    @property
    def boto_client(self) -> Any:
        """The bedrock-runtime client (made once, on first use; thread-safe)."""
        if self._boto is None:
            if self._chain is None:  # built with need_key=False (estimates): check the chain now
                self._chain = resolve_aws_chain(self.settings.name)
            s = self.settings
            config = Config(
                connect_timeout=s.timeout,
                read_timeout=s.timeout,
                retries={"mode": "standard", "total_max_attempts": 1},
                max_pool_connections=s.concurrency,
            )
            self._boto = self._chain.session.client(
                "bedrock-runtime", region_name=self._chain.region, config=config
            )
        return self._boto

    def _new_client(self) -> _ConverseClient:
        return _ConverseClient(self.boto_client, self.settings.concurrency)

    # -- requests --------------------------------------------------------------------------
    def params(self, request: Request) -> dict[str, Any]:
        """The Converse parameters of a request (see the module docstring)."""
        system = [
            {"text": content} for role, content in request.messages if role == "system" and content.strip()
        ]
        messages: list[dict[str, Any]] = []
        for role, content in request.messages:
            if role == "system":
                continue
            if role not in ("user", "assistant"):
                raise ValueError(f"Converse knows no message role {role!r}")
            if messages and messages[-1]["role"] == role:
                messages[-1]["content"].append({"text": content})
            else:
                messages.append({"role": role, "content": [{"text": content}]})
        inference: dict[str, Any] = {"maxTokens": request.max_tokens}
        if self.settings.send_sampling:
            inference["temperature"], inference["topP"] = self.temperature, self.top_p
        p: dict[str, Any] = {
            "modelId": self.settings.model,
            "messages": messages,
            "inferenceConfig": inference,
        }
        if system:
            p["system"] = system
        if self.settings.extra_body:
            p["additionalModelRequestFields"] = self.settings.extra_body
        return p

    async def _send(self, client: _ConverseClient, request: Request) -> Completion:
        response, latency = await client.converse(self.params(request))
        return completion_from_converse(response, latency)

    # -- errors ----------------------------------------------------------------------------
    def _retry_kind(self, exc: BaseException) -> str | None:
        code, status, _ = _client_error(exc)
        if code is None and status is None:
            return super()._retry_kind(exc)
        if code in RETRY_CODES:
            return RETRY_CODES[code]
        return status_retry_kind(status)

    def _explain(self, exc: BaseException) -> BaseException:
        name = self.settings.name
        source = self._chain.source if self._chain else "the AWS chain"
        if isinstance(exc, CREDENTIAL_ERRORS):
            return InputError(
                f"{self.describe()}: no usable AWS credentials ({exc}); {CREDENTIAL_HELP}",
                key=f"models.{name}",
            )
        code, status, message = _client_error(exc)
        if code is None:
            return exc
        said = f"{code}: {message}" if message else code
        if code in AUTH_CODES:
            return InputError(
                f"{self.describe()} refused the AWS credentials found in {source} "
                f"({said}); {CREDENTIAL_HELP}",
                key=f"models.{name}",
            )
        if code == "AccessDeniedException":
            return InputError(
                f"{self.describe()} refused the request ({said}): the credentials "
                f"from {source} may not invoke this model; enable access to it in the "
                "Bedrock console of this region and allow bedrock:InvokeModel",
                key=f"models.{name}.model",
            )
        lowered = message.lower()
        if code == "ResourceNotFoundException" or (
            code == "ValidationException"
            and any(s in lowered for s in ("model identifier", "inference profile", "on-demand throughput"))
        ):
            return InputError(
                f"{self.describe()}: Bedrock does not serve model id "
                f"{self.settings.model!r} this way ({said}); use a model id or an "
                "inference-profile id (e.g. us.<model id>) available in this region",
                key=f"models.{name}.model",
            )
        return BedrockError(
            f"{self.describe()}: {said} (HTTP {status}, not retried: the same request gets the same "
            f"answer); check the model entry models.{name} against what Bedrock accepts, then rerun",
            status=status,
        )

    # -- no batch mode (refused in options_from_spec, so these are never reached) -------------
    def _no_batch(self) -> BedrockError:
        return BedrockError("the bedrock backend has no batch mode")

    async def _batch_submit(self, client: Any, items: list[tuple[str, Request]], tag: str) -> str:
        raise self._no_batch()

    async def _batch_status(self, client: Any, batch_id: str) -> BatchStatus:
        raise self._no_batch()

    async def _batch_results(
        self, client: Any, batch_id: str, requests: Mapping[str, Request]
    ) -> dict[str, Completion | str]:
        raise self._no_batch()

    def close(self) -> None:
        super().close()
        if self._boto is not None:
            self._boto.close()
            self._boto = None


def completion_from_converse(response: Mapping[str, Any], latency_s: float) -> Completion:
    """A :class:`Completion` from a Converse response: the text blocks joined, usage, the stop
    reason, Bedrock's own latency, reasoning blocks (if any) in ``extra``; no label distribution."""
    blocks = response["output"]["message"]["content"]
    text = "".join(b["text"] for b in blocks if "text" in b)
    reasoning = "".join(
        b["reasoningContent"]["reasoningText"].get("text", "")
        for b in blocks
        if "reasoningText" in (b.get("reasoningContent") or {})
    )
    usage = response.get("usage") or {}
    extra: dict[str, Any] = {"finish_reason": response.get("stopReason")}
    latency_ms = (response.get("metrics") or {}).get("latencyMs")
    if latency_ms is not None:
        extra["server_latency_ms"] = latency_ms
    if reasoning:
        extra["reasoning"] = reasoning
    return Completion(
        text=text,
        label_probs=None,
        label_mass=None,
        prompt_tokens=usage.get("inputTokens"),
        completion_tokens=usage.get("outputTokens"),
        latency_s=latency_s,
        extra=extra,
    )
