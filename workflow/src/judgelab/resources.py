"""Locate the repository's ``resources/`` folder (prompts, personas, bundled sample)."""

from __future__ import annotations

import os
from pathlib import Path


def resources_dir() -> Path:
    """``$JUDGELAB_RESOURCES`` if set, else ``resources/`` of the checkout holding this package."""
    env = os.environ.get("JUDGELAB_RESOURCES")
    if env:
        return Path(env)
    # workflow/src/judgelab/resources.py -> repository root is three levels up
    return Path(__file__).resolve().parents[3] / "resources"
