"""Settings values that travel as a rule's params: :class:`Settings`, the base of every typed
settings value a job function takes (a judge, a coverage floor, a study's options).

A plan builds the value from the config; the rule carries :meth:`Settings.param` (canonical JSON:
equal settings, equal text, so Snakemake reruns exactly the jobs whose settings changed); the
workflow's adapter (:func:`judgelab.project.runner.run`) gives the job function
:meth:`Settings.from_param` of it, by the parameter's annotation. A field whose type is itself a
:class:`Settings` is decoded as one; tuples come back as tuples.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping
from dataclasses import asdict, fields
from typing import Any, TypeVar

S = TypeVar("S", bound="Settings")


class Settings:
    """Mixin of a frozen dataclass of plain values (str, numbers, bools, lists, tuples, dicts,
    nested :class:`Settings`)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    def param(self) -> str:
        """The value as a tracked param: JSON with sorted keys (lists keep their order)."""
        return json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_param(cls: type[S], value: str | Mapping[str, Any] | S | None) -> S:
        """The value a param carries (its :meth:`param` text, that text's dict, or the value)."""
        if isinstance(value, cls):
            return value
        if value is None or value == "":
            raise ValueError(f"no {cls.__name__} given")
        data = dict(json.loads(value) if isinstance(value, str) else value)  # type: ignore[arg-type]
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"{cls.__name__} has no settings {unknown}")
        hints = typing.get_type_hints(cls)
        for name, item in list(data.items()):
            kind = _inner(hints.get(name))
            if isinstance(kind, type) and issubclass(kind, Settings) and item is not None:
                data[name] = kind.from_param(item)
            elif typing.get_origin(kind) is tuple and isinstance(item, list):
                data[name] = tuple(item)
        return cls(**data)


def _inner(annotation: Any) -> Any:
    """``X | None`` -> ``X``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


class Files:
    """Mixin of a frozen dataclass that groups some of a job's input files (keeping a job function
    to a few parameters): the workflow's adapter (:func:`judgelab.project.runner.run`) fills each
    field from the rule's named input (or output) of the field's name, as it would a parameter of
    that name; a test builds it by hand."""
