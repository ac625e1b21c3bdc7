"""Shared machinery of the API backends (:mod:`.openai_compat`, :mod:`.anthropic_api`).

* **Settings** (:class:`ApiSettings`): one model entry of the config (``models.<name>``), checked
  key by key; a bad value raises :class:`~judgelab.errors.InputError` naming the key.
* **Keys** come from the environment variable named by ``api_key_env`` and nowhere else. A missing
  variable fails when the backend is built, before any call, with the variable's name. The key is
  never part of the cache key, the backend identity, a log line or a result.
* **Online mode**: the SDK's async client; ``concurrency`` requests in flight at once (one worker
  coroutine each); answers are yielded the moment they arrive so the cache saves each at once.
* **Retries** are ours (the SDK's own are off, so they can be counted): 408/409/429/5xx, timeouts
  and connection errors are retried up to ``max_retries`` times with exponential backoff and
  jitter; a ``Retry-After`` / ``retry-after-ms`` header is honoured (the wait is never shorter).
  A 429 that says the account's quota is used up (``insufficient_quota``) is not retried.
* **Errors** say what, where and what to do in one line: a refused key is an
  :class:`~judgelab.errors.InputError` naming the key's variable, an unknown model (HTTP 404) one
  naming ``models.<name>.model``; any other refusal, and no answer after every retry, a
  :class:`~judgelab.errors.ProviderError` with the status and the provider's own words (the key
  removed, should a server echo it). The answers received before it are cached already.
* **Batch mode** (``batch: true``): the uncached requests go to the provider's batch API in one
  submission; the batch id is saved (:class:`~judgelab.llm.backends.batch.BatchStore`, beside the
  request cache) before anything else happens, so a job killed while the batch runs resumes
  polling when rerun and never submits the same request twice.
"""

from __future__ import annotations

import abc
import asyncio
import email.utils
import logging
import math
import os
import random
import signal
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from judgelab import schema
from judgelab.cache.keys import request_key
from judgelab.cache.store import default_cache_path, resolve_mode
from judgelab.errors import InputError, ProviderError
from judgelab.llm.backends.base import Backend, Completion, Request
from judgelab.llm.backends.batch import BatchStore
from judgelab.llm.client import cache_request

log = logging.getLogger(__name__)
T = TypeVar("T")

#: HTTP statuses worth another try: request timeout, conflict, rate limit, and server errors.
RETRY_STATUSES = frozenset({408, 409, 429})


#: Default ``api_key_env`` per backend kind (bedrock: none, its credentials come from the AWS chain).
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "bedrock": None}


def model_default(key: str) -> Any:
    """The schema's default of the model entry's ``key`` (``models.<name>.<key>``): the one place
    it is written (a model entry is not filled in with them; see the schema's ``x-fill-defaults``)."""
    return schema.default(f"models.<name>.{key}")


@dataclass(frozen=True)
class ApiSettings:
    """The settings of one API model entry (``models.<name>``), each unset key at the schema's
    default. Secrets are not among them."""

    name: str
    kind: str
    model: str
    base_url: str
    api_key_env: str | None
    concurrency: int
    timeout: float
    max_retries: int
    batch: bool
    batch_poll_interval: float
    send_sampling: bool
    extra_body: dict = field(default_factory=dict)
    #: first backoff step and its cap, in seconds (not config keys: tests shorten them)
    backoff_base: float = 1.0
    backoff_max: float = 60.0

    @classmethod
    def from_spec(
        cls, spec: Mapping[str, Any], name: str, *, kind: str, default_base_url: str
    ) -> ApiSettings:
        """The settings of the entry ``spec`` of ``models.<name>``, checked against the schema
        (each error names its key); a blank model id is an error too."""
        schema.validate_entry(spec, "models.<name>", f"models.{name}")
        if not str(spec.get("model") or "").strip():
            raise InputError(
                f"the {kind} backend needs the provider's model id (e.g. gpt-4o-mini)",
                key=f"models.{name}.model",
            )

        def value(key: str) -> Any:
            return spec[key] if key in spec else model_default(key)

        return cls(
            name=name,
            kind=kind,
            model=str(spec["model"]).strip(),
            base_url=(spec.get("base_url") or default_base_url).rstrip("/"),
            api_key_env=spec.get("api_key_env", DEFAULT_KEY_ENV[kind]),
            concurrency=value("concurrency"),
            timeout=float(value("timeout")),
            max_retries=value("max_retries"),
            batch=value("batch"),
            batch_poll_interval=float(value("batch_poll_interval")),
            send_sampling=value("send_sampling"),
            extra_body=dict(spec.get("extra_body") or {}),
        )


