"""What every workflow script shares: :func:`run`, the one adapter from a Snakemake job to a job
function, the job's log (:func:`script_logging`: logging and stderr, tqdm's progress bars
included, into the file of the rule's ``log:``) and reading a param that arrives as JSON text
(:func:`as_value`).

A script under ``workflow/scripts/<study>/`` is one call: ``run(snakemake, judge_job)``. Which
function runs is written there; what it gets is its own signature: each parameter by its name from
the rule's named ``input`` (and the files of its ``bundled`` param, :mod:`judgelab.project.bundled`),
``output``, ``params`` and wildcards (a param decoded by the parameter's
annotation: a settings class with ``from_param``, such as :class:`~judgelab.llm.judge.Judge`; JSON
text for a dict or list), the job's :class:`~judgelab.llm.session.JobContext` for a parameter
annotated so; a parameter annotated with a :class:`~judgelab.params.Files` dataclass (a group of
files) gets one with each field filled as a parameter of that name would be; ``outputs``: every named output (a job that writes many), ``wildcards``: the job's
wildcards. An input the rule leaves empty is None where the parameter defaults to None; a
parameter annotated as a sequence of files gets a list also when the rule names one file."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
import logging
import sys
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from judgelab.cache.store import CacheConfig
from judgelab.errors import JudgelabError
from judgelab.llm.session import JobContext
from judgelab.params import Files
from judgelab.project.bundled import resolve, workflow_root

log = logging.getLogger("judgelab")


@contextlib.contextmanager
def script_logging(path: str | None) -> Iterator[None]:
    """Send logging and stderr (tqdm progress bars) of a job to its log file."""
    if not path:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
        yield
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fh = open(path, "w", buffering=1, encoding="utf-8")  # noqa: SIM115 (closed below, its error reported)
    old = sys.stderr
    sys.stderr = fh
    handler = logging.StreamHandler(fh)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield
    except BaseException:
        log.exception("job failed")
        raise
    finally:
        root.removeHandler(handler)
        sys.stderr = old
        try:
            fh.close()
        except OSError as exc:  # a full disk: say so, and never hide the job's own error
            print(f"judgelab: the job's log {path} is incomplete: {exc}", file=sys.stderr, flush=True)


def as_value(v):
    """A param that may arrive as a JSON string (tracked params are strings) or as the value."""
    return json.loads(v) if isinstance(v, str) else v


def _named(items) -> dict[str, Any]:
    """A Snakemake Namedlist's named entries: one file a str, several a list of str."""
    out: dict[str, Any] = {}
    for name, value in items:
        out[name] = value if isinstance(value, str) else [str(v) for v in value]
    return out


def _plain(annotation: Any) -> Any:
    """The annotation without ``None`` (``Judge | None`` -> ``Judge``); a union of several other
    types stays as it is."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation


def _is_sequence(annotation: Any) -> bool:
    origin = typing.get_origin(_plain(annotation)) or _plain(annotation)
    return origin in (list, tuple, Sequence)


def decode(value: Any, annotation: Any) -> Any:
    """A param as the job function's parameter wants it: a class with ``from_param`` decodes its
    own text; a dict, list or tuple arrives as JSON text (or as the value); the rest as given."""
    kind = _plain(annotation)
    if value is None:
        return None
    if isinstance(kind, type) and hasattr(kind, "from_param"):
        return kind.from_param(value)
    origin = typing.get_origin(kind) or kind
    if (
        isinstance(origin, type)
        and issubclass(origin, (Mapping, list, tuple))
        and not isinstance(origin, str)
    ):
        value = as_value(value)
        return tuple(value) if issubclass(origin, tuple) else value
    if origin is Sequence and isinstance(value, str) and value[:1] in "[(":
        return as_value(value)
    return value


def context_of(smk: Any) -> JobContext:
    """The job's context: the config's request cache, the threads granted, a name from the rule
    and its wildcards (``judge dl21/smollm2/w_cot/default``), the config's ``interrupt_grace``."""
    wildcards = "/".join(str(v) for _, v in smk.wildcards.items())
    return JobContext(
        CacheConfig.of(smk.config),
        smk.threads,
        f"{smk.rule} {wildcards}".strip(),
        smk.config.get("interrupt_grace"),
    )


