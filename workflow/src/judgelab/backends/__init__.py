"""LLM backends. Every backend answers :class:`~judgelab.backends.base.Request` objects with
:class:`~judgelab.backends.base.Completion` objects; :class:`CachedClient` puts the persistent
request cache in front of any of them."""

from .base import Backend, CachedClient, Completion, Request, make_backend

__all__ = ["Backend", "CachedClient", "Completion", "Request", "make_backend"]