def read_api_key(settings: ApiSettings) -> str | None:
    """The API key from the environment variable ``settings.api_key_env`` (None: no key needed).

    Raises :class:`InputError` naming the variable when it is unset or empty, so a run fails
    before any request is made."""
    env = settings.api_key_env
    if env is None:
        return None
    value = os.environ.get(env, "").strip()
    if not value:
        raise _missing_key(env, settings.name, settings.kind, settings.model)
    return value


def _missing_key(env: str, name: str, kind: str, model: str) -> InputError:
    return InputError(
        f"the environment variable {env} is not set; it must hold the API key of "
        f"model {name!r} ({kind}, {model}). "
        f"Export it before running (export {env}=...), or set api_key_env: null "
        f"for a server that needs no key",
        key=f"models.{name}.api_key_env",
    )


def check_api_keys(config: Mapping[str, Any]) -> None:
    """Every API key variable of the models of ``config`` is set (the workflow checks this when a
    run starts, never in a dry run); the first one missing is an :class:`InputError` naming the
    variable and the model's ``api_key_env`` key, as :func:`read_api_key` would in the job."""
    for name, spec in (config.get("models") or {}).items():
        kind = (spec or {}).get("backend")
        if kind in DEFAULT_KEY_ENV:
            env = spec.get("api_key_env", DEFAULT_KEY_ENV[kind])
            if env and not os.environ.get(env, "").strip():
                raise _missing_key(env, str(name), kind, str(spec.get("model")))


def api_key_envvars(config: Mapping[str, Any]) -> list[str]:
    """The environment variables holding the API keys of the models a config uses (sorted, unique).

    The workflow passes those of them that are set on to its jobs (``envvars:``) and checks them all
    when a run starts (:func:`check_api_keys`); a config with only local models (the default) needs
    none."""
    names = set()
    for spec in (config.get("models") or {}).values():
        kind = (spec or {}).get("backend")
        if kind in DEFAULT_KEY_ENV:
            env = spec.get("api_key_env", DEFAULT_KEY_ENV[kind])
            if env:
                names.add(env)
    return sorted(names)


# -- retries ------------------------------------------------------------------------------------


def status_retry_kind(status: int | None) -> str | None:
    """The retry kind of an HTTP status: 'rate_limited' (429), 'server_error' (5xx and the other
    retried statuses), None (do not retry)."""
    if status == 429:
        return "rate_limited"
    if isinstance(status, int) and (status >= 500 or status in RETRY_STATUSES):
        return "server_error"
    return None


#: Provider error codes of an account whose quota or credit is used up (OpenAI's
#: ``insufficient_quota`` comes as HTTP 429, which waiting does not cure).
QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})


def provider_said(exc: BaseException) -> tuple[str | None, str]:
    """(error code or type, message) of a provider's error answer, from the body the SDKs keep
    (OpenAI: ``{"error": {"message", "code", "type"}}``; Anthropic: ``{"type": "error", "error":
    {"type", "message"}}``), else (None, the exception's text); the message on one line."""
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(err, dict) and err.get("message"):
        code = err.get("code") or err.get("type")
        return (str(code) if code else None), " ".join(str(err["message"]).split())
    code = getattr(exc, "code", None)
    return (code if isinstance(code, str) else None), " ".join(str(exc).split())


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    for header, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(header)
        if raw is None:
            continue
        try:
            value = float(raw) / scale
        except ValueError:
            if header != "retry-after":
                continue
            try:
                value = email.utils.parsedate_to_datetime(raw).timestamp() - time.time()
            except (TypeError, ValueError):  # neither seconds nor an HTTP date: ignored
                continue
        if math.isfinite(value):
            return max(0.0, value)
    return None


