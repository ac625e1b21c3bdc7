"""One judge's settings as one value (:class:`Judge`), and its coverage floor (:class:`Coverage`).

A study's plan builds it once per job from the config (the model's entry, the template's text
and labels, the persona, the answer bound and reading, the coverage floor); it travels whole
through the rule's ``params`` (:meth:`Judge.param`, a deterministic JSON text, so Snakemake reruns
exactly the jobs whose judge changed), the script (:func:`judgelab.project.runner.run` decodes it
by the job function's annotation) and the job into the judgment. The model's decoding options
(temperature, extra request fields) are part of its entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from judgelab import schema
from judgelab.data.labels import GRADE_LABELS
from judgelab.llm.answers import PARSER_VERSION
from judgelab.llm.personas import read_persona
from judgelab.llm.session import JobContext, LLMSession
from judgelab.params import Settings

J = TypeVar("J", bound="Judge")


@dataclass(frozen=True)
class Coverage(Settings):
    """What a judge job's coverage check needs besides the answers (a tracked param of the job,
    built by the study's plan from the config): the threshold, how the template is named, the
    config key of the answer bound and, where the study has one, the key of its answer-reading
    mode."""

    min_coverage: float
    template: str
    bound_key: str
    answer_key: str | None = None

    @classmethod
    def from_param(cls, value):
        """The floor a param carries; None or "" (a job without the check): None."""
        if value is None or value == "":
            return None
        return super().from_param(value)


@dataclass(frozen=True)
class Judge(Settings):
    """A judge's settings.

    ``model``: the model's key in ``models`` (errors name ``models.<model>.…``); ``spec``: its
    entry (the keys that change no answer, such as ``display_name``, left out); ``template``: the
    prompt template's text; ``labels``: the answers it accepts; ``persona``: the persona's
    instruction, or "" when it comes from a generated persona's file (an input of the job: see
    :meth:`resolved`); ``placement``: where the instruction goes (``user`` | ``system``);
    ``max_tokens``: the answer bound; ``answer``: how the label is read (``parse`` | ``logits``);
    ``coverage``: the job's coverage floor (None: no check); ``parser``: the version of the answer
    rules that read its answers (:data:`judgelab.llm.answers.PARSER_VERSION` unless given; None
    for a judge whose labels come from the logits, whose answers no rule reads), so a change of
    the rules reruns exactly the jobs that parse (from the request cache)."""

    model: str
    spec: Mapping[str, Any] = field(default_factory=dict)
    template: str = ""
    labels: tuple[str, ...] = GRADE_LABELS
    persona: str = ""
    placement: str = schema.default_of("personas.placement")
    max_tokens: int = 16
    answer: str = "parse"
    coverage: Coverage | None = None
    parser: int | None = None

    def __post_init__(self) -> None:
        if self.answer == "logits":
            object.__setattr__(self, "parser", None)
        elif self.parser is None:
            object.__setattr__(self, "parser", PARSER_VERSION)
        object.__setattr__(self, "labels", tuple(str(x) for x in self.labels))
        object.__setattr__(self, "max_tokens", int(self.max_tokens))
        object.__setattr__(self, "spec", dict(self.spec))

    # -- in a job --------------------------------------------------------------------------------
    @property
    def backend(self) -> str | None:
        return self.spec.get("backend")

    def resolved(self: J, persona_file: str | None = None) -> J:
        """The judge as a job sends it: its persona the instruction itself (:attr:`persona`, or,
        when that is "", the generated persona's file ``persona_file``)."""
        return replace(self, persona=read_persona(self.persona, persona_file))

    def but(self: J, **changes: Any) -> J:
        """The same judge with some settings changed (e.g. another template)."""
        return replace(self, **changes)

    def session(self, context: JobContext) -> LLMSession:
        """The model session of a job of this judge (backend, request cache, usage line)."""
        return context.session(dict(self.spec), self.model)
