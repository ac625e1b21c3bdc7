"""LLM backends behind one registry, by name (the config's ``models.<name>.backend``).

* :mod:`.base` - the contract: :class:`~.base.Request`, :class:`~.base.Completion`,
  :class:`~.base.Backend`;
* :mod:`.local` - the embedded GGUF model (llama-cpp-python); :mod:`.api` - what the API backends
  share (concurrency, retries, batches); :mod:`.openai_compat`, :mod:`.anthropic_api`,
  :mod:`.bedrock` - the providers; :mod:`.batch` - provider batch state beside the cache.

:data:`BACKENDS` maps a backend's name to the class that implements it, as ``module:Class``;
:func:`make_backend` imports only the chosen module, so a job loads only its own backend's
dependencies. :data:`CAPABILITIES` says what each can do (:class:`Capabilities`: runs here, reads
the logits, is priced): the rest of the package asks :func:`capabilities`, never a backend's
name. A new backend is one entry (:func:`register_backend`). The cache in front of any
backend is :class:`judgelab.llm.client.CachedClient`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from judgelab import schema
from judgelab.errors import InputError
from judgelab.llm.backends.base import Backend

#: backend name -> "module:Class" (imported when a model of that backend is built)
BACKENDS: dict[str, str] = {
    "local": "judgelab.llm.backends.local:LocalBackend",
    "openai": "judgelab.llm.backends.openai_compat:OpenAIBackend",
    "anthropic": "judgelab.llm.backends.anthropic_api:AnthropicBackend",
    "bedrock": "judgelab.llm.backends.bedrock:BedrockBackend",
}


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do, declared with it in the registry (the defaults: a provider's API).

    ``runs_here``: the model runs inside the job on this machine - a model file here (the config
    check finds it, the manifest records its digest), the job's CPU threads and memory, a served
    name that is the file's (recorded, never compared with the configured ``model``) - rather
    than at a provider behind an API (its jobs hold a ``<backend>_jobs`` resource token);
    ``reads_logits``: it gives the full label-token distribution at the answer position, so
    ``answer: auto`` reads the label from the logits there (otherwise it parses the text);
    ``priced``: a provider bills its tokens, so a cost without ``prices`` is unknown (an unpriced
    backend costs nothing)."""

    runs_here: bool = False
    reads_logits: bool = False
    priced: bool = True


#: backend name -> what it can do (:class:`Capabilities`)
CAPABILITIES: dict[str, Capabilities] = {
    "local": Capabilities(runs_here=True, reads_logits=True, priced=False),
    "openai": Capabilities(),
    "anthropic": Capabilities(),
    "bedrock": Capabilities(),
}


def register_backend(name: str, target: str, capabilities: Capabilities | None = None) -> None:
    """Make ``backend: <name>`` build ``target`` (``"package.module:Class"``, a :class:`Backend`
    subclass with ``from_spec(spec, name, *, need_key)``), able to do ``capabilities`` (default:
    a provider's API)."""
    if ":" not in target:
        raise ValueError(f"backend target {target!r} is not 'module:Class'")
    BACKENDS[name] = target
    CAPABILITIES[name] = capabilities or Capabilities()


def capabilities(kind: str | None) -> Capabilities:
    """What the backend ``kind`` can do; a name not registered (None: an entry without a backend)
    can do what a provider's API can (the config's schema names the known backends)."""
    return CAPABILITIES.get(kind or "", Capabilities())


def api_backends() -> tuple[str, ...]:
    """The registered backends that call a provider's API (not :attr:`Capabilities.runs_here`)."""
    return tuple(name for name in BACKENDS if not capabilities(name).runs_here)


def backend_class(kind: str | None, name: str = "model") -> type[Backend]:
    """The class registered for ``kind`` (imported now); an unknown name is an error naming the key."""
    if kind not in BACKENDS:
        raise InputError(
            f"unknown backend {kind!r}; available: {', '.join(BACKENDS)}",
            key=f"models.{name}.backend",
        )
    module, _, cls = BACKENDS[kind].partition(":")
    return getattr(import_module(module), cls)


def make_backend(spec: dict, name: str = "model", *, need_key: bool = True) -> Backend:
    """Build a backend from a model entry of the config (``models.<name>``).

    API backends read their key from the environment here and fail naming the variable when it
    is missing (bedrock: the region and credentials of the AWS chain, naming what is missing);
    ``need_key=False`` defers that to the first call (cost estimates send none). The entry's
    ``temperature`` (every backend; the schema's default where unset) is set here, as a float, so
    0 keys the cache as the fixed 0.0 did before it was a key."""
    backend = backend_class(spec.get("backend"), name).from_spec(spec, name, need_key=need_key)
    backend.temperature = temperature_of(spec)
    return backend


def temperature_of(spec: Mapping[str, Any]) -> float:
    """The sampling temperature of a model entry (``models.<name>.temperature``, the schema's
    default where unset), as a float."""
    value = spec.get("temperature")
    return float(schema.default("models.<name>.temperature") if value is None else value)