def bundled_inputs(smk: Any, params: Mapping[str, Any]) -> dict[str, str]:
    """The files of the rule's ``bundled`` param (files shipped with the workflow, tracked by
    content, not path: :mod:`judgelab.project.bundled`), resolved in this job's workflow folder;
    each reaches the job function under its name like an input."""
    if "bundled" not in params:
        return {}
    return resolve(params["bundled"], workflow_root(getattr(smk, "scriptdir", None)))


def arguments(job: Callable[..., Any], smk: Any, fixed: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The keyword arguments :func:`run` calls ``job`` with (see the module docstring). A required
    parameter the rule does not give is an error naming the rule and the parameter."""
    hints = typing.get_type_hints(job)
    params = dict(smk.params.items())
    sources = [
        ("fixed", dict(fixed or {})),
        ("input", _named(smk.input.items())),
        ("bundled", bundled_inputs(smk, params)),
        ("output", _named(smk.output.items())),
        ("params", params),
        ("wildcards", {k: str(v) for k, v in smk.wildcards.items()}),
    ]
    kwargs: dict[str, Any] = {}
    for name, par in inspect.signature(job).parameters.items():
        annotation = hints.get(name, par.annotation)
        kind = _plain(annotation)
        if kind is JobContext:
            kwargs[name] = context_of(smk)
        elif isinstance(kind, type) and issubclass(kind, Files) and dataclasses.is_dataclass(kind):
            # a group of files: each field by its name, as a parameter of that name would be
            group = typing.get_type_hints(kind)
            kwargs[name] = kind(
                **{
                    f.name: value
                    for f in dataclasses.fields(kind)
                    if (value := _lookup(f.name, group.get(f.name), _default(f), sources, job, smk))
                    is not _ABSENT
                }
            )
        elif name in ("outputs", "wildcards") and not any(name in values for _, values in sources):
            # every named output, for a job that writes many; the job's wildcards
            kwargs[name] = (
                _named(smk.output.items())
                if name == "outputs"
                else {k: str(v) for k, v in smk.wildcards.items()}
            )
        elif (value := _lookup(name, annotation, par.default, sources, job, smk)) is not _ABSENT:
            kwargs[name] = value
    return kwargs


_ABSENT = object()


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return inspect.Parameter.empty


def _lookup(
    name: str, annotation: Any, default: Any, sources: Sequence[tuple[str, Mapping[str, Any]]], job, smk
) -> Any:
    """The value of a job parameter (or a field of a :class:`~judgelab.params.Files` group) named
    ``name`` from the first of ``sources`` that has it; ``_ABSENT`` where none has it and it has a
    default; an error naming the rule and the parameter where it has none."""
    for where, values in sources:
        if name in values:
            value = values[name]
            if where == "params":
                return decode(value, annotation)
            if value == [] and default is None:
                return None  # an optional input the rule left empty
            if isinstance(value, str) and _is_sequence(annotation):
                return [value]  # a list of files that holds one
            return value
    if default is inspect.Parameter.empty:
        raise TypeError(
            f"rule {smk.rule}: {job.__module__}.{job.__name__} needs {name!r}, which is "
            "none of the rule's named input, output or params"
        )
    return _ABSENT


def stopped(rule: str, exc: BaseException, log_path: str | None) -> NoReturn:
    """End a job stopped by ``exc`` with its one-line summary, ``judgelab: rule <rule> stopped:
    <what, where, what to do>``, printed first to stderr (before Snakemake's own report and the
    log it shows), and exit status 1; the traceback is in the job's log (``log_path``) only."""
    where = f" (traceback in {log_path})" if log_path else ""
    print(f"judgelab: rule {rule} stopped: {exc}{where}", file=sys.stderr, flush=True)
    raise SystemExit(1) from None


def run(smk: Any, job: Callable[..., Any], **fixed: Any) -> Any:
    """Run ``job`` for the Snakemake job of a script (its ``snakemake`` object), logging into the
    rule's log file; ``fixed``: arguments given by the script itself.

    A job stopped by an error that says what, where and what to do
    (:class:`~judgelab.errors.JudgelabError`: bad input naming the file and line or the config key,
    a provider's refusal or no answer after every retry, a failed download) prints that one
    message, first, and exits with status 1 (:func:`stopped`); its traceback goes to the job's log
    only. Any other error keeps its traceback (a bug)."""
    log_path = smk.log[0] if smk.log else None
    try:
        with script_logging(log_path):
            return job(**arguments(job, smk, fixed))
    except JudgelabError as exc:
        stopped(smk.rule, exc, log_path)
