"""Configuration files: load, merge and validate them.

* :func:`load_config` reads ``config/config.yaml`` of a workflow directory and merges each
  ``--configfile`` over it, exactly as Snakemake does.
* :func:`validate` checks a config against ``workflow/schemas/config.schema.yaml`` and fills the
  schema's defaults in place (the defaults live only in the schema).
* :func:`check_name` checks a name that becomes a path component (dataset, model, template,
  persona ids).

What a validated config means (which personas run, which files a dataset reads, where a result
goes) is answered by :class:`judgelab.wiring.facade.Project`.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from judgelab import schema
from judgelab.data.textfiles import load_yaml, read_text, yaml_error
from judgelab.errors import InputError
from judgelab.schema import SCHEMA as SCHEMA  # where the schema sits in a workflow folder

#: The workflow folder of this checkout (Snakefile, config/, resources/, workflow/).
PACKAGE_ROOT = Path(__file__).resolve().parents[4]


def check_name(name: str, key: str) -> None:
    """A name that becomes a path component and a wildcard value (a dataset, model, template or
    persona id): no '/', no white space, not empty."""
    if not name or "/" in name or any(c.isspace() for c in name):
        raise InputError(
            f"the name {name!r} becomes a path component of the results: no '/' or white space", key=key
        )


# -- loading and validation ---------------------------------------------------------------------


def _merge(base: dict, over: Mapping) -> dict:
    """Snakemake's merge of config files: mappings merge key by key, anything else replaces."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = (
            _merge(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), dict) else copy.deepcopy(v)
        )
    return out


def read_yaml(path: str | Path) -> Any:
    """The YAML document of ``path``: a copy of the parse of its text, which is kept per process
    by the text (the 86 KB schema took 0.1 s to parse at every config load; a process that loads
    many configs - the tests, the estimate - parses each text once)."""
    path = Path(path)
    if not path.exists():
        raise InputError("file does not exist", path=str(path))
    try:
        return copy.deepcopy(_parse_yaml(read_text(path)))
    except yaml.YAMLError as exc:
        raise yaml_error(exc, path) from None


@functools.lru_cache(maxsize=32)
def _parse_yaml(text: str) -> Any:
    return load_yaml(text)


def load_config(
    configfiles: Sequence[str | Path] = (), directory: str | Path = ".", root: str | Path | None = None
) -> dict:
    """The configuration a ``snakemake -d DIRECTORY --configfile F...`` run would see: the
    Snakefile's ``configfile:`` (``config/config.yaml``, relative to DIRECTORY) with each file
    merged over it, validated with the schema's defaults filled in."""
    directory = Path(directory)
    files = [p for p in [directory / "config" / "config.yaml"] if p.exists()]
    files += [Path(f) if Path(f).is_absolute() or Path(f).exists() else directory / f for f in configfiles]
    config: dict = {}
    for f in files:
        config = _merge(config, read_yaml(f) or {})
    if not config:
        raise InputError(
            f"no configuration: neither {directory / 'config' / 'config.yaml'} nor a --configfile"
        )
    validate(config, root)
    return config


def user_layers(
    run_config: str | Path,
    root: str | Path | None,
    configfiles: Sequence[str | Path] = (),
    overrides: Mapping | None = None,
    directory: str | Path = ".",
) -> list[dict]:
    """The config layers the user wrote, as read (no defaults filled in): the run folder's own
    ``config/config.yaml`` (``run_config``; not when it is the workflow's shipped default, which
    ``root`` holds), each ``--configfile`` and the ``--config`` values (``overrides``). A study
    they do not enable is enabled by the shipped defaults only."""
    layers = []
    shipped = Path(root or PACKAGE_ROOT) / "config" / "config.yaml"
    run_config = Path(run_config)
    if run_config.exists() and not (shipped.exists() and run_config.resolve() == shipped.resolve()):
        layers.append(read_yaml(run_config) or {})
    for f in configfiles:
        path = Path(f) if Path(f).is_absolute() or Path(f).exists() else Path(directory) / f
        layers.append(read_yaml(path) or {})
    if overrides:
        layers.append(dict(overrides))
    return [layer for layer in layers if isinstance(layer, dict)]


def validate(config: dict, root: str | Path | None = None) -> dict:
    """Check ``config`` against the workflow's schema and fill in the schema's defaults (in
    place). The error names the offending key (:func:`judgelab.schema.validate`)."""
    return schema.validate(config, root)
