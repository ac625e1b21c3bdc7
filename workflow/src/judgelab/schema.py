"""The config schema (``workflow/schemas/config.schema.yaml``), the one place each config key's
type, constraints and default are written: :func:`validate` checks a config against it and fills
the defaults in; :func:`default` is one key's default, for the code that reads a key the
validation leaves unfilled (a model entry: ``x-fill-defaults: false``, see :func:`validate`);
:func:`default_of` makes a typed settings field default to its key's schema default (so a
settings value built without it - a test, a library call - has the config's default, written
once); :func:`validate_entry` checks one value against its key's schema (the model entry a
backend is built from). Every error is an :class:`~judgelab.errors.InputError` naming the full key.

Keys are dotted paths whose ``<name>`` stands for any name of a mapping
(``models.<name>.concurrency``, ``ranking.correlation.top_k``), as in ``config/README.md``."""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judgelab.data.textfiles import load_yaml, read_text
from judgelab.errors import InputError

#: where the schema sits in a workflow folder, and the schema of this checkout
SCHEMA = Path("workflow") / "schemas" / "config.schema.yaml"
SCHEMA_FILE = Path(__file__).resolve().parents[3] / SCHEMA


@functools.lru_cache(maxsize=8)
def _parse(text: str) -> Any:
    return load_yaml(text)


def _tree(root: str | Path | None = None) -> dict:
    """The parsed schema, shared (read, never changed: defaults are copied out of it)."""
    return _parse(read_text(Path(root) / SCHEMA if root else SCHEMA_FILE))


def load(root: str | Path | None = None) -> dict:
    """The schema of the workflow folder ``root`` (default: this checkout's), parsed once per
    process and text; a copy."""
    return copy.deepcopy(_tree(root))


def _with_defaults(cls):
    from jsonschema import validators

    props = cls.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        # ``x-fill-defaults: false``: the object's defaults are documented and read where they
        # apply (:func:`default`), not written into it (a model entry is a tracked param of jobs)
        if isinstance(instance, dict) and schema.get("x-fill-defaults", True):
            for name, sub in properties.items():
                if isinstance(sub, dict) and "default" in sub and name not in instance:
                    instance[name] = copy.deepcopy(sub["default"])
        yield from props(validator, properties, instance, schema)

    return validators.extend(cls, {"properties": set_defaults})


def _raise_first(errors: Any, prefix: str = "") -> None:
    """The first error (by key) as an :class:`InputError` naming its full key (``a.b[2].c``)."""
    errors = sorted(errors, key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        key = prefix
        for p in e.absolute_path:  # list items as key[i], as every other error names them
            key += f"[{p}]" if isinstance(p, int) else f".{p}" if key else str(p)
        raise InputError(e.message, key=key or "(top level)")


def validate(config: dict, root: str | Path | None = None) -> dict:
    """Check ``config`` against the schema and fill in the schema's defaults (in place). The error
    names the offending key."""
    import jsonschema

    _raise_first(_with_defaults(jsonschema.Draft202012Validator)(_tree(root)).iter_errors(config))
    return config


def node(key: str, root: str | Path | None = None) -> dict:
    """The schema of ``key`` (shared: not to be changed)."""
    out = _tree(root)
    for part in key.split("."):
        out = out["additionalProperties"] if part == "<name>" else out["properties"][part]
    return out


def default(key: str, root: str | Path | None = None) -> Any:
    """The schema's default of ``key``; a :class:`KeyError` when it gives none."""
    found = node(key, root)
    if "default" not in found:
        raise KeyError(f"the schema gives {key} no default")
    return copy.deepcopy(found["default"])


def validate_entry(value: Any, key: str, where: str, root: str | Path | None = None) -> None:
    """Check ``value`` against the schema of ``key`` (``models.<name>``; nothing filled in); the
    error names the full key below ``where``, the value's own key (``models.gpt`` ->
    ``models.gpt.concurrency``)."""
    import jsonschema

    _raise_first(jsonschema.Draft202012Validator(node(key, root)).iter_errors(value), where)


@dataclasses.dataclass(frozen=True)
class Default:
    """The default factory of a dataclass field: the schema's default of ``key`` (``convert``
    applied: ``tuple`` for a list), read when a value is built without that field."""

    key: str
    convert: Callable[[Any], Any] | None = None

    def __call__(self) -> Any:
        value = default(self.key)
        return self.convert(value) if self.convert else value


def default_of(key: str, convert: Callable[[Any], Any] | None = None) -> Any:
    """A dataclass field whose default is the schema's default of ``key``::

    k: int = schema.default_of("ranking.correlation.top_k")"""
    return dataclasses.field(default_factory=Default(key, convert))
