"""Cache keys: the SHA-256 of a canonical JSON of everything that determines an answer (the
backend's identity, its sampling parameters, the token bound and the exact messages; see
:func:`judgelab.llm.client.cache_request`). API keys are never part of it."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical(obj: Any) -> str:
    """The JSON text of ``obj`` with sorted keys and no white space: equal values, equal text."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_key(request: dict) -> str:
    """The cache key of a request (:func:`canonical`, hashed)."""
    return hashlib.sha256(canonical(request).encode("utf-8")).hexdigest()
