"""Persona conditions: the 11 of seed 000 Table 1 shipped as data, plus custom ones from config."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from .errors import InputError
from .resources import resources_dir
from .textfiles import read_text

PAPER_ORDER = ["default", "HA", "LA", "HC", "LC", "HE", "LE", "HN", "LN", "HO", "LO"]


@dataclass(frozen=True)
class Persona:
    id: str
    personality_type: str
    instruction: str
    origin: str  # "paper", "custom" or "generated:<model>"


def load_persona_file(ref: str = "peras_table1", resources: str | Path | None = None) -> dict[str, Persona]:
    """Personas from a YAML file (``personas: {id: {personality_type, instruction}}``); ``ref`` is a
    path or a name under ``resources``/personas (default: the workflow's resources folder)."""
    path = Path(ref)
    if not path.exists():
        path = resources_dir(resources) / "personas" / f"{ref}.yaml"
    if not path.exists():
        raise InputError(f"no persona file {ref!r}: neither a file (relative to the working directory) "
                         f"nor {path}", key="personas.file")
    try:
        data = yaml.safe_load(read_text(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"invalid YAML: {exc}", path=str(path),
                         line=(mark.line + 1) if mark else None) from None
    entries = (data or {}).get("personas")
    if not isinstance(entries, dict):
        raise InputError("expected a top-level 'personas' mapping", path=str(path))
    out = {}
    for pid, entry in entries.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("instruction"), str):
            raise InputError(f"persona {pid!r} needs an 'instruction' string", path=str(path))
        out[str(pid)] = Persona(str(pid), str(entry.get("personality_type") or pid),
                                entry["instruction"], "paper")
    return out


def resolve_personas(cfg: dict, resources: str | Path | None = None) -> dict[str, Persona]:
    """The personas a run uses: the persona file's entries (``personas.include`` picks and orders
    them) followed by ``personas.custom`` entries."""
    pcfg = cfg.get("personas", {})
    base = load_persona_file(pcfg.get("file", "peras_table1"), resources)
    include = pcfg.get("include") or list(base)
    custom = pcfg.get("custom") or {}
    for i, p in enumerate(include):
        if p not in base and p not in custom:
            raise InputError(f"unknown persona {p!r}: not in the persona file {pcfg.get('file', 'peras_table1')!r} "
                             f"(known: {sorted(base)}) nor in personas.custom ({sorted(custom)})",
                             key=f"personas.include[{i}]")
    out = {p: base[p] for p in include if p in base}
    for pid, entry in (pcfg.get("custom") or {}).items():
        if pid in base:
            raise InputError(f"custom persona {pid!r} shadows a persona of the persona file; "
                             "pick another id", key=f"personas.custom.{pid}")
        if isinstance(entry, str):
            entry = {"instruction": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("instruction"), str):
            raise InputError("needs an 'instruction' string", key=f"personas.custom.{pid}")
        out[str(pid)] = Persona(str(pid), str(entry.get("personality_type") or pid), entry["instruction"],
                                "custom")
    return out


def read_generated(path: str | Path) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def read_persona(text: str, generated_file: str | Path | None = None) -> str:
    """The instruction a job sends: the generated file's, when the job was given one (see
    :meth:`judgelab.config.Project.persona_input`), else ``text``."""
    return read_generated(generated_file)["instruction"] if generated_file else text
