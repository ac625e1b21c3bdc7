"""Snakemake's record of the job that wrote a workflow file, and whether that file can stand for
what this config's job would write (:func:`made_for`): what ``judgelab estimate`` checks before
reading a prepared table, and a study's estimate before reading its own prepared files."""

from __future__ import annotations

import ast
import base64
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path


def snakemake_record(directory: Path, output: str) -> dict | None:
    """Snakemake's metadata record of the job that wrote ``output`` (a path relative to the run's
    working directory ``directory``, as the rule names it): its rule, params and input as the
    workflow tracks them; None when there is none or it cannot be read."""
    folder = directory / ".snakemake" / "metadata"
    if not folder.is_dir():
        return None
    try:
        max_len = os.pathconf(folder, "PC_NAME_MAX") or 255
    except (OSError, ValueError):
        max_len = 255
    b64 = base64.urlsafe_b64encode(output.encode()).decode()
    parts = [b64[i : i + max_len - 1] for i in range(0, len(b64), max_len - 1)]
    path = folder.joinpath(*(["@" + p for p in parts[:-1]] + parts[-1:]))
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _param_values(record: dict) -> list:
    """The recorded params of a job as values (Snakemake stores each as its repr; a JSON string
    param is decoded)."""
    out = []
    for p in record.get("params") or []:
        try:
            v = ast.literal_eval(p) if isinstance(p, str) else p
        except (ValueError, SyntaxError):
            v = p
        if isinstance(v, str):
            try:
                v = json.loads(v)
            except ValueError:
                pass
        out.append(v)
    return out


def made_for(
    directory: Path, output: str, selection: Mapping, inputs: Iterable[str], bundled: str | None = None
) -> str | None:
    """Why the workflow file ``output`` cannot stand for what this config's job would write, or
    None when it can: Snakemake's record of the job that wrote it has exactly ``selection`` (and
    the ``bundled`` param: the bundled files by name and digest) among its params and ``inputs``
    as its input files, and no input is newer than it (the checks the workflow makes before
    reusing a file)."""
    record = snakemake_record(directory, output)
    if record is None:
        return "no record of how it was made (Snakemake's .snakemake/metadata), so maybe by another config"
    values = _param_values(record)
    if dict(selection) not in values:
        made = next((v for v in values if isinstance(v, dict)), None)
        if made is None:
            return "its recorded selection cannot be read"
        diff = {k: (made.get(k), v) for k, v in selection.items() if made.get(k) != v}
        shown = ", ".join(f"{k} {a!r} there, {b!r} here" for k, (a, b) in sorted(diff.items()))
        return f"made with another selection ({shown})"
    if bundled is not None and json.loads(bundled) not in values:
        return "made from other bundled files (their names or contents differ)"
    wanted = sorted(str(p) for p in inputs)
    if sorted(record.get("input") or []) != wanted:
        return f"made from other files ({sorted(record.get('input') or [])}; this config reads {wanted})"
    made_at = (directory / output).stat().st_mtime
    newer = [p for p in wanted if (directory / p).exists() and (directory / p).stat().st_mtime > made_at]
    if newer:
        return f"its input files changed since ({newer})"
    return None
