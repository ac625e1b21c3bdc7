"""Locate the ``resources/`` folder (prompts, personas, bundled sample) of the workflow being run."""

from __future__ import annotations

import os
from pathlib import Path


def resources_dir(resources: str | Path | None = None) -> Path:
    """``resources`` when given (the workflow passes its own folder's), else
    ``$JUDGELAB_RESOURCES``, else ``resources/`` of the checkout holding this package."""
    if resources is not None:
        return Path(resources)
    env = os.environ.get("JUDGELAB_RESOURCES")
    if env:
        return Path(env)
    # workflow/src/judgelab/data/resources.py -> the repository root is four levels up
    return Path(__file__).resolve().parents[4] / "resources"
