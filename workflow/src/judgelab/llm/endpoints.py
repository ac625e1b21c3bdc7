"""``judgelab endpoints``: a config overlay pointing judge models at running OpenAI-compatible
servers (vLLM, llama.cpp's server), from the URL files ``profiles/vllm/serve.sh`` writes.

Each ``NAME=SERVED`` pair becomes ``models.NAME: {backend: openai, model: SERVED, base_url: URL}``;
the URL comes from ``URL_DIR/NAME.url`` (``--url-dir``) or one ``--url-file``. Every server is
asked for ``/models`` first: a server that does not answer, or does not serve SERVED, is an error
naming the URL file, so a run never starts against a dead or wrong endpoint.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Mapping
from pathlib import Path

import yaml

from judgelab.errors import InputError


def read_url(path: str | Path) -> str:
    path = Path(path)
    if not path.exists():
        raise InputError(
            "no URL file (is the server job running? serve.sh writes it once the server answers)",
            path=str(path),
        )
    url = path.read_text(encoding="utf-8").strip()
    if not url.startswith(("http://", "https://")):
        raise InputError(f"not a URL: {url[:80]!r}", path=str(path), line=1)
    return url.rstrip("/")


def served_models(url: str, timeout: float = 10) -> list[str]:
    """The model ids an OpenAI-compatible server lists at ``URL/models``."""
    with urllib.request.urlopen(f"{url}/models", timeout=timeout) as resp:
        data = json.load(resp)
    return [m.get("id") for m in data.get("data", [])]


def overlay(models: Mapping[str, str], urls: Mapping[str, tuple[str, str]]) -> dict:
    """``models``: judge name -> served model id; ``urls``: judge name -> (url, url file)."""
    out: dict = {"models": {}}
    for name, served in models.items():
        url, source = urls[name]
        try:
            ids = served_models(url)
        except OSError as exc:
            raise InputError(f"the server at {url} does not answer ({exc})", path=source) from None
        if served not in ids:
            raise InputError(f"the server at {url} serves {ids}, not {served!r}", path=source)
        out["models"][name] = {"backend": "openai", "model": served, "base_url": url}
    return out


def write_overlay(
    models: Mapping[str, str], out: str | Path, *, url_file: str | None = None, url_dir: str | None = None
) -> dict:
    if (url_file is None) == (url_dir is None):
        raise InputError("give exactly one of --url-file and --url-dir")
    urls = {}
    for name in models:
        source = str(Path(url_dir) / f"{name}.url") if url_dir else str(url_file)
        urls[name] = (read_url(source), source)
    data = overlay(models, urls)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(
        "# written by `judgelab endpoints`: merge it after the paper config\n"
        + yaml.safe_dump(data, sort_keys=False),
        encoding="utf-8",
    )
    return data
