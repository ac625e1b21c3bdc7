"""A judge: its settings as one value (:class:`Judge`), its coverage floor (:class:`Coverage`),
how its answers are read (:func:`resolve_answer`), and the one factory that builds both from a
section of templates and judges (:class:`JudgeSection`). Running a judge's judgment - its
requests, reading its answers, the coverage check - is :mod:`judgelab.llm.judging`.

A study's plan builds it once per job from the config (through a :class:`JudgeSection`) (the model's entry, the template's text
and labels, the persona, the answer bound and reading, the coverage floor); it travels whole
through the rule's ``params`` (:meth:`Judge.param`, a deterministic JSON text, so Snakemake reruns
exactly the jobs whose judge changed), the script (:func:`judgelab.project.runner.run` decodes it
by the job function's annotation) and the job into the judgment. The model's decoding options
(temperature, extra request fields) are part of its entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from judgelab import schema
from judgelab.data.labels import GRADE_LABELS
from judgelab.errors import InputError
from judgelab.llm.answers import PARSER_VERSION
from judgelab.llm.backends import capabilities, temperature_of
from judgelab.llm.personas import read_persona
from judgelab.llm.session import JobContext, LLMSession
from judgelab.params import Settings

J = TypeVar("J", bound="Judge")

#: How a pointwise judgment's label is read (``auto`` resolves to one of them).
ANSWER_MODES = ("parse", "logits")


def resolve_answer(answer: str, backend: str | None, key: str = "peras.answer") -> str:
    """``auto`` -> ``logits`` for the embedded (``local``) backend, ``parse`` for the others;
    ``parse`` and ``logits`` as given. ``key``: the config key naming the mode (errors)."""
    if answer == "auto":
        return "logits" if capabilities(backend).reads_logits else "parse"
    if answer not in ANSWER_MODES:
        raise InputError(f"unknown answer mode {answer!r}; known: auto, {', '.join(ANSWER_MODES)}", key=key)
    return answer


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

    @property
    def temperature(self) -> float:
        """The model's sampling temperature (``models.<model>.temperature``)."""
        return temperature_of(self.spec)

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


@dataclass(frozen=True)
class JudgeTemplate:
    """One template of a judge section: its text and labels, its answer bound, how the coverage
    check names it (``shown``) and the config key of its bound (``bound_key``)."""

    text: str
    labels: tuple[str, ...]
    max_tokens: int
    shown: str
    bound_key: str


@dataclass(frozen=True)
class JudgeSection:
    """A section of templates and judges, and the one way every judge of it is built.

    ``models``: a model's entry as its jobs send it (the keys that change no answer left out);
    ``template``: a template's :class:`JudgeTemplate` by its name in the section (loaded and
    checked when first asked); ``min_coverage``: the coverage floor; ``answer``: how the label
    is read (``parse`` | ``logits`` | ``auto``: by the backend's capability,
    :func:`resolve_answer`) and ``answer_key`` the config key naming it (None: no key, and the
    coverage check offers none to change it); ``persona``: a persona's name -> the judge's
    persona param (None: the section's judges take no persona, so no placement either);
    ``placement``: where a persona's instruction goes; ``names``: the section's template names
    that run (what a study naming one may choose from); ``judges``: the models its judge rule
    runs (a study naming the section judges with those); ``checked``: its judge jobs end with the coverage
    check (False: a follow-up whose answers are no labels, e.g. a confidence); ``repeats``: how
    many times each of its judge jobs is asked (the section's key, e.g. ``peras.repeats``, which
    every study judging with the section follows; None: the section has none, once).

    A study names a section (``perturbations.original``, the PERAS section the ranking judges
    with) and asks it for its judges, so the judge of a pair is the same value, and its requests
    the same cache keys, in every study that judges it with the same model and template."""

    models: Callable[[str], Mapping[str, Any]]
    template: Callable[[str], JudgeTemplate]
    min_coverage: float
    answer: str = "parse"
    answer_key: str | None = None
    persona: Callable[[str], str] | None = None
    placement: str = schema.default_of("personas.placement")
    names: tuple[str, ...] = ()
    judges: tuple[str, ...] = ()
    checked: bool = True
    repeats: int | None = None

    @classmethod
    def one(cls, template: JudgeTemplate, **settings: Any) -> JudgeSection:
        """A section of one template (a study's single prompt), ``settings`` as the fields."""
        return cls(template=lambda _: template, **settings)

    def answer_of(self, model: str) -> str:
        """How the judges of ``model`` read the label (``auto`` resolved by its backend)."""
        backend = self.models(model).get("backend")
        return resolve_answer(self.answer, backend, key=self.answer_key or "answer")

    def coverage(self, template: str) -> Coverage:
        """The coverage check of the judge jobs of ``template`` (a tracked param)."""
        t = self.template(template)
        return Coverage(self.min_coverage, t.shown, t.bound_key, self.answer_key)

    def judge(self, model: str, template: str, persona: str | None = None) -> Judge:
        """The judge of ``model`` with ``template`` (and ``persona``, in a section of persona
        judges): the model's entry, the template's text, labels and bound, the persona and its
        placement, how the label is read and the coverage floor."""
        t = self.template(template)
        judge = Judge(
            model=model,
            spec=self.models(model),
            template=t.text,
            labels=t.labels,
            max_tokens=t.max_tokens,
            answer=self.answer_of(model),
            coverage=self.coverage(template) if self.checked else None,
        )
        if self.persona is None or persona is None:
            return judge
        return judge.but(persona=self.persona(persona), placement=self.placement)
