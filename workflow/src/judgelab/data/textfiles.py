"""Reading text files so that bad bytes never pass silently.

Every reader of data and resource files (datasets, imported judges, prompts, personas, configs)
decodes through :func:`read_text`: the encoding is explicit (UTF-8 unless a config key says
otherwise), never guessed; a byte sequence that does not decode is an
:class:`~judgelab.errors.InputError` naming the file and line; a leading byte-order mark is
dropped (a UTF-8 BOM written by some editors would otherwise become part of the first id).
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judgelab.errors import InputError

DEFAULT_ENCODING = "utf-8"
BOM = "\ufeff"


def read_text(path: str | Path, encoding: str | None = None, *, key: str | None = None) -> str:
    """The decoded text of ``path`` without a leading byte-order mark.

    ``key``: the config key that chose the file or the encoding, named in the errors that cannot
    name a line (a missing file, an unknown encoding)."""
    encoding = encoding or DEFAULT_ENCODING
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise InputError(f"unknown encoding {encoding!r}", key=key, path=None if key else str(path)) from None
    p = Path(path)
    if not p.is_file():
        what = "is not a file" if p.exists() else "does not exist"
        raise InputError(f"file {path} {what}", key=key) if key else InputError(what, path=str(path))
    raw = p.read_bytes()
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = raw[exc.start : exc.end].hex(" ")
        raise InputError(
            f"not valid {encoding}: byte(s) {bad} at column {col} ({exc.reason}); "
            "convert the file to UTF-8, or set the dataset's `encoding` to the one it "
            "is written in",
            path=str(path),
            line=line,
        ) from None
    return text[1:] if text.startswith(BOM) else text


def load_yaml(text: str) -> Any:
    """The YAML document of ``text`` (``yaml.safe_load``), parsed by libyaml when PyYAML has it
    (8x faster: the 86 KB config schema is parsed in every Snakemake process, each job's
    included); a text libyaml refuses is parsed again by the pure-Python loader, so the error and
    its line are PyYAML's usual ones."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None:
        return yaml.safe_load(text)
    try:
        return yaml.load(text, Loader=loader)  # noqa: S506 - CSafeLoader is the safe loader
    except yaml.YAMLError:
        return yaml.safe_load(text)  # raises the error with PyYAML's usual message and line


def yaml_error(exc: Exception, path: str | Path, after: str = "") -> InputError:
    """The error for a YAML file that does not parse: ``invalid YAML: <PyYAML's message><after>``,
    naming the file and the line PyYAML stopped at."""
    mark = getattr(exc, "problem_mark", None)
    return InputError(f"invalid YAML: {exc}{after}", path=str(path), line=(mark.line + 1) if mark else None)


def text_lines(path: str | Path, encoding: str | None = None) -> Iterator[tuple[int, str]]:
    """(line number, line without its end) of every line of ``path``; lines end at ``\\n``,
    ``\\r\\n`` or ``\\r`` (as ``open(..., newline="")`` splits them)."""
    with io.StringIO(read_text(path, encoding), newline="") as fh:
        for no, raw in enumerate(fh, start=1):
            yield no, raw.rstrip("\r\n")
