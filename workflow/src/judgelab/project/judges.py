"""The sections of templates and judges a study names, and the judges they build
(:class:`judgelab.llm.judge.JudgeSection`, the one judge factory).

A section is described by where its keys are in the config (:class:`SectionKeys`); today the
two studies whose papers define the judges hold them in their own config sections - PERAS's
``peras.templates`` (a template and an answer bound per name) with ``peras.answer`` and the
run's personas, the overrating study's ``overrating.pointwise.templates`` (a template per
scale) with one bound and no persona. A study that judges as they do names the section
(``perturbations.original``; the ranking study judges with PERAS's) and asks the project for
it (:meth:`judgelab.project.plan.StudyPlan.judge_section`): no plan asks another for a judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from judgelab.data.labels import check_grade_labels, check_labels
from judgelab.llm.judge import JudgeSection, JudgeTemplate


@dataclass(frozen=True)
class SectionKeys:
    """Where a judge section's keys are: ``templates`` the dotted key of its mapping name ->
    template entry; ``ref`` the key of the template's reference in an entry (None: the entry is
    the reference); ``bound`` the answer bound, the entry's key when ``ref`` is set, else a dotted
    key of the config; ``answer`` the dotted key of the answer mode (None: parsed); ``personas``
    whether its judges take a persona; ``shown`` how the coverage check names a template
    (fields ``name``, ``ref``, ``key``: the dotted key of the entry); ``judges`` the dotted key of
    the models its judge rule runs (null: the top-level ``judges``); ``runs`` the dotted key of
    the template names that run (None: every name); ``labels`` what a template's labels are
    checked against: ``grades`` (each a grade: compared with the human grades) or ``scale``
    (exactly the labels of the scale the name is); ``repeats`` the dotted key of how many times
    each of its judge jobs is asked (None: once; :mod:`judgelab.project.repeats`)."""

    templates: str
    ref: str | None
    bound: str
    answer: str | None
    personas: bool
    shown: str
    judges: str
    runs: str | None
    labels: str
    repeats: str | None = None


#: The sections of templates and judges, by the name a study gives.
JUDGE_SECTIONS = {
    "peras": SectionKeys(
        templates="peras.templates",
        ref="template",
        bound="max_tokens",
        answer="peras.answer",
        personas=True,
        shown="{name} ({ref})",
        judges="peras.judges",
        runs=None,
        labels="grades",
        repeats="peras.repeats",
    ),
    "overrating": SectionKeys(
        templates="overrating.pointwise.templates",
        ref=None,
        bound="overrating.pointwise.max_tokens",
        answer=None,
        personas=False,
        shown="{ref} ({key})",
        judges="overrating.judges",
        runs="overrating.pointwise.scales",
        labels="scale",
    ),
}


def _at(config: dict, dotted: str) -> Any:
    value: Any = config
    for part in dotted.split("."):
        value = value[part]
    return value


def judge_section(project: Any, name: str) -> JudgeSection:
    """The section ``name`` of :data:`JUDGE_SECTIONS` under ``project``'s config (a
    :class:`judgelab.wiring.facade.Project`: its config, templates, model entries, personas):
    its templates loaded and checked (kind ``judgment``) when first asked."""
    keys = JUDGE_SECTIONS[name]
    config = project.config
    entries = _at(config, keys.templates)

    @cache
    def template(t: str) -> JudgeTemplate:
        key = f"{keys.templates}.{t}"
        ref = entries[t] if keys.ref is None else entries[t][keys.ref]
        spec = project.template(ref, "judgment", key if keys.ref is None else f"{key}.{keys.ref}")
        if keys.labels == "scale":
            check_labels(spec.labels or (), t)
        else:
            check_grade_labels(spec.labels or (), str(spec.path), f"{key}.{keys.ref}")
        bound_key = f"{key}.{keys.bound}" if keys.ref is not None else keys.bound
        bound = entries[t][keys.bound] if keys.ref is not None else _at(config, keys.bound)
        return JudgeTemplate(
            text=spec.text,
            labels=tuple(str(x) for x in spec.labels or ()),
            max_tokens=int(bound),
            shown=keys.shown.format(name=t, ref=ref, key=key),
            bound_key=bound_key,
        )

    return JudgeSection(
        models=project.model_entry,
        template=template,
        min_coverage=float(config["min_coverage"]),
        answer=_at(config, keys.answer) if keys.answer else "parse",
        answer_key=keys.answer,
        persona=project.persona_param if keys.personas else None,
        placement=project.placement if keys.personas else "user",
        names=tuple(entries if keys.runs is None else _at(config, keys.runs)),
        judges=tuple(config["judges"] if _at(config, keys.judges) is None else _at(config, keys.judges)),
        repeats=int(_at(config, keys.repeats)) if keys.repeats else None,
    )
