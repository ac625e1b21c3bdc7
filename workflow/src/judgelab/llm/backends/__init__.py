"""LLM backends behind one registry, by name (the config's ``models.<name>.backend``).

* :mod:`.base` - the contract: :class:`~.base.Request`, :class:`~.base.Completion`,
  :class:`~.base.Backend`;
* :mod:`.local` - the embedded GGUF model (llama-cpp-python); :mod:`.api` - what the API backends
  share (concurrency, retries, batches); :mod:`.openai_compat`, :mod:`.anthropic_api`,
  :mod:`.bedrock` - the providers; :mod:`.batch` - provider batch state beside the cache.

:data:`BACKENDS` maps a backend's name to the class that implements it, as ``module:Class``;
:func:`make_backend` imports only the chosen module, so a job loads only its own backend's
dependencies. A new backend is one entry (:func:`register_backend`). The cache in front of any
backend is :class:`judgelab.llm.client.CachedClient`.
"""

from __future__ import annotations

from importlib import import_module

from judgelab.errors import InputError
from judgelab.llm.backends.base import Backend

#: backend name -> "module:Class" (imported when a model of that backend is built)
BACKENDS: dict[str, str] = {
    "local": "judgelab.llm.backends.local:LocalBackend",
    "openai": "judgelab.llm.backends.openai_compat:OpenAIBackend",
    "anthropic": "judgelab.llm.backends.anthropic_api:AnthropicBackend",
    "bedrock": "judgelab.llm.backends.bedrock:BedrockBackend",
}


def register_backend(name: str, target: str) -> None:
    """Make ``backend: <name>`` build ``target`` (``"package.module:Class"``, a :class:`Backend`
    subclass with ``from_spec(spec, name, *, need_key)``)."""
    if ":" not in target:
        raise ValueError(f"backend target {target!r} is not 'module:Class'")
    BACKENDS[name] = target


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
    ``need_key=False`` defers that to the first call (cost estimates send none)."""
    return backend_class(spec.get("backend"), name).from_spec(spec, name, need_key=need_key)
