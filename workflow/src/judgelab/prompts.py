"""Prompt templates as data, persona concatenation, and answer parsing.

Templates live in YAML files (``template:`` holds the text) under ``resources/prompts/``.
Placeholders are replaced literally (``{query}``, ``{document}``, ``{predicted_score}``, ...),
so any other brace in a template or persona is left alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from .errors import InputError
from .resources import resources_dir


def load_template(ref: str, resources: str | Path | None = None) -> str:
    """Template text from a YAML file. ``ref`` is a path, or ``<study>/<name>`` under
    ``resources``/prompts (default: the workflow's resources folder)."""
    path = Path(ref)
    if not path.exists():
        path = resources_dir(resources) / "prompts" / f"{ref}.yaml"
    if not path.exists():
        raise InputError(f"no prompt template {ref!r} (looked for {path})")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"invalid YAML: {exc}", path=str(path),
                         line=(mark.line + 1) if mark else None) from None
    if not isinstance(data, dict) or not isinstance(data.get("template"), str):
        raise InputError("expected a mapping with a 'template' string", path=str(path))
    return data["template"]


def fill(template: str, **values: object) -> str:
    """Replace ``{name}`` placeholders literally."""
    out = template
    for name, value in values.items():
        out = out.replace("{" + name + "}", str(value))
    return out


def build_messages(persona: str, task: str, placement: str = "user") -> list[dict[str, str]]:
    """Seed 000 section 4.2: prompt = persona || task.

    ``placement='user'`` concatenates persona and task into one user message (the paper's
    Phi(pi, q, d, tau)); ``'system'`` sends the persona as the system message. An empty persona
    (the default condition) adds nothing.
    """
    persona = persona.strip()
    if placement == "user":
        content = f"{persona}\n\n{task}" if persona else task
        return [{"role": "user", "content": content}]
    if placement == "system":
        msgs = [{"role": "system", "content": persona}] if persona else []
        return msgs + [{"role": "user", "content": task}]
    raise InputError(f"unknown persona placement {placement!r} (user or system)", key="persona_placement")


# a whole number: not part of a longer number or a decimal ("2.5"); "2." at a sentence end counts
_FINAL = re.compile(r"(?:final\s*score|score|\(O\)|\bO)\s*[:=]?\s*\**\s*\[?([0-3])\]?(?!\d|\.\d)",
                    re.I)
_INT = re.compile(r"(?<!\d)(?<!\d\.)(\d+)(?!\d|\.\d)")


def parse_label(text: str) -> int | None:
    """A relevance label 0-3 from an answer, or None (missing).

    Rules, in order: an answer that is only a label (``"2"``, ``"[2]"``, ``"2."``); an explicit
    final score (``Final score: 2``, ``O: 2``; the last one wins); otherwise the single distinct
    whole number in the text if it is 0-3. Anything else (no number, several different numbers,
    numbers out of range) does not parse.
    """
    s = text.strip()
    m = re.fullmatch(r"[\[\(\*\s]*([0-3])[\]\)\*\s.]*", s)
    if m:
        return int(m.group(1))
    finals = _FINAL.findall(s)
    if finals:
        return int(finals[-1])
    nums = {int(n) for n in _INT.findall(s)}
    if len(nums) == 1:
        (n,) = nums
        return n if 0 <= n <= 3 else None
    return None


_NUMBER = r"(\d+(?:\.\d+)?)"
_CONF_ONLY = re.compile(r"[\[\(\*\s]*" + _NUMBER + r"\s*%?[\]\)\*\s.]*")
_CONF_LEADING = re.compile(r"\s*" + _NUMBER + r"\s*%?\s*(?:\n|$)")
_CONF_EXPLICIT = re.compile(r"confidence(?:\s+score)?(?:\s+(?:is|of))?\s*[:=]?\s*" + _NUMBER, re.I)


def parse_confidence(text: str) -> float | None:
    """A confidence 0-100 from an answer, or None (missing).

    Accepted: an answer that is only a number (``"85"``, ``"85%"``, ``"[90]"``); an explicit
    ``Confidence: 85`` / ``confidence score of 85``; a number alone on the answer's first line
    (``"100\n\nThe answer is ..."``). Anything else does not parse, notably an answer that echoes
    the prompt (``"Your given relevance score is 0, ..."``): its number is the label, not a
    confidence. Values outside 0-100 do not parse.
    """
    m = _CONF_ONLY.fullmatch(text) or _CONF_EXPLICIT.search(text) or _CONF_LEADING.match(text)
    if not m:
        return None
    value = float(m.group(1))
    return value if 0.0 <= value <= 100.0 else None
