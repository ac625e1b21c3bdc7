"""Overrating ("When LLM Judges Inflate Scores", section 2): do LLM judges inflate grades while
being near-certain of them (pointwise binary and graded judging with token-level confidence), and
do they fail by ties or by wrong wins when comparing two passages (pairwise judging in both
orders)?

Config section ``overrating``; target ``overrating``; rules ``workflow/rules/overrating/overrating.smk`` and
``workflow/rules/overrating/``; library :mod:`judgelab.studies.overrating`; jobs
:mod:`judgelab.studies.overrating.jobs`; prompts ``resources/prompts/overrating/``.

The cells: a pointwise run per dataset x judge x scale (live judges), or per dataset x imported
judge on the judge's declared scale (read from its qrels file, no LLM call); a pairwise run per
dataset x live judge on the dataset's sampled pairs. Tables 1 and 2 pool every cell.

What a job's rule carries as its params is built here, one value per concern: the judge of a
pointwise or pairwise job (:meth:`Plan.pointwise_judge`, :meth:`Plan.pairwise_judge`: a
:class:`~judgelab.llm.judge.Judge`), an imported judge's reading (:meth:`Plan.import_reading`),
the pair sampling (:attr:`Plan.sampling`), the tables' options (:meth:`Plan.table_settings`) and
the figures' titles (:meth:`Plan.figure_title`).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from judgelab.data.imported import ImportReading, study_imports
from judgelab.data.labels import check_labels
from judgelab.errors import InputError, NothingToDo
from judgelab.llm.backends.base import Request
from judgelab.llm.judge import Coverage, Judge, JudgeSection, JudgeTemplate
from judgelab.llm.readings import Prompt
from judgelab.project.plan import LLMJob, StudyPlan
from judgelab.studies.overrating import estimate
from judgelab.studies.overrating.prompts import (
    PAIRWISE_KIND,
    effective_scale,
    load_prompt,
)
from judgelab.studies.overrating.settings import Sampling, TableSettings
from judgelab.studies.overrating.tables import TABLE_FORMATS

#: The figures' titles by kind (``display``: the judge's display name).
FIGURE_TITLES = {
    "transition": "Human -> judge labels - {dataset} / {display} / {scale}",
    "pairwise": "Pairwise judging by setting - {dataset} / {display}",
    "confidence": "Token confidence by outcome - {dataset} / {display}",
}


class Plan(StudyPlan):
    name = "overrating"
    paths = {
        "overrating_pointwise": "{results}/overrating/pointwise/{dataset}/{model}/{scale}.tsv",
        "overrating_import_summary": "{results}/overrating/imported/{dataset}/{model}/{scale}.tsv",
        "overrating_pairs": "{results}/overrating/pairs/{dataset}.tsv",
        "overrating_pairwise": "{results}/overrating/pairwise/{dataset}/{model}.tsv",
        "overrating_pointwise_metrics": "{results}/overrating/metrics/pointwise/{dataset}/{model}/{scale}.tsv",
        "overrating_transition": "{results}/overrating/metrics/transition/{dataset}/{model}/{scale}.tsv",
        "overrating_pairwise_metrics": "{results}/overrating/metrics/pairwise/{dataset}/{model}.tsv",
        "overrating_outcomes": "{results}/overrating/metrics/outcomes/{dataset}/{model}.tsv",
        "overrating_all_metrics": "{results}/overrating/tables/{kind}_metrics.tsv",
        "overrating_table": "{results}/overrating/tables/{table}.{ext}",
        "overrating_transition_figure": "{results}/overrating/figures/transition/{dataset}/{model}/{scale}.{ext}",
        "overrating_pairwise_figure": "{results}/overrating/figures/pairwise/{dataset}/{model}.{ext}",
        "overrating_confidence_figure": "{results}/overrating/figures/confidence/{dataset}/{model}.{ext}",
        "overrating_calibration": "{results}/overrating/tables/calibration.tsv",
        "overrating_reliability": "{results}/overrating/tables/reliability.tsv",
        "overrating_reliability_figure": "{results}/overrating/figures/reliability.{ext}",
    }

    # -- the section --------------------------------------------------------------------------

    @property
    def pointwise(self) -> dict:
        return self.section["pointwise"]

    @property
    def pairwise(self) -> dict:
        return self.section["pairwise"]

    @property
    def scales(self) -> list[str]:
        return list(self.pointwise["scales"])

    @property
    def pairwise_enabled(self) -> bool:
        return bool(self.pairwise["enabled"])

    @cached_property
    def prompts(self) -> dict[str, Prompt]:
        """The checked pointwise prompt of every scale that runs (kind ``judgment``, labels those
        of the scale)."""
        out = {}
        for scale in self.scales:
            key = f"overrating.pointwise.templates.{scale}"
            prompt = load_prompt(
                self.pointwise["templates"][scale], self.project.resources, "judgment", key=key
            )
            check_labels(prompt.labels, scale)
            out[scale] = prompt
        return out

    @cached_property
    def pairwise_prompt(self) -> Prompt:
        """The checked forced-choice prompt (kind ``overrating_pairwise``, two labels: Passage 1,
        Passage 2)."""
        key = "overrating.pairwise.template"
        prompt = load_prompt(self.pairwise["template"], self.project.resources, PAIRWISE_KIND, key=key)
        if len(prompt.labels) != 2:
            raise InputError(
                f"a pairwise template needs two labels (Passage 1, Passage 2), it declares "
                f"{list(prompt.labels)}",
                key=key,
            )
        return prompt

    @property
    def confidence(self) -> str:
        """The token-confidence definition of the tables' "Avg Confidence" (``full``, the paper's,
        or ``renormalised``)."""
        return self.section["confidence"]

    @property
    def pairwise_section(self) -> JudgeSection:
        """The forced-choice judge's section: its one template (``pairwise``) and bound, no
        persona, the label parsed."""
        prompt = self.pairwise_prompt
        template = JudgeTemplate(
            prompt.template,
            prompt.labels,
            int(self.pairwise["max_tokens"]),
            f"{self.pairwise['template']} (overrating.pairwise.template)",
            "overrating.pairwise.max_tokens",
        )
        return JudgeSection.one(
            template, models=self.project.model_entry, min_coverage=float(self.project.config["min_coverage"])
        )

    def coverage(self, kind: str, scale: str | None = None) -> Coverage:
        """The coverage check of a pointwise (``kind`` pointwise, with its ``scale``) or pairwise
        judge job (a tracked param)."""
        if kind == "pointwise":
            return self.judge_section("overrating").coverage(str(scale))
        return self.pairwise_section.coverage("pairwise")

    def pointwise_judge(self, model: str, scale: str) -> Judge:
        """The judge of the pointwise jobs of ``model`` on ``scale`` (any dataset), from the
        study's section of templates (:data:`judgelab.project.judges.JUDGE_SECTIONS`): the model's
        entry, the scale's template and labels, the answer bound and the coverage floor (the
        rule's one tracked param of the judge). No persona: the template alone is the prompt."""
        _ = self.prompts[scale]  # the scale's template, its labels checked against the scale
        return self.judge_section("overrating").judge(model, scale)

    def pairwise_judge(self, model: str) -> Judge:
        """The judge of the pairwise jobs of ``model`` (any dataset): the model's entry, the
        forced-choice template and its two labels (Passage 1, Passage 2), the answer bound and
        the coverage floor (the rule's one tracked param of the judge)."""
        return self.pairwise_section.judge(model, "pairwise")

    def display_names(self) -> dict[str, str]:
        """Every judge of the study (live and imported) by its display name (the tables' and
        figures' param)."""
        return self.project.display_names(list(self.judges) + list(self.imported))

    def table_settings(self) -> TableSettings:
        """The options of Tables 1 and 2 (a tracked param): the "Avg Confidence" definition and
        every judge's display name."""
        return TableSettings(confidence=self.confidence, names=self.display_names())

    def figure_title(self, kind: str, dataset: str, model: str, scale: str = "") -> str:
        """The title of a figure of :data:`FIGURE_TITLES` (a tracked param: renaming a judge
        redraws its figures): the dataset, the judge's display name and, for a transition
        matrix, the scale."""
        return FIGURE_TITLES[kind].format(
            dataset=dataset, display=self.project.display_name(model), scale=scale
        )

    @property
    def sampling(self) -> Sampling:
        """The pair sampling's settings (the sampling job's param)."""
        return Sampling(
            per_setting=int(self.pairwise["per_setting"]),
            seed=int(self.pairwise["seed"]),
            relevant_min=int(self.pairwise["relevant_min"]),
        )

    # -- imported judges ----------------------------------------------------------------------

    @cached_property
    def imported(self) -> dict[str, tuple[str, str, str]]:
        """The imported judges diagnosed here: name -> (template, persona, scale). An entry of
        ``overrating.imported_judges`` is a judge's name (its first template, and its persona
        ``default``, else its first persona) or ``{name, template, persona}``, choosing the file
        of the judge's path pattern explicitly."""
        chosen = study_imports(
            self.section["imported_judges"],
            self.project.imported,
            self.datasets,
            key="overrating.imported_judges",
            datasets_key="overrating.datasets",
            groups=self.project.published_groups,
        )
        return {
            name: (template, persona, effective_scale(judge.scale))
            for name, (judge, template, persona) in chosen.items()
        }

    def imported_file(self, name: str, dataset: str) -> str:
        """The qrels file of an imported judge on a dataset (the import rule's input)."""
        template, persona, _ = self.imported[name]
        return self.project.imported_file(name, dataset, template, persona)

    def imported_scale(self, name: str, scale: str) -> tuple[str, str]:
        """The judge's declared scale and confidence scale ("" where not declared; the import
        rule's params); ``scale``: the run's (the wildcard), which must be the judge's."""
        judge = self.project.imported[name]
        if scale != self.imported[name][2]:
            raise InputError(
                f"imported judge {name!r} labels on the {self.imported[name][2]} scale, not {scale!r}",
                key=f"imported_judges.{name}.scale",
            )
        return judge.scale or "", judge.confidence_scale or ""

    def import_reading(self, name: str, dataset: str, scale: str) -> ImportReading:
        """How the import job of imported judge ``name`` on ``dataset`` reads its file (a tracked
        param): the scales the judge declares (None where not declared: 0/1 labels and 0-1
        confidences are never guessed) and the dataset's encoding; ``scale``: the run's (the
        wildcard), which must be the judge's (:meth:`imported_scale`)."""
        self.imported_scale(name, scale)
        return self.project.import_reading(name, dataset)

    # -- cells --------------------------------------------------------------------------------

    @property
    def live_pointwise(self) -> list[tuple[str, str, str]]:
        """Every dataset x live judge x scale (one LLM job each)."""
        return [(d, m, s) for d in self.datasets for m in self.judges for s in self.scales]

    @property
    def imported_pointwise(self) -> list[tuple[str, str, str]]:
        """Every dataset x imported judge (on its scale) of the study."""
        return [
            (d, name, scale)
            for name, (_, _, scale) in self.imported.items()
            for d in self.project.imported[name].datasets
            if d in self.datasets
        ]

    @property
    def pointwise_cells(self) -> list[tuple[str, str, str]]:
        return self.live_pointwise + self.imported_pointwise

    @property
    def pairwise_cells(self) -> list[tuple[str, str]]:
        """Every dataset x live judge of the pairwise study (one LLM job each)."""
        return [(d, m) for d in self.datasets for m in self.judges] if self.pairwise_enabled else []

    @property
    def pairwise_datasets(self) -> list[str]:
        return list(dict.fromkeys(d for d, _ in self.pairwise_cells))

    def calibration_cells(self) -> list[dict[str, str]]:
        """Every pointwise run (dataset, model, scale), in the order of the calibration job's
        judgment inputs."""
        return [{"dataset": d, "model": m, "scale": s} for d, m, s in self.pointwise_cells]

    def calibration_files(self) -> list[str]:
        """The judgments of every :meth:`calibration_cells` run."""
        return [self.project.path("overrating_pointwise", **c) for c in self.calibration_cells()]

    def scales_of(self, dataset: str, model: str) -> list[str]:
        """The scales of one dataset x judge's pointwise runs (the confidence figure's inputs)."""
        return [s for d, m, s in self.pointwise_cells if (d, m) == (dataset, model)]

    # -- the study's contract -----------------------------------------------------------------

    def models(self) -> list[str]:
        return self.judges if self.live_pointwise or self.pairwise_cells else []

    def text_datasets(self) -> list[str]:
        """The datasets a live judge reads, pointwise or pairwise (an imported judge's are not)."""
        live = [d for d, _, _ in self.live_pointwise] + [d for d, _ in self.pairwise_cells]
        return list(dict.fromkeys(live))

    def check(self) -> None:
        super().check()
        _ = self.prompts, self.imported  # loaded here: checked before any job
        if self.pairwise_cells:
            _ = self.pairwise_prompt
        if not self.pointwise_cells and not self.pairwise_cells:
            others = sorted(  # the config's own (a published judge is named by catalog, not listed)
                n for n, j in self.project.imported.items() if n not in self.imported and not j.published
            )
            hint = (
                f" (name the config's imported judges {others} in overrating.imported_judges)"
                if others
                else ""
            )
            raise NothingToDo(
                "the study is enabled but judges nothing: no dataset x judge x scale "
                f"(overrating.datasets {self.datasets}, overrating.judges {self.judges}; null = the "
                f"top-level `judges`; overrating.pointwise.scales {self.scales}), no pairwise run and "
                f"no imported judge{hint}; set overrating.enabled: false to skip it",
                key="overrating",
            )

    def llm_jobs(self):
        jobs = [
            LLMJob("overrating_pointwise", m, (("dataset", d), ("model", m), ("scale", s)), self.name)
            for d, m, s in self.live_pointwise
        ]
        jobs += [
            LLMJob("overrating_pairwise", m, (("dataset", d), ("model", m)), self.name)
            for d, m in self.pairwise_cells
        ]
        return jobs

    def targets(self) -> list[str]:
        path = self.project.path
        out = []
        if self.pointwise_cells:
            out.append(path("overrating_all_metrics", kind="pointwise"))
            out += [path("overrating_calibration"), path("overrating_reliability")]
            out += [path("overrating_reliability_figure", ext=e) for e in ("png", "pdf")]
            out += [path("overrating_table", table="table1", ext=e) for e in TABLE_FORMATS]
            out += [
                path("overrating_transition_figure", dataset=d, model=m, scale=s, ext=e)
                for d, m, s in self.pointwise_cells
                for e in ("png", "pdf")
            ]
            pairs = dict.fromkeys((d, m) for d, m, _ in self.pointwise_cells)
            out += [
                path("overrating_confidence_figure", dataset=d, model=m, ext=e)
                for d, m in pairs
                for e in ("png", "pdf")
            ]
        if self.pairwise_cells:
            out.append(path("overrating_all_metrics", kind="pairwise"))
            out += [
                path("overrating_table", table=t, ext=e)
                for t in ("table2", "table2_by_setting")
                for e in TABLE_FORMATS
            ]
            out += [
                path("overrating_pairwise_figure", dataset=d, model=m, ext=e)
                for d, m in self.pairwise_cells
                for e in ("png", "pdf")
            ]
        return out

    # -- the estimate -------------------------------------------------------------------------

    def requests(self, job, ctx) -> Iterator[tuple[str, Request, bool]]:
        """For ``judgelab estimate``: the requests of one job (:mod:`.estimate`)."""
        return estimate.requests(self, job, ctx)
