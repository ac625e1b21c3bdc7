"""The SHA-256 of a model file, part of a local backend's identity (and so of its cache keys),
memoised so a job does not hash a large GGUF file again: in-process, and in ``file-hashes.json``
in a folder the caller names (the request cache's folder: the backend learns it from the cache it
is bound to, :meth:`judgelab.llm.backends.base.Backend.bind_cache`)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
from pathlib import Path

log = logging.getLogger(__name__)

_HASHES: dict[tuple[str, int, int], str] = {}


def _read_memo(side: Path) -> dict:
    """The memo table in ``side``; an unreadable, undecodable or malformed memo is logged and
    treated as empty (it is rebuilt: every entry is a hash that can be computed again)."""
    if not side.exists():
        return {}
    try:
        table = json.loads(side.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: UnicodeDecodeError and JSONDecodeError
        log.warning("%s is unreadable (%s); rebuilding it (it only memoises model-file hashes)", side, exc)
        return {}
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        log.warning("%s is not a table of hashes; rebuilding it", side)
        return {}
    return table


def sha256_of_file(path: str | Path) -> str:
    """SHA-256 of a file's bytes (hex), read in 1 MB blocks: the one file digest of the package
    (model files here, run files of the ranking study's score cache, downloads)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: str | Path, memo_dir: str | Path | None) -> str:
    """SHA-256 of a (model) file, memoised on (path, size, mtime) in-process and in the side file
    ``file-hashes.json`` in ``memo_dir`` (None: in-process only). A memo file that cannot be read
    or parsed is rebuilt; one that cannot be written is skipped with a warning (the hash is still
    returned)."""
    p = Path(path).resolve()
    st = p.stat()
    memo_key = (str(p), st.st_size, st.st_mtime_ns)
    if memo_key in _HASHES:
        return _HASHES[memo_key]
    side = Path(memo_dir) / "file-hashes.json" if memo_dir is not None else None
    table = _read_memo(side) if side is not None else {}
    tag = f"{memo_key[0]}|{memo_key[1]}|{memo_key[2]}"
    digest = table.get(tag)
    if digest is None:
        digest = sha256_of_file(p)
        table[tag] = digest
        if side is not None:
            _write_memo(side, table)
    _HASHES[memo_key] = digest
    return digest


def _write_memo(side: Path, table: dict) -> None:
    tmp = side.with_suffix(f".{socket.gethostname()}.{os.getpid()}.tmp")  # hosts may share the folder
    try:
        side.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(table, indent=0), encoding="utf-8")
        tmp.replace(side)
    except OSError as exc:
        log.warning("cannot write the hash memo %s (%s); the hash is computed again next time", side, exc)
        tmp.unlink(missing_ok=True)