def backoff_delay(
    attempt: int, retry_after: float | None, *, base: float, cap: float, rng: random.Random | None = None
) -> float:
    """Wait before retry number ``attempt + 1``.

    With a ``Retry-After`` the wait is that value plus up to 10% jitter (so that the workers told
    to wait the same time do not all come back at once); without, exponential backoff with
    "equal jitter": ``min(cap, base * 2**attempt)`` times a factor drawn from [0.5, 1]."""
    u = rng.random() if rng is not None else random.random()
    if retry_after is not None:
        return retry_after * (1.0 + 0.1 * u)
    return min(cap, base * 2.0**attempt) * (0.5 + 0.5 * u)


def label_distribution(
    top: Iterable[tuple[str, float]], labels: Sequence[str]
) -> tuple[list[float] | None, float | None]:
    """Label probabilities from the (token, logprob) alternatives at the first answer position.

    The same quantities as the local backend: the probability of each label token (matched
    exactly, as the local backend matches the label's token id), renormalised over the labels,
    and their total mass before renormalising. An API returns only the top-k alternatives, so a
    label outside them counts as 0 and the mass is a lower bound; no label among them gives
    ``(None, 0.0)``."""
    found: dict[str, float] = {}
    for token, logprob in top:
        if token in labels and token not in found and logprob is not None:
            found[token] = math.exp(logprob)
    mass = sum(found.values())
    if mass <= 0:
        return None, 0.0
    return [found.get(lab, 0.0) / mass for lab in labels], mass


# -- the backend --------------------------------------------------------------------------------


@dataclass
class BatchStatus:
    """A provider batch as last polled."""

    ended: bool
    status: str
    counts: dict = field(default_factory=dict)
    #: the batch as a whole failed (nothing was processed, e.g. the input did not validate)
    failed: bool = False
    detail: str = ""


class BatchItemFailed(ProviderError):
    """Some requests of a batch came back without an answer (errored, expired or cancelled)."""


@dataclass(frozen=True)
class _Signal:
    """An interrupt, as an item of the online driver's queue."""

    signum: int

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class _Interrupts:
    """SIGINT and SIGTERM while an online driver runs: each arrives as a :class:`_Signal` in its
    queue (the loop's signal handlers), so the driver decides what to wait for; the previous
    handlers are restored by :meth:`remove`. Outside the main thread (where signals cannot be
    handled) nothing is installed and interrupts behave as before."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue):
        self.loop = loop
        self.count = 0
        self.first: int | None = None
        self.deadline: float | None = None
        self._previous: dict[int, Any] = {}
        for sig in self.SIGNALS:
            try:
                previous = signal.getsignal(sig)
                loop.add_signal_handler(sig, self._arrived, sig, queue)
                self._previous[sig] = previous
            except (ValueError, RuntimeError, NotImplementedError):  # not the main thread, or no signals here
                continue

    def _arrived(self, sig: int, queue: asyncio.Queue) -> None:
        self.count += 1
        self.first = self.first or sig
        queue.put_nowait(_Signal(sig))

    def remaining(self) -> float | None:
        """Seconds left of the grace (None: no interrupt yet, wait as long as it takes)."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def exception(self) -> BaseException:
        """What the interrupt goes on as: KeyboardInterrupt for SIGINT, exit 143 for SIGTERM."""
        if self.first == signal.SIGTERM:
            return SystemExit(128 + signal.SIGTERM)
        return KeyboardInterrupt()

    def remove(self) -> None:
        for sig, previous in self._previous.items():
            self.loop.remove_signal_handler(sig)
            signal.signal(sig, previous)
        self._previous.clear()


