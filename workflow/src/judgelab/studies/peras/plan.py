"""PERAS (seed 000): personality-conditioned relevance assessment with confidence.

Config section ``peras``; target ``peras``; rules ``workflow/rules/peras.smk`` and
``workflow/rules/peras/``; jobs :mod:`judgelab.jobs.peras`; prompts ``resources/prompts/peras/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from ...backends.base import Request
from ...config import check_name
from ...errors import InputError
from ...imported import judge_groups
from ...judging import Coverage, judgment_requests, read_judgment, resolve_answer
from ...labels import GRADE_LABELS
from ...prompts import Template
from .. import LLMJob, StudyPlan
from .confidence import confidence_requests

#: The figures per dataset x model x template (seed 000 Figures 2-5).
FIGURE_KINDS = ("radar_agreement", "radar_calibration", "interpersona_kappa", "confidence_by_grade")


class Plan(StudyPlan):
    name = "peras"
    paths = {
        "judgments": "{results}/judgments/{dataset}/{model}/{template}/{persona}.tsv",
        "confidence": "{results}/confidence/{dataset}/{model}/{template}/{persona}.tsv",
        "group_metrics": "{results}/metrics/groups/{dataset}/{model}/{template}.tsv",
        "metrics": "{results}/metrics/metrics.tsv",
        "group_significance": "{results}/significance/{dataset}/{model}/{template}.tsv",
        "significance": "{results}/metrics/significance.tsv",
        "metrics_significance": "{results}/metrics/metrics_significance.{ext}",
        "interpersona": "{results}/metrics/interpersona/{dataset}/{model}/{template}.tsv",
        "confidence_by_grade": "{results}/metrics/confidence_by_grade/{dataset}/{model}/{template}.tsv",
        "figure": "{results}/figures/{kind}/{dataset}/{model}/{template}.{ext}",
        "classifier": "{results}/classifier/{dataset}/{model}/{template}/{kind}.tsv",
        "classifier_table": "{results}/classifier/table5.{ext}",
    }

    # -- templates ----------------------------------------------------------------------------

    @property
    def templates(self) -> list[str]:
        return list(self.section["templates"])

    @cached_property
    def template_specs(self) -> dict[str, Template]:
        """The judgment templates by name, checked (kind ``judgment``, labels within the grades)."""
        out = {}
        for t, s in self.section["templates"].items():
            check_name(t, f"peras.templates.{t}")
            key = f"peras.templates.{t}.template"
            spec = self.project.template(s["template"], "judgment", key)
            outside = [x for x in spec.labels if x not in GRADE_LABELS]
            if outside:
                raise InputError(
                    f"{spec.path} declares labels {outside}: PERAS compares labels with "
                    f"the human grades {list(GRADE_LABELS)}",
                    key=key,
                )
            out[t] = spec
        return out

    @property
    def template_texts(self) -> dict[str, str]:
        return {t: spec.text for t, spec in self.template_specs.items()}

    @property
    def template_labels(self) -> dict[str, list[str]]:
        """Each judgment template's label set: the answers its judge job accepts."""
        return {t: list(spec.labels) for t, spec in self.template_specs.items()}

    @cached_property
    def confidence_text(self) -> str:
        return self.project.load_template(
            self.section["confidence"]["template"], "confidence", "peras.confidence.template"
        )

    def max_tokens(self, template: str) -> int:
        return int(self.section["templates"][template]["max_tokens"])

    def answer(self, model: str) -> str:
        """How the judge jobs of ``model`` read the label (``peras.answer``, ``auto`` resolved by
        the model's backend: ``logits`` for the embedded model, ``parse`` for API models)."""
        return resolve_answer(self.section["answer"], self.project.config["models"][model]["backend"])

    def coverage(self, template: str) -> Coverage:
        """The coverage check of the judge jobs of ``template`` (a tracked param)."""
        return Coverage(
            min_coverage=float(self.project.config["min_coverage"]),
            template=f"{template} ({self.section['templates'][template]['template']})",
            bound_key=f"peras.templates.{template}.max_tokens",
            answer_key="peras.answer",
        )

    # -- groups -------------------------------------------------------------------------------

    @cached_property
    def groups(self) -> dict[tuple[str, str, str], list[str]]:
        """Every dataset x model x template (live judges, then imported judges) with its persona
        conditions in order: the unit of the metrics, significance, figure and classifier stages.
        Binary imported judges (``scale: binary``) are not among them: their 0/1 labels are not
        grades (the overrating study diagnoses them)."""
        return judge_groups(
            self.datasets, self.judges, self.templates, list(self.project.personas), self.project.imported
        )

    @property
    def reference(self) -> str:
        return self.section["significance"]["reference"]

    def significance_groups(self) -> list[tuple[str, str, str]]:
        """Groups with the reference persona and at least one other to compare with it."""
        return [g for g, ps in self.groups.items() if self.reference in ps and len(ps) > 1]

    @property
    def classifier_dataset(self) -> str | None:
        return self.section["classifier"]["dataset"]

    def classifier_groups(self) -> list[tuple[str, str, str]]:
        d = self.classifier_dataset
        return [g for g in self.groups if d is not None and g[0] == d]

    # -- the study's contract -----------------------------------------------------------------

    def check(self) -> None:
        super().check()
        _ = self.template_specs, self.confidence_text  # loaded here: checked before any job
        if not self.groups:
            raise InputError(
                "the study is enabled but judges nothing: no dataset x judge (peras.datasets "
                f"{self.datasets}, peras.judges {self.judges}) and no graded imported judge; "
                "set peras.enabled: false to skip it",
                key="peras",
            )
        clf = self.classifier_dataset
        if clf is not None and clf not in self.datasets:
            raise InputError(
                f"dataset {clf!r} is not among the datasets PERAS judges ({self.datasets})",
                key="peras.classifier.dataset",
            )
        live = list(self.project.personas) if self.judges else []
        ref = self.reference
        if len(live) > 1 and ref not in live:
            raise InputError(
                f"persona {ref!r} is not run (the run's personas: {live}); the "
                "significance stage would compare nothing",
                key="peras.significance.reference",
            )
        imported = {n: j for n, j in self.project.imported.items() if j.scale != "binary"}
        for name, judge in imported.items():
            if len(judge.personas) > 1 and ref not in judge.personas:
                raise InputError(
                    f"persona {ref!r} is not among the personas of imported judge {name!r} "
                    f"(imported_judges.{name}.personas: {list(judge.personas)})",
                    key="peras.significance.reference",
                )
        shown = set(live).union(*(j.personas for j in imported.values()))
        for i, p in enumerate(self.section["figures"]["confidence_personas"] or []):
            if p not in shown:
                raise InputError(
                    f"persona {p!r} is not run by any judge (the run's personas: {sorted(shown)})",
                    key=f"peras.figures.confidence_personas[{i}]",
                )

    def llm_jobs(self):
        return [
            LLMJob(rule, m, (("dataset", d), ("model", m), ("template", t), ("persona", p)), self.name)
            for d in self.datasets
            for m in self.judges
            for t in self.templates
            for p in self.project.personas
            for rule in ("judge", "confidence")
        ]

    def targets(self) -> list[str]:
        path = self.project.path
        targets = [path("metrics"), path("significance")]
        targets += [path("metrics_significance", ext=e) for e in ("tsv", "html")]
        for kind in FIGURE_KINDS:
            for ext in ("png", "pdf"):
                targets += [
                    path("figure", kind=kind, dataset=d, model=m, template=t, ext=ext)
                    for d, m, t in self.groups
                ]
        if self.classifier_groups():
            targets += [path("classifier_table", ext=e) for e in ("tsv", "md", "tex", "html")]
        return targets

    def requests(self, job, ctx) -> Iterator[tuple[str, Request, bool]]:
        """Judge: every pair. Confidence: the pairs whose judgment label parsed - known only where
        the judgment is cached; elsewhere every pair is counted (an upper bound)."""
        w = job.wc
        src = ctx.pairs(w["dataset"])
        text = ctx.persona_text(w["persona"])
        placement = self.project.placement
        answer = self.answer(job.model)
        reqs = judgment_requests(
            src.pairs,
            text,
            self.template_texts[w["template"]],
            max_tokens=self.max_tokens(w["template"]),
            placement=placement,
            answer=answer,
        )
        if job.rule == "judge":
            for req in reqs:
                yield "judge", req, src.exact and ctx.cached(job.model, req) is not None
            return
        conf_max = int(self.section["confidence"]["max_tokens"])
        asked_rows, labels, upper = [], [], []
        for i, req in enumerate(reqs):
            hit = ctx.cached(job.model, req) if src.exact else None
            if hit is None:
                upper.append(i)  # label unknown: counted as asked
            else:
                label = read_judgment(
                    hit["text"], hit.get("label_probs"), self.template_specs[w["template"]].labels, answer
                )
                if label is not None:
                    asked_rows.append(i)
                    labels.append(label)
        for req in confidence_requests(
            src.pairs.iloc[asked_rows],
            labels,
            text,
            self.confidence_text,
            max_tokens=conf_max,
            placement=placement,
        ):
            yield "confidence", req, ctx.cached(job.model, req) is not None
        for req in confidence_requests(
            src.pairs.iloc[upper],
            [0] * len(upper),
            text,
            self.confidence_text,
            max_tokens=conf_max,
            placement=placement,
        ):
            yield "confidence", req, False
