"""Files that ship with the workflow (the bundled sample under ``resources/``) as a job reads them
without being rule inputs.

Snakemake records a rule's input files by their path relative to the run's working directory; a
bundled file's path (``../judgelab/resources/sample/dl19/qrels.txt``) changes when the run folder
moves relative to its workflow, and Snakemake then reruns the job ("Set of input files has
changed") and everything after it. A bundled file is therefore a param instead: its name inside
the workflow folder and the SHA-256 of its content (:func:`param`). Snakemake reruns the job when
the content changes (the param changes), never when only the folders move. The job resolves the
name against its own workflow folder (found from the script's directory, :func:`workflow_root`)
and checks the digest (:func:`resolve`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from judgelab.cache.filehash import file_sha256
from judgelab.errors import InputError


def digest(path: Path) -> str:
    """The SHA-256 of a file's content (:func:`judgelab.cache.filehash.file_sha256`, remembered
    in-process per path, size and modification time: a DAG asks for the same bundled file once
    per job)."""
    return file_sha256(path, None)


def param(files: Mapping[str, Path], root: Path) -> str:
    """The param of bundled ``files`` (name -> path under ``root``, the workflow folder): JSON
    text of name -> ``{"file": path inside the workflow folder, "sha256": digest}``; ``"{}"``
    when there are none."""
    out = {}
    for name, path in sorted(files.items()):
        rel = Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
        out[name] = {"file": rel, "sha256": digest(Path(path))}
    return json.dumps(out, sort_keys=True)


def resolve(value: str | Mapping, root: Path) -> dict[str, str]:
    """The files of a :func:`param` as this job opens them (name -> path under ``root``), each
    checked against its digest: a bundled file missing or changed since the run was planned is an
    error naming it."""
    entries = json.loads(value) if isinstance(value, str) else dict(value)
    out: dict[str, str] = {}
    for name, entry in entries.items():
        path = Path(root) / entry["file"]
        if not path.is_file():
            raise InputError(
                f"bundled file {path} ({name}) does not exist: is this the workflow the run was planned with?"
            )
        found = digest(path)
        if found != entry["sha256"]:
            raise InputError(
                f"bundled file {path} ({name}) changed since the run was planned (sha256 {found}, "
                f"planned {entry['sha256']}); start the run again"
            )
        out[name] = str(path)
    return out


def workflow_root(scriptdir: str | Path | None) -> Path:
    """The workflow folder (the one holding ``Snakefile`` and ``resources/``) a job's script lives
    in (``workflow/scripts/`` or ``workflow/scripts/<study>/`` below it)."""
    if scriptdir is None:
        raise InputError(
            "the job does not say where its script is (Snakemake gave no scriptdir): cannot find the bundled files"
        )
    start = Path(scriptdir).resolve()
    for folder in (start, *start.parents):
        if (folder / "Snakefile").is_file() and (folder / "resources").is_dir():
            return folder
    raise InputError(f"no workflow folder (Snakefile and resources/) above the script directory {start}")
