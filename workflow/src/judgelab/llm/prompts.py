"""Prompt templates as data and persona concatenation (answers are read by :mod:`judgelab.llm.answers`).

Templates live in YAML files under ``resources/prompts/<study>/`` (``template:`` holds the text,
``kind:`` says what it is for, optional ``labels:`` the answers it allows). A template is checked
when it is loaded (:func:`load_template_spec`), against its kind (:data:`KINDS`):

* a placeholder is ``{name}``; every placeholder the kind requires must be there (a judgment
  template without ``{query}`` would send prompts without the query), and no other name may
  appear (a misspelt ``{qurey}`` would be sent as is);
* literal braces are written doubled: ``{{`` and ``}}`` become ``{`` and ``}`` when the template
  is filled; a single brace that does not open or close a placeholder is an error;
* ``labels:`` (kinds that ask for a label; default for ``judgment``: ``["0", "1", "2", "3"]``)
  is the set of answers :func:`judgelab.llm.answers.parse_label` accepts; anything else is a missing answer.

Errors name the file (and line) and the missing or unknown placeholder. A study registers the
kinds of its templates with :func:`register_kind`.

Filling (:func:`fill`) is one pass over the template: the values (queries, passages, generated
keywords) are inserted as they are, never scanned for placeholders or escapes themselves.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from judgelab.data.labels import GRADE_LABELS
from judgelab.data.resources import resources_dir
from judgelab.data.textfiles import load_yaml, read_text, yaml_error
from judgelab.errors import InputError


@dataclass(frozen=True)
class TemplateKind:
    """What a kind of template must and may contain: ``required`` and ``optional`` placeholder
    names; ``labels``, the default label set of its answers (None: its answers are not labels)."""

    name: str
    required: frozenset[str]
    optional: frozenset[str] = frozenset()
    labels: tuple[str, ...] | None = None

    @property
    def allowed(self) -> frozenset[str]:
        return self.required | self.optional


#: The registered template kinds by name (see :func:`register_kind`).
KINDS: dict[str, TemplateKind] = {}


def register_kind(
    name: str, required: Iterable[str], optional: Iterable[str] = (), labels: Iterable[str] | None = None
) -> TemplateKind:
    """Register a template kind: the placeholders its templates must have (``required``) and may
    have (``optional``), and the default label set of its answers (``labels``; None when its
    answers are not labels). Registering the same definition again is a no-op; a different one
    under a registered name is an error."""
    kind = TemplateKind(
        name,
        frozenset(required),
        frozenset(optional),
        None if labels is None else tuple(str(x) for x in labels),
    )
    if kind.required & kind.optional:
        raise ValueError(f"kind {name!r}: {sorted(kind.required & kind.optional)} both required and optional")
    old = KINDS.get(name)
    if old is not None and old != kind:
        raise ValueError(f"template kind {name!r} is already registered differently: {old}")
    KINDS[name] = kind
    return kind


register_kind("judgment", ["query", "document"], labels=GRADE_LABELS)
register_kind("confidence", ["query", "document", "predicted_score"])
register_kind("persona_keywords", ["personality_type"])
register_kind("persona_instruction", ["personality_keywords", "personality_type"])


# `{{`, `}}`, `{...}` (a placeholder when ... is a name), or a single brace
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}\n]*)\}|[{}]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Template:
    """A checked template: its text (escapes still doubled), kind, label set and file."""

    text: str
    kind: str
    labels: tuple[str, ...] | None
    path: str

    @property
    def placeholders(self) -> frozenset[str]:
        return placeholders(self.text)

    def fill(self, **values: object) -> str:
        return fill(self.text, **values)


def placeholders(text: str) -> frozenset[str]:
    """The placeholder names of a template text."""
    return frozenset(
        m.group(1) for m in _TOKEN.finditer(text) if m.group(1) is not None and _NAME.fullmatch(m.group(1))
    )


def fill(template: str, /, **values: object) -> str:
    """The template with each ``{name}`` replaced by ``values[name]`` and ``{{`` / ``}}`` by
    single braces, in one pass (inserted values are not scanned). A placeholder without a value
    or a stray brace is a ``ValueError`` (checked templates have neither). The template is split
    into its text and its tokens once per process (a job or an estimate fills one template for
    every pair)."""
    out = []
    for text, tok, name in _pieces(template):
        out.append(text)
        if tok is None:
            continue
        if name is not None and name in values:
            out.append(str(values[name]))
        else:
            raise ValueError(
                f"template token {tok!r} has no value (given: {sorted(values)}); "
                "write {{ and }} for literal braces"
            )
    return "".join(out)


@functools.lru_cache(maxsize=256)
def _pieces(template: str) -> tuple[tuple[str, str | None, str | None], ...]:
    """``template`` as (text, token, name) pieces, in order: each token with the text before it
    (``{{`` and ``}}`` folded into the text as single braces) and its placeholder name (None for
    a stray brace); the last piece is the text after the last token, with no token."""
    pieces: list[tuple[str, str | None, str | None]] = []
    text: list[str] = []
    pos = 0
    for m in _TOKEN.finditer(template):
        text.append(template[pos : m.start()])
        pos = m.end()
        tok = m.group(0)
        if tok in ("{{", "}}"):
            text.append(tok[0])
            continue
        pieces.append(("".join(text), tok, m.group(1)))
        text = []
    text.append(template[pos:])
    pieces.append(("".join(text), None, None))
    return tuple(pieces)


def _locate(path: Path, text: str):
    """A function from an offset in the template text to its line in the YAML file."""
    first, literal = None, False
    try:
        for k, v in yaml.compose(text).value:
            if k.value == "template":
                first, literal = v.start_mark.line + 1, v.style == "|"
    except (yaml.YAMLError, AttributeError, TypeError, ValueError):
        pass

    def line_of(template: str, offset: int) -> int | None:
        if first is None:
            return None
        return first + 1 + template.count("\n", 0, offset) if literal else first

    return line_of


def check_template(
    text: str, kind: TemplateKind, path: str, line_of=lambda t, o: None, used_by: str = ""
) -> None:
    """Raise :class:`InputError` at the first stray brace, non-name ``{...}``, unknown placeholder,
    or missing required placeholder of ``text`` for ``kind``."""
    allowed = sorted(kind.allowed)
    takes = ", ".join("{" + n + "}" for n in allowed)
    for m in _TOKEN.finditer(text):
        tok, name = m.group(0), m.group(1)
        if tok in ("{{", "}}"):
            continue
        line = line_of(text, m.start())
        if name is None:
            raise InputError(
                f"stray {tok!r} in the template: placeholders are {{name}}, literal "
                f"braces are written {{{{ and }}}}{used_by}",
                path=path,
                line=line,
            )
        if not _NAME.fullmatch(name):
            raise InputError(
                f"{tok!r} is not a placeholder (a {kind.name} template takes {takes}); "
                f"write {{{{ and }}}} for literal braces{used_by}",
                path=path,
                line=line,
            )
        if name not in kind.allowed:
            close = difflib.get_close_matches(name, allowed, n=1)
            hint = f"; did you mean {{{close[0]}}}?" if close else ""
            raise InputError(
                f"unknown placeholder {{{name}}}: a {kind.name} template takes {takes}{hint}{used_by}",
                path=path,
                line=line,
            )
    missing = sorted(kind.required - placeholders(text))
    if missing:
        names = ", ".join("{" + n + "}" for n in missing)
        raise InputError(
            f"the {kind.name} template lacks the placeholder(s) {names} (it needs "
            f"{', '.join('{' + n + '}' for n in sorted(kind.required))}){used_by}",
            path=path,
        )


def _labels(value, kind: TemplateKind, path: str, used_by: str) -> tuple[str, ...] | None:
    if value is None:
        return kind.labels
    if kind.labels is None:
        raise InputError(
            f"a {kind.name} template takes no `labels:` (its answers are not labels){used_by}", path=path
        )
    if not isinstance(value, list) or not value:
        raise InputError(f"`labels:` must be a non-empty list{used_by}", path=path)
    labels = tuple(str(v) for v in value)
    bad = [
        v
        for v, s in zip(value, labels)
        if not isinstance(v, (str, int))
        or isinstance(v, bool)
        or not s
        or s != s.strip()
        or any(c.isspace() for c in s)
    ]
    if bad:
        raise InputError(f"`labels:` entries must be single words or integers, got {bad}{used_by}", path=path)
    if len(set(labels)) != len(labels):
        raise InputError(f"`labels:` lists a label twice: {list(labels)}{used_by}", path=path)
    return labels


def template_path(ref: str, resources: str | Path | None = None) -> Path:
    """The file of a template reference: a path, or ``<study>/<name>`` under ``resources``/prompts."""
    path = Path(ref)
    return path if path.is_file() else resources_dir(resources) / "prompts" / f"{ref}.yaml"


def load_template_spec(
    ref: str, resources: str | Path | None = None, kind: str | None = None, *, key: str | None = None
) -> Template:
    """The checked template of ``ref``: a path, or ``<study>/<name>`` under ``resources``/prompts
    (default: the workflow's resources folder). ``kind``: the kind the caller needs (a file that
    declares another is an error; a file that declares none is taken as this kind). ``key``: the
    config key naming the template, added to the errors."""
    used_by = f" (config key '{key}')" if key else ""
    path = template_path(ref, resources)
    if not path.is_file():
        raise InputError(
            f"no prompt template {ref!r}: neither a file (relative to the working directory) nor {path}",
            key=key,
        )
    text = read_text(path)
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        raise yaml_error(exc, path, used_by) from None
    if not isinstance(data, dict) or not isinstance(data.get("template"), str):
        raise InputError(f"expected a mapping with a 'template' string{used_by}", path=str(path))
    declared = data.get("kind")
    if declared is not None and not isinstance(declared, str):
        raise InputError(f"`kind:` must be a string{used_by}", path=str(path))
    if kind is not None and declared is not None and declared != kind:
        raise InputError(
            f"is a {declared!r} template, but a {kind!r} template is needed here{used_by}", path=str(path)
        )
    name = declared or kind
    if name is None:
        raise InputError(f"declares no `kind:` (one of {sorted(KINDS)}){used_by}", path=str(path))
    if name not in KINDS:
        raise InputError(
            f"unknown template kind {name!r} (registered: {sorted(KINDS)}; a study "
            f"registers its kinds with judgelab.llm.prompts.register_kind){used_by}",
            path=str(path),
        )
    spec = KINDS[name]
    check_template(data["template"], spec, str(path), _locate(path, text), used_by)
    return Template(data["template"], name, _labels(data.get("labels"), spec, str(path), used_by), str(path))


def load_template(ref: str, resources: str | Path | None = None, kind: str | None = None) -> str:
    """The checked text of a template (see :func:`load_template_spec`)."""
    return load_template_spec(ref, resources, kind).text


def build_messages(persona: str, task: str, placement: str = "user") -> list[dict[str, str]]:
    """PERAS section 4.2: prompt = persona || task.

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