class ApiBackend(Backend, abc.ABC):
    """Base of the API backends: settings, key, async driver, retries, batch mode.

    ``http_client``: a factory of ``httpx2.AsyncClient`` objects handed to the SDK (a proxy, or a
    mock transport in tests); None uses the SDK's default client."""

    kind: ClassVar[str]
    default_base_url: ClassVar[str]
    #: at most this many requests per provider batch
    batch_limit: ClassVar[int] = 50_000
    #: seconds an interrupted job waits for its requests in flight, so their answers are kept
    #: (the config key ``interrupt_grace``, its schema default until a session sets it; 0: stop at once)
    interrupt_grace: float
    #: exception classes of the SDK that mean "timed out" / "could not connect"
    timeout_errors: ClassVar[tuple[type[BaseException], ...]] = ()
    connection_errors: ClassVar[tuple[type[BaseException], ...]] = ()

    def __init__(
        self, settings: ApiSettings, *, need_key: bool = True, http_client: Callable[[], Any] | None = None
    ):
        self.settings = settings
        self.interrupt_grace = float(schema.default("interrupt_grace"))
        self._api_key = read_api_key(settings) if need_key else None
        self._http_client = http_client
        self.stats: Counter = Counter()
        # one INFO line per HTTP request would drown the job logs
        logging.getLogger("httpx2").setLevel(logging.WARNING)
        logging.getLogger("httpx").setLevel(logging.WARNING)

    @classmethod
    def from_spec(
        cls,
        spec: Mapping[str, Any],
        name: str = "model",
        *,
        need_key: bool = True,
        http_client: Callable[[], Any] | None = None,
    ) -> ApiBackend:
        """The backend of model entry ``models.<name>``: the shared settings plus the options
        :meth:`options_from_spec` of the subclass reads (each bad value names its key)."""
        options = cls.options_from_spec(spec, name)  # first: a backend's refusal says why
        settings = ApiSettings.from_spec(spec, name, kind=cls.kind, default_base_url=cls.default_base_url)
        return cls(settings, **options, need_key=need_key, http_client=http_client)

    @classmethod
    def options_from_spec(cls, spec: Mapping[str, Any], name: str) -> dict[str, Any]:
        """Backend-specific constructor options from the model entry (none by default)."""
        return {}

    # -- what subclasses provide ----------------------------------------------------------
    @abc.abstractmethod
    def _new_client(self) -> Any:
        """A fresh async SDK client (SDK retries off, per-request timeout set)."""

    @abc.abstractmethod
    async def _send(self, client: Any, request: Request) -> Completion:
        """One online request (no retries: :meth:`_call` does them)."""

    @abc.abstractmethod
    async def _batch_submit(self, client: Any, items: list[tuple[str, Request]], tag: str) -> str:
        """Submit ``(custom_id, request)`` items as one provider batch; return the batch id."""

    @abc.abstractmethod
    async def _batch_status(self, client: Any, batch_id: str) -> BatchStatus:
        """Poll a batch."""

    @abc.abstractmethod
    async def _batch_results(
        self, client: Any, batch_id: str, requests: Mapping[str, Request]
    ) -> dict[str, Completion | str]:
        """Download an ended batch: custom_id -> completion, or an error message. ``requests``: the
        request of each custom_id (its label tokens and label steps, for the label distribution)."""

    # -- identity -------------------------------------------------------------------------
    @property
    def model(self) -> str:
        return self.settings.model

    def describe(self) -> str:
        return f"{self.kind} {self.settings.model} at {self.settings.base_url}"

    def _client_key(self) -> str:
        """What the SDK is given as key: a placeholder for servers that need none."""
        if self._api_key is None and self.settings.api_key_env is not None:
            # built with need_key=False (estimates): read now, failing with the variable's name
            self._api_key = read_api_key(self.settings)
        return self._api_key or "no-key"

    # -- running coroutines from the synchronous CachedClient -----------------------------
    def complete(self, request: Request) -> Completion:
        for _, completion in self.complete_many([request]):
            return completion
        raise RuntimeError("no answer")  # complete_many raises before this

    def complete_many(self, requests: Iterable[Request]) -> Iterator[tuple[int, Completion]]:
        if self.settings.batch:
            requests = list(requests)
            return self._batched(requests) if requests else iter(())
        if isinstance(requests, Sequence) and not requests:
            return iter(())
        return self._online(requests)

    def streams_requests(self) -> bool:
        """Online requests are taken one by one as a worker frees up; a provider batch is one
        submission."""
        return not self.settings.batch

    def _online(self, requests: Iterable[Request]) -> Iterator[tuple[int, Completion]]:
        """Answer ``requests`` with ``concurrency`` workers; yield each answer as it arrives.

        On an error that retries do not cure, no new request is started, the ones in flight are
        awaited and yielded (so they are saved), then the first error is raised. An interrupt
        (SIGINT: Ctrl-C; SIGTERM: a scheduler's cancel) is the same with a deadline: no new
        request, the ones in flight awaited for :attr:`interrupt_grace` seconds and yielded as
        they arrive (the caller stores each), then the interrupt goes on (KeyboardInterrupt, or
        exit status 143 for SIGTERM); a second interrupt stops at once."""
        loop = asyncio.new_event_loop()
        client = self._new_client()
        queue: asyncio.Queue = asyncio.Queue()
        todo = iter(enumerate(requests))
        stop = False

        async def worker() -> None:
            nonlocal stop
            try:
                for i, req in todo:  # one shared iterator: each request is taken exactly once
                    if stop:
                        break
                    try:
                        queue.put_nowait((i, await self._call(client, req)))
                    except Exception as exc:  # noqa: BLE001 - handed to the caller below
                        stop = True
                        queue.put_nowait((i, exc))
            finally:
                queue.put_nowait(None)

        n_workers = self.settings.concurrency
        if isinstance(requests, Sequence):
            n_workers = min(n_workers, len(requests))
        workers = [loop.create_task(worker()) for _ in range(n_workers)]
        signals = _Interrupts(loop, queue)
        error: BaseException | None = None
        try:
            finished = 0
            while finished < len(workers):
                try:
                    items = [loop.run_until_complete(asyncio.wait_for(queue.get(), signals.remaining()))]
                except TimeoutError:
                    log.warning(
                        "%s: %d requests in flight did not answer within the %g s grace after the "
                        "interrupt: a rerun sends them again",
                        self.describe(),
                        sum(not w.done() for w in workers),
                        self.interrupt_grace,
                    )
                    break
                while not queue.empty():
                    items.append(queue.get_nowait())
                for item in items:
                    if item is None:
                        finished += 1
                    elif isinstance(item, _Signal):
                        stop = True
                        if signals.count > 1 or self.interrupt_grace <= 0:
                            raise signals.exception()
                        signals.deadline = time.monotonic() + self.interrupt_grace
                        log.warning(
                            "%s: interrupted (%s): no new request; waiting up to %g s for the %d in "
                            "flight, so that their answers are kept (interrupt again to stop now)",
                            self.describe(),
                            item.name,
                            self.interrupt_grace,
                            sum(not w.done() for w in workers),
                        )
                    elif isinstance(item[1], BaseException):
                        error = error or item[1]
                    else:
                        yield item
            if signals.count:
                raise signals.exception()
            if error is not None:
                raise error
        finally:
            stop = True
            for w in workers:
                w.cancel()
            loop.run_until_complete(asyncio.gather(*workers, return_exceptions=True))
            loop.run_until_complete(client.close())
            signals.remove()  # after the loop's last run: an interrupt that came meanwhile is counted
            loop.close()
        if signals.count:  # it came after the last answer: it still interrupts the job
            raise signals.exception()

    async def _call(self, client: Any, request: Request) -> Completion:
        """One online request, retried (see :meth:`_retrying`)."""
        completion, retries = await self._retrying(lambda: self._send(client, request))
        self.stats["requests"] += 1
        completion.extra["retries"] = retries
        return completion

    async def _retrying(self, fn: Callable[[], Awaitable[T]]) -> tuple[T, int]:
        """Await ``fn()``, retrying on 408/409/429/5xx, timeouts and connection errors up to
        ``max_retries`` times (:func:`backoff_delay`, honouring Retry-After). Returns the result
        and the number of retries it took."""
        attempt = 0
        while True:
            self.stats["attempts"] += 1
            try:
                return await fn(), attempt
            except Exception as exc:  # noqa: BLE001 - classified, re-raised when not retryable
                kind = self._retry_kind(exc)
                if kind is None:
                    explained = self._explain(exc)
                    if explained is exc:
                        raise
                    raise explained from exc
                if attempt >= self.settings.max_retries:
                    self.stats["gave_up"] += 1
                    raise self._gave_up(exc, attempt + 1) from exc
                headers = getattr(getattr(exc, "response", None), "headers", None)
                delay = backoff_delay(
                    attempt,
                    retry_after_seconds(headers),
                    base=self.settings.backoff_base,
                    cap=self.settings.backoff_max,
                )
                self.stats["retries"] += 1
                self.stats[kind] += 1
                log.debug("%s: %s, retry %d in %.2f s", self.describe(), kind, attempt + 1, delay)
                await asyncio.sleep(delay)
                attempt += 1

    def _retry_kind(self, exc: BaseException) -> str | None:
        """'rate_limited', 'server_error', 'timeout' or 'connection_error'; None: do not retry (a
        used-up quota is a 429 that waiting does not cure)."""
        if self.timeout_errors and isinstance(exc, self.timeout_errors):
            return "timeout"
        if self.connection_errors and isinstance(exc, self.connection_errors):
            return "connection_error"
        if provider_said(exc)[0] in QUOTA_CODES:
            return None
        return status_retry_kind(getattr(exc, "status_code", None))

    def _said(self, exc: BaseException) -> str:
        """The provider's words about ``exc`` on one line, the API key removed should they echo it."""
        text = provider_said(exc)[1]
        if self._api_key and self._api_key in text:
            text = text.replace(self._api_key, "<key>")
        return text

    def _explain(self, exc: BaseException) -> BaseException:
        """An error retries do not cure, as one that says what to do: a refused key names the
        variable it came from (never the key), an unknown model (404) the model's key, a used-up
        quota and any other refusal are a :class:`ProviderError`; an exception that is no HTTP
        answer is left as it is."""
        status = getattr(exc, "status_code", None)
        name = self.settings.name
        if status in (401, 403):
            where = (
                f"the key in ${self.settings.api_key_env}"
                if self.settings.api_key_env
                else "no key was sent (api_key_env: null)"
            )
            return InputError(
                f"{self.describe()} refused the request (HTTP {status}): {where} is not accepted",
                key=f"models.{name}.api_key_env",
            )
        if not isinstance(status, int):
            return exc
        code, _ = provider_said(exc)
        said = self._said(exc)
        if status == 404:
            return InputError(
                f"{self.describe()} answered HTTP 404 ({said}): it serves no model "
                f"{self.settings.model!r} there; name a model id it serves (or check "
                f"models.{name}.base_url)",
                key=f"models.{name}.model",
            )
        if code in QUOTA_CODES:
            return ProviderError(
                f"{self.describe()}: the account's quota is used up (HTTP {status}, {code}: {said}); "
                "add credit or raise the limit with the provider, then rerun (the answers received "
                "so far are cached: a rerun pays only for the rest)",
                status=status,
            )
        return ProviderError(
            f"{self.describe()} refused the request (HTTP {status}: {said}); not retried, as the "
            f"same request gets the same answer: check the model entry models.{name} (model, "
            "extra_body, the token limit) against what the provider accepts, then rerun",
            status=status,
        )

    def _gave_up(self, exc: BaseException, attempts: int) -> ProviderError:
        """No answer after every retry: the last error, and what to do."""
        status = getattr(exc, "status_code", None)
        what = f"HTTP {status}: {self._said(exc)}" if isinstance(status, int) else self._said(exc)
        if self.connection_errors and isinstance(exc, self.connection_errors):
            what += f"; check models.{self.settings.name}.base_url and that the server is up"
        return ProviderError(
            f"{self.describe()}: giving up after {attempts} attempts "
            f"(max_retries={self.settings.max_retries}): {what}; the provider is failing or "
            "overloaded: rerun later (the answers received so far are cached: a rerun pays only "
            f"for the rest), or allow more retries (models.{self.settings.name}.max_retries)",
            status=status if isinstance(status, int) else None,
        )

    def close(self) -> None:
        if self.stats:
            log.info("%s: %s", self.describe(), ", ".join(f"{k} {v}" for k, v in sorted(self.stats.items())))

    # -- batch mode -----------------------------------------------------------------------
    def _batch_store(self) -> BatchStore:
        if self.state_dir is None:  # not bound to a cache: beside the default cache, as it opens
            path = default_cache_path().parent / "batches.sqlite"
            return BatchStore(path, wal=resolve_mode(path) == "wal")
        return BatchStore(self.state_dir / "batches.sqlite", wal=self.state_mode == "wal")

    def _batched(self, requests: Sequence[Request]) -> Iterator[tuple[int, Completion]]:
        """Submit what no live batch holds yet, poll every batch involved, yield the answers.

        The batch id is committed to the state file right after the provider accepts the batch
        (under a file lock, so two jobs never submit the same request); a rerun finds it there
        and resumes polling. Requests that a batch returns without an answer are marked failed
        and raise :class:`BatchItemFailed` after the others are yielded: a rerun resubmits only
        them."""
        keys = [request_key(cache_request(self, r)) for r in requests]
        where: dict[str, list[int]] = {}
        for i, k in enumerate(keys):
            where.setdefault(k, []).append(i)
        store = self._batch_store()
        loop = asyncio.new_event_loop()
        client = self._new_client()
        try:
            with store.locked():
                owner = store.live_batches(list(where))
                new = [k for k in where if k not in owner]
                for start in range(0, len(new), self.batch_limit):
                    chunk = new[start : start + self.batch_limit]
                    tag = store.submission_tag(chunk)
                    batch_id = loop.run_until_complete(
                        self._batch_submit(client, [(k, requests[where[k][0]]) for k in chunk], tag)
                    )
                    store.record(batch_id, self.kind, self.identity(), tag, chunk)
                    self.stats["batches_submitted"] += 1
                    log.info("%s: submitted batch %s with %d requests", self.describe(), batch_id, len(chunk))
                    owner.update({k: batch_id for k in chunk})
            resumed = len(where) - len(new)
            if resumed:
                log.info(
                    "%s: %d requests are already in submitted batches; resuming them",
                    self.describe(),
                    resumed,
                )
            by_batch: dict[str, list[str]] = {}
            for k, b in owner.items():
                by_batch.setdefault(b, []).append(k)
            failed: dict[str, str] = {}
            for batch_id, batch_keys in by_batch.items():
                status = loop.run_until_complete(self._poll(client, batch_id))
                store.set_status(batch_id, status.status)
                if status.failed:
                    store.mark(batch_id, batch_keys, "failed")
                    raise ProviderError(
                        f"{self.describe()}: batch {batch_id} failed as a whole "
                        f"({status.status}): {status.detail}; rerun to resubmit"
                    )
                asked = {k: requests[where[k][0]] for k in batch_keys}

                def fetch(b: str = batch_id, rs: dict[str, Request] = asked):
                    return self._batch_results(client, b, rs)

                results, _ = loop.run_until_complete(self._retrying(fetch))
                done = []
                for k in batch_keys:
                    answer = results.get(k, f"no result for custom_id {k} in batch {batch_id}")
                    if isinstance(answer, Completion):
                        answer.extra["batch_id"] = batch_id
                        done.append(k)
                        for i in where[k]:
                            yield i, answer
                    else:
                        failed[k] = answer
                store.mark(batch_id, done, "done")
                store.mark(batch_id, [k for k in batch_keys if k in failed], "failed")
            if failed:
                first = next(iter(failed.values()))
                raise BatchItemFailed(
                    f"{self.describe()}: {len(failed)} batch requests came back "
                    f"without an answer (first: {first}); the answered ones are "
                    "cached, a rerun resubmits only these"
                )
        finally:
            loop.run_until_complete(client.close())
            loop.close()
            store.close()

    async def _poll(self, client: Any, batch_id: str) -> BatchStatus:
        """Poll until the batch has ended, logging its progress."""
        last = None
        while True:
            status, _ = await self._retrying(lambda: self._batch_status(client, batch_id))
            line = f"{status.status} {status.counts}"
            if line != last:
                log.info("%s: batch %s %s", self.describe(), batch_id, line)
                last = line
            if status.ended:
                return status
            await asyncio.sleep(self.settings.batch_poll_interval)
