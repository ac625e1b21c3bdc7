"""Persona conditions: the 11 of PERAS Table 1 shipped as data, plus custom ones from config; their
two-step generation by an LLM (PERAS section 4.1) and the table of the persona texts a run uses."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from judgelab.data.resources import resources_dir
from judgelab.data.textfiles import load_yaml, read_text, yaml_error
from judgelab.errors import InputError
from judgelab.llm.backends.base import Request
from judgelab.llm.client import CachedClient
from judgelab.llm.prompts import fill
from judgelab.params import Settings

log = logging.getLogger("judgelab")

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
        raise InputError(
            f"no persona file {ref!r}: neither a file (relative to the working directory) nor {path}",
            key="personas.file",
        )
    try:
        data = load_yaml(read_text(path))
    except yaml.YAMLError as exc:
        raise yaml_error(exc, path) from None
    entries = (data or {}).get("personas")
    if not isinstance(entries, dict):
        raise InputError("expected a top-level 'personas' mapping", path=str(path))
    out = {}
    for pid, entry in entries.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("instruction"), str):
            raise InputError(f"persona {pid!r} needs an 'instruction' string", path=str(path))
        out[str(pid)] = Persona(
            str(pid), str(entry.get("personality_type") or pid), entry["instruction"], "paper"
        )
    return out


def resolve_personas(cfg: dict, resources: str | Path | None = None) -> dict[str, Persona]:
    """The personas a run uses: the persona file's entries (``personas.include`` picks and orders
    them) followed by ``personas.custom`` entries."""
    pcfg = cfg["personas"]
    base = load_persona_file(pcfg["file"], resources)
    include = pcfg.get("include") or list(base)
    custom = pcfg.get("custom") or {}
    for i, p in enumerate(include):
        if p not in base and p not in custom:
            raise InputError(
                f"unknown persona {p!r}: not in the persona file {pcfg['file']!r} "
                f"(known: {sorted(base)}) nor in personas.custom ({sorted(custom)})",
                key=f"personas.include[{i}]",
            )
    out = {p: base[p] for p in include if p in base}
    for pid, entry in (pcfg.get("custom") or {}).items():
        if pid in base:
            raise InputError(
                f"custom persona {pid!r} shadows a persona of the persona file; pick another id",
                key=f"personas.custom.{pid}",
            )
        if isinstance(entry, str):
            entry = {"instruction": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("instruction"), str):
            raise InputError("needs an 'instruction' string", key=f"personas.custom.{pid}")
        out[str(pid)] = Persona(
            str(pid), str(entry.get("personality_type") or pid), entry["instruction"], "custom"
        )
    return out


def read_generated(path: str | Path) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def read_persona(text: str, generated_file: str | Path | None = None) -> str:
    """The instruction a job sends: the generated file's, when the job was given one (see
    :meth:`judgelab.wiring.facade.Project.persona_input`), else ``text``."""
    return read_generated(generated_file)["instruction"] if generated_file else text


# -- the two-step generation (PERAS section 4.1) and the persona table --------------------------


@dataclass(frozen=True)
class PersonaGeneration(Settings):
    """One persona's generation (PERAS section 4.1): the generator model's key and entry, the
    personality type, the two steps' templates (keywords, then an instruction built on them) and
    the answer bound of each step."""

    model: str
    spec: Mapping[str, Any]
    personality_type: str
    keywords_template: str
    instruction_template: str
    max_tokens: int


def persona_keywords_request(personality_type: str, keywords_template: str, *, max_tokens: int) -> Request:
    """Step 1 of the persona generation (PERAS section 4.1): keywords for a personality type."""
    return Request.from_messages(
        [{"role": "user", "content": fill(keywords_template, personality_type=personality_type)}], max_tokens
    )


def persona_instruction_request(
    personality_type: str, keywords: str, instruction_template: str, *, max_tokens: int
) -> Request:
    """Step 2 of the persona generation: an instruction built on the step-1 keywords."""
    return Request.from_messages(
        [
            {
                "role": "user",
                "content": fill(
                    instruction_template, personality_keywords=keywords, personality_type=personality_type
                ),
            }
        ],
        max_tokens,
    )


def generate_persona(
    client: CachedClient,
    personality_type: str,
    keywords_template: str,
    instruction_template: str,
    *,
    max_tokens: int,
) -> dict:
    """PERAS section 4.1: step 1 asks for keywords, step 2 for an instruction built on them."""
    step1 = persona_keywords_request(personality_type, keywords_template, max_tokens=max_tokens)
    ((kw, _),) = client.run([step1], desc=f"keywords {personality_type}", progress=False)
    keywords = kw.text.strip()
    step2 = persona_instruction_request(
        personality_type, keywords, instruction_template, max_tokens=max_tokens
    )
    ((ins, _),) = client.run([step2], desc=f"instruction {personality_type}", progress=False)
    return {"personality_type": personality_type, "keywords": keywords, "instruction": ins.text.strip()}
