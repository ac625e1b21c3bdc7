"""PERAS (Judging with Personality and Confidence): personality-conditioned relevance assessment
with confidence.

Config section ``peras``; target ``peras``; rules ``workflow/rules/peras/peras.smk`` and
``workflow/rules/peras/``; jobs :mod:`judgelab.studies.peras.jobs`; prompts ``resources/prompts/peras/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import cached_property
from typing import cast

from judgelab.analysis.committee import Committee
from judgelab.data.imported import judge_groups
from judgelab.data.labels import check_grade_labels
from judgelab.errors import InputError, NothingToDo
from judgelab.llm.backends.base import Request
from judgelab.llm.judge import Coverage, Judge, JudgeSection, JudgeTemplate
from judgelab.llm.prompts import Template
from judgelab.project.config import check_name
from judgelab.project.plan import LLMJob, StudyPlan
from judgelab.project.repeats import check_draws
from judgelab.studies.peras import estimate
from judgelab.studies.peras.settings import ClassifierSettings, FigureSettings, Group, SignificanceSettings

#: The figures per dataset x model x template (PERAS Figures 2-5).
FIGURE_KINDS = ("radar_agreement", "radar_calibration", "interpersona_kappa", "confidence_by_grade")
#: The PERAS paper's tables besides Table 5 (``{results}/peras/metrics/<table>.{tsv,md,tex,html}``): Table 4
#: (dataset statistics), Tables 7 and 8 (agreement and calibration, wide).
TABLES = ("table4", "table7", "table8")

#: What the persona-naming keys mean when left null (their schema default), applied to the
#: personas that run: the significance reference (``default``, the paper's no-persona condition)
#: and the confidence-by-grade chart's personas (PERAS Figure 3's HN and LC).
DEFAULT_REFERENCE = "default"
#: The word in a majority judge's name, ``<judge>+majority@<k>`` (:meth:`Plan.majority_name`).
MAJORITY = "majority"
FIGURE3_PERSONAS = ("HN", "LC")


class Plan(StudyPlan):
    name = "peras"
    paths = {
        "judgments": "{results}/peras/judgments/{dataset}/{model}/{template}/{persona}.tsv",
        "confidence": "{results}/peras/confidence/{dataset}/{model}/{template}/{persona}.tsv",
        "import_summary": "{results}/peras/imported/{dataset}/{model}/{template}/{persona}.tsv",
        "group_metrics": "{results}/peras/metrics/groups/{dataset}/{model}/{template}.tsv",
        "metrics": "{results}/peras/metrics/metrics.tsv",
        "group_significance": "{results}/peras/significance/{dataset}/{model}/{template}.tsv",
        "significance": "{results}/peras/metrics/significance.tsv",
        "metrics_significance": "{results}/peras/metrics/metrics_significance.{ext}",
        "interpersona": "{results}/peras/metrics/interpersona/{dataset}/{model}/{template}.tsv",
        "confidence_by_grade": "{results}/peras/metrics/confidence_by_grade/{dataset}/{model}/{template}.tsv",
        "figure": "{results}/peras/figures/{kind}/{dataset}/{model}/{template}.{ext}",
        "classifier": "{results}/peras/classifier/{dataset}/{model}/{template}/{kind}.tsv",
        "classifier_table": "{results}/peras/classifier/table5.{ext}",
        "peras_table": "{results}/peras/metrics/{table}.{ext}",
        "peras_calibration": "{results}/peras/metrics/calibration.tsv",
        "peras_reliability": "{results}/peras/metrics/reliability.tsv",
        "peras_reliability_figure": "{results}/peras/figures/reliability.{ext}",
        "repeats": "{results}/peras/repeats/{dataset}/{model}/{template}/{persona}/samples.tsv",
        "repeats_majority": "{results}/peras/repeats/{dataset}/{model}/{template}/{persona}/majority.tsv",
        "consistency": "{results}/peras/metrics/consistency.{ext}",
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
            check_grade_labels(spec.labels or (), str(spec.path), key)
            out[t] = spec
        return out

    @property
    def template_texts(self) -> dict[str, str]:
        return {t: spec.text for t, spec in self.template_specs.items()}

    @property
    def template_labels(self) -> dict[str, list[str]]:
        """Each judgment template's label set: the answers its judge job accepts."""
        # template_specs iterated each spec's labels (checking them), so none is None
        return {t: list(cast("tuple[str, ...]", spec.labels)) for t, spec in self.template_specs.items()}

    @cached_property
    def confidence_text(self) -> str:
        return self.project.load_template(
            self.section["confidence"]["template"], "confidence", "peras.confidence.template"
        )

    def max_tokens(self, template: str) -> int:
        return int(self.section["templates"][template]["max_tokens"])

    # -- cells and groups ---------------------------------------------------------------------

    @cached_property
    def cells(self) -> list[tuple[str, str, str]]:
        """The dataset x judge x template cells the live judges run, in the order dataset, judge,
        template of the study's lists: every combination (``peras.cells`` null), or the union of
        the blocks of ``peras.cells`` (a block's null key: all of them). A name a block uses
        that the study does not run is an error naming the block's key."""
        blocks = self.section.get("cells")
        every = [(d, m, t) for d in self.datasets for m in self.judges for t in self.templates]
        if blocks is None:
            return every
        chosen: set[tuple[str, str, str]] = set()
        for i, block in enumerate(blocks):
            picked = []
            for k, known, what in (
                ("datasets", self.datasets, "the study's datasets (peras.datasets)"),
                ("judges", self.judges, "the study's judges (peras.judges, or the top-level judges)"),
                ("templates", self.templates, "the keys of peras.templates"),
            ):
                names = block.get(k)
                for j, v in enumerate(names or []):
                    if v not in known:
                        raise InputError(
                            f"{v!r} is not among {what}: {known}", key=f"peras.cells[{i}].{k}[{j}]"
                        )
                picked.append(set(known if names is None else names))
            chosen.update((d, m, t) for d in picked[0] for m in picked[1] for t in picked[2])
        return [c for c in every if c in chosen]

    @property
    def judges_section(self) -> JudgeSection:
        """The study's section of templates and judges (``peras.templates``, ``peras.answer``,
        the run's personas): the factory of its judges, which the studies judging as PERAS does
        name too (:data:`judgelab.project.judges.JUDGE_SECTIONS`)."""
        return self.judge_section("peras")

    def answer(self, model: str) -> str:
        """How the judge jobs of ``model`` read the label (``peras.answer``, ``auto`` resolved by
        the model's backend: ``logits`` for the embedded model, ``parse`` for API models)."""
        return self.judges_section.answer_of(model)

    def coverage(self, template: str) -> Coverage:
        """The coverage check of the judge jobs of ``template`` (a tracked param)."""
        return self.judges_section.coverage(template)

    def judge(self, model: str, template: str, persona: str) -> Judge:
        """The judge of the judgment jobs of ``model`` x ``template`` x ``persona`` (any dataset):
        its entry, the template's text, labels and bound, the persona, how the label is read and
        the coverage floor (the rule's one tracked param of the judge)."""
        return self.judges_section.judge(model, template, persona)

    def confidence_judge(self, model: str, persona: str) -> Judge:
        """The judge of the confidence follow-up of ``model`` x ``persona``: the same model and
        persona, the confidence template and its bound (its answers are read as a 0-100 number,
        with no coverage check)."""
        follow_up = JudgeTemplate(self.confidence_text, (), self.confidence_max_tokens, "", "")
        return replace(
            self.judges_section, template=lambda _: follow_up, answer="parse", answer_key=None, checked=False
        ).judge(model, "confidence", persona)

    @cached_property
    def groups(self) -> dict[tuple[str, str, str], list[str]]:
        """Every dataset x model x template (the live judges' :attr:`cells`, then imported judges)
        with its persona conditions in order: the unit of the metrics, significance, figure and
        classifier stages. Binary imported judges (``scale: binary``) are not among them: their
        0/1 labels are not grades (the overrating study diagnoses them); nor are published judges
        that give scores (the ranking study takes them as gains), in the log."""
        scores = [n for n, j in self.project.imported.items() if j.gives_scores]
        if scores and self.enabled:
            self.project.note(
                f"PERAS compares grades: {len(scores)} imported judges that give scores left out "
                f"(the ranking study takes them as gains): {', '.join(scores)}"
            )
        groups = judge_groups(
            self.datasets, self.judges, self.templates, list(self.project.personas), self.project.imported
        )
        cells, live = set(self.cells), set(self.judges)
        groups = {g: ps for g, ps in groups.items() if g[1] not in live or g in cells}
        # a published judge (named by catalog) counts on the study's datasets only: an imported
        # judge's datasets are the user's own choice for it, a published one's are its files'
        imported = self.project.imported
        groups = {
            g: ps
            for g, ps in groups.items()
            if not (g[1] in imported and imported[g[1]].published and g[0] not in self.datasets)
        }
        # persona committees: a row of every group that runs all their personas
        for name, c in self.persona_committees.items():
            for ps in groups.values():
                if set(c.members) <= set(ps):
                    ps.append(name)
        # judge committees: a judge of every dataset x template all their judges ran, with the
        # personas (persona committees included) all of them ran, in the first judge's order
        for name, c in self.judge_committees.items():
            for d, m, t in list(groups):
                if not c.members or m != c.members[0]:  # (no member: an error of the check)
                    continue
                of = [groups.get((d, j, t)) or [] for j in c.members]
                if all(of):
                    groups[(d, name, t)] = [p for p in groups[(d, m, t)] if all(p in ps for ps in of)]
        return {g: ps for g, ps in groups.items() if ps}

    # -- committees ---------------------------------------------------------------------------

    @cached_property
    def committees(self) -> dict[str, tuple[str, Committee]]:
        """The committees (``peras.committees``), by name: (``personas`` or ``judges``, the
        committee). Checked by :meth:`_check_committees`."""
        out = {}
        for name, spec in self.section["committees"].items():
            kind = "personas" if "personas" in spec else "judges"
            out[str(name)] = (
                kind,
                Committee(
                    name=str(name),
                    members=tuple(spec.get(kind) or ()),
                    rule=str(spec["rule"]),
                    quorum=int(spec["quorum"]),
                ),
            )
        return out

    @property
    def persona_committees(self) -> dict[str, Committee]:
        return {n: c for n, (kind, c) in self.committees.items() if kind == "personas"}

    @property
    def judge_committees(self) -> dict[str, Committee]:
        return {n: c for n, (kind, c) in self.committees.items() if kind == "judges"}

    def is_committee(self, model: str, persona: str) -> bool:
        """Whether the judge job (model, persona) is a committee's (a judge or a persona committee)."""
        return model in self.judge_committees or persona in self.persona_committees

    def committee_of(self, model: str, persona: str) -> Committee:
        """The committee whose labels the judgment table of ``model`` x ``persona`` holds (a judge
        committee's, else a persona committee's: a tracked param of the committee job)."""
        if model in self.judge_committees:
            return self.judge_committees[model]
        return self.persona_committees[persona]

    def committee_inputs(self, dataset: str, model: str, template: str, persona: str) -> list[str]:
        """The members' judgment tables of a committee's table, in the order of its members: its
        judges' at the same persona, or the judge's at its personas."""
        c = self.committee_of(model, persona)
        ids = {"dataset": dataset, "template": template}
        if model in self.judge_committees:
            return [self.project.path("judgments", model=m, persona=persona, **ids) for m in c.members]
        return [self.project.path("judgments", model=model, persona=p, **ids) for p in c.members]

    def _check_committees(self) -> None:
        from judgelab.analysis.committee import check_committee

        run_personas = list(self.project.personas)
        graded = [n for n, j in self.project.imported.items() if j.graded]
        for n in graded:
            run_personas += [p for p in self.project.imported[n].personas if p not in run_personas]
        judges = list(self.judges) + graded
        taken = set(self.project.config["models"]) | set(self.project.imported) | set(run_personas)
        for name, spec in self.section["committees"].items():
            key = f"peras.committees.{name}"
            check_name(str(name), key)
            if name in taken:
                raise InputError(
                    f"{name!r} already names a model, an imported judge or a persona of the run", key=key
                )
            if ("personas" in spec) == ("judges" in spec):
                raise InputError(
                    "give exactly one of `personas` (a persona committee) or `judges` (a judge committee)",
                    key=key,
                )
            kind, c = self.committees[str(name)]
            if kind == "personas":
                check_committee(
                    c,
                    key,
                    kind,
                    run_personas,
                    "a persona of the run (personas.include, personas.custom, imported judges' personas)",
                )
                if not any(name in ps for ps in self.groups.values()):
                    raise InputError(
                        "no judge x template of the study runs all its personas", key=f"{key}.personas"
                    )
            else:
                check_committee(
                    c, key, kind, judges, "a judge of the study (peras.judges, graded imported judges)"
                )
                if not any(m == name for _, m, _ in self.groups):
                    raise InputError(
                        "no dataset x template x persona that all its judges judge (an imported "
                        "judge's templates and personas must match the others')",
                        key=f"{key}.judges",
                    )

    # -- self-consistency (peras.repeats) ------------------------------------------------------

    @property
    def repeats(self) -> int:
        """How many times each live judge job is asked (``peras.repeats``; 1: once, no repeats job):
        the key of the study's judge section, which the ranking study's live judges (PERAS's)
        follow too."""
        return int(cast("int", self.judges_section.repeats))

    def repeat_cells(self) -> list[dict[str, str]]:
        """Every live judge job (dataset, model, template, persona) with its reading and temperature,
        when ``peras.repeats`` is above 1 (else none): the repeats jobs, in the consistency job's
        input order."""
        if self.repeats < 2:
            return []
        out = []
        for d, m, t in self.cells:
            judge = self.judges_section.judge(m, t)
            for p in self.project.personas:
                out.append(
                    {
                        "dataset": d,
                        "model": m,
                        "template": t,
                        "persona": p,
                        "reading": judge.answer,
                        "temperature": f"{judge.temperature:g}",
                    }
                )
        return out

    def majority_name(self, model: str) -> str:
        """The name of the majority of ``model``'s k repeats as one more judge of the metrics
        tables: ``<model>+majority@<k>`` (``+`` and ``@`` keep it apart from a model's name)."""
        return f"{model}+{MAJORITY}@{self.repeats}"

    @cached_property
    def majority_judges(self) -> dict[str, str]:
        """The majority judges (``peras.repeats`` above 1; else none): name -> the live judge whose
        repeats they vote on (:meth:`majority_name`)."""
        if self.repeats < 2:
            return {}
        return {self.majority_name(m): m for m in self.models()}

    @cached_property
    def metric_groups(self) -> dict[tuple[str, str, str], list[str]]:
        """The groups of the metrics table and Tables 7-8: :attr:`groups`, each repeated live
        judge's followed by its majority judge's (the same dataset x template, the personas its
        repeats ran: the run's). With ``peras.repeats`` 1, :attr:`groups` as they are."""
        majority = {m: name for name, m in self.majority_judges.items()}
        repeated = {(c["dataset"], c["model"], c["template"]) for c in self.repeat_cells()}
        out: dict[tuple[str, str, str], list[str]] = {}
        for (d, m, t), personas in self.groups.items():
            out[(d, m, t)] = personas
            if (d, m, t) in repeated:
                out[(d, majority[m], t)] = list(self.project.personas)
        return out

    def metric_inputs(self, stage: str, dataset: str, model: str, template: str) -> list[str]:
        """The ``stage`` file (judgments, confidence) of every persona of a metric group: a
        judge's own, or for a majority judge its majority tables (``repeats_majority``) and no
        confidence (a majority states none: its RO, RU, HMR are n/a)."""
        personas = self.metric_groups[(dataset, model, template)]
        ids = {"dataset": dataset, "template": template}
        if model not in self.majority_judges:
            return [self.project.path(stage, model=model, persona=p, **ids) for p in personas]
        if stage == "confidence":
            return []
        base = self.majority_judges[model]
        return [self.project.path("repeats_majority", model=base, persona=p, **ids) for p in personas]

    def repeat_files(self, stage: str) -> list[str]:
        """The ``stage`` file (repeats, repeats_majority) of every :meth:`repeat_cells` job."""
        keys = ("dataset", "model", "template", "persona")
        return [self.project.path(stage, **{k: c[k] for k in keys}) for c in self.repeat_cells()]

    def _check_repeats(self) -> None:
        """With repeats above 1: a majority judge's name is no other judge's, and a judge read from
        the logits draws its repeats at its model's temperature, above 0
        (:func:`judgelab.project.repeats.check_draws`)."""
        if self.repeats < 2:
            return
        for m in self.models():
            name = self.majority_name(m)
            taken = set(self.project.config["models"]) | set(self.project.imported) | set(self.committees)
            if name in taken:
                raise InputError(
                    f"{name!r}, the name of the majority of judge {m!r}'s repeats, already names a "
                    "model, an imported judge or a committee",
                    key="peras.repeats",
                )
        check_draws(self.judges_section, self.models(), self.templates[0], "peras.repeats")

    def models(self) -> list[str]:
        """The judges that run in some cell."""
        used = {m for _, m, _ in self.cells}
        return [m for m in self.judges if m in used]

    def text_datasets(self) -> list[str]:
        """The datasets of the live judges' :attr:`cells` (judgment and confidence prompts show the
        passage); an imported judge's labels and confidences come from its file."""
        return list(dict.fromkeys(d for d, _, _ in self.cells))

    @property
    def reference(self) -> str:
        """The persona the others are compared with: ``peras.significance.reference``, or where it
        is null (the default) :data:`DEFAULT_REFERENCE`, tested only for the groups that run it."""
        return self.section["significance"]["reference"] or DEFAULT_REFERENCE

    @property
    def run_personas(self) -> list[str]:
        """Every persona some group runs (live judges' personas, then the imported judges')."""
        return list(dict.fromkeys(p for ps in self.groups.values() for p in ps))

    @property
    def confidence_personas(self) -> list[str]:
        """The confidence-by-grade chart's personas: ``peras.figures.confidence_personas``, or where
        it is null (the default) those of :data:`FIGURE3_PERSONAS` some judge runs. The figure job
        keeps those its group has (none: the group's first two)."""
        chosen = self.section["figures"]["confidence_personas"]
        if chosen is not None:
            return list(chosen)
        return [p for p in FIGURE3_PERSONAS if p in self.run_personas]

    def significance_groups(self) -> list[tuple[str, str, str]]:
        """Groups with the reference persona and at least one other to compare with it."""
        return [g for g, ps in self.groups.items() if self.reference in ps and len(ps) > 1]

    @property
    def confidence_max_tokens(self) -> int:
        return int(self.section["confidence"]["max_tokens"])

    def group(self, dataset: str, model: str, template: str) -> Group:
        """A group of :attr:`metric_groups` (:attr:`groups` and the majority judges') as the value
        its jobs take (a tracked param)."""
        return Group(dataset, model, template, tuple(self.metric_groups[(dataset, model, template)]))

    def significance_settings(self) -> SignificanceSettings:
        """The significance job's settings (a tracked param)."""
        sig = self.section["significance"]
        return SignificanceSettings(
            reference=self.reference,
            n_boot=int(sig["n_boot"]),
            seed=int(sig["seed"]),
            alpha=float(sig["alpha"]),
        )

    def figure_settings(self) -> FigureSettings:
        """The figure job's settings (a tracked param)."""
        return FigureSettings(
            reference=self.reference,
            confidence_personas=tuple(self.confidence_personas),
            confidence_label=int(self.section["figures"]["confidence_label"]),
            support=str(self.section["support"]),
        )

    def calibration_cells(self) -> list[dict[str, str]]:
        """Every judge job of the groups (dataset, model, template, persona), in the order of the
        calibration job's judgment and confidence inputs."""
        return [
            {"dataset": d, "model": m, "template": t, "persona": p}
            for (d, m, t), personas in self.groups.items()
            for p in personas
            if not self.is_committee(m, p)  # a committee has no label distribution nor confidence
        ]

    def calibration_files(self, stage: str) -> list[str]:
        """The ``stage`` file (judgments, confidence) of every :meth:`calibration_cells` job."""
        return [self.project.path(stage, **cell) for cell in self.calibration_cells()]

    def classifier_settings(self) -> ClassifierSettings:
        """The classifier job's settings (a tracked param; the order of ``models`` is the column
        order of Table 5)."""
        clf = self.section["classifier"]
        return ClassifierSettings(
            trials=int(clf["trials"]),
            train_fraction=float(clf["train_fraction"]),
            seed=int(clf["seed"]),
            models=clf.get("models"),
        )

    @property
    def classifier_dataset(self) -> str | None:
        return self.section["classifier"]["dataset"]

    def classifier_groups(self) -> list[tuple[str, str, str]]:
        """The groups of the classifier dataset, judge committees left out (a committee is a
        judge of the metrics tables, not a classifier's feature)."""
        d = self.classifier_dataset
        return [g for g in self.groups if d is not None and g[0] == d and g[1] not in self.judge_committees]

    def classifier_group(self, dataset: str, model: str, template: str) -> Group:
        """The group of a classifier job: its personas without the persona committees (the
        features are the personas' labels and confidences)."""
        personas = [p for p in self.groups[(dataset, model, template)] if p not in self.persona_committees]
        return Group(dataset, model, template, tuple(personas))

    # -- the study's contract -----------------------------------------------------------------

    def check(self) -> None:
        super().check()
        _ = self.template_specs, self.confidence_text  # loaded here: checked before any job
        if not self.groups:
            raise NothingToDo(
                "the study is enabled but judges nothing: no dataset x judge (peras.datasets "
                f"{self.datasets}, peras.judges {self.judges}; null = the top-level `judges`) and "
                "no graded imported judge; set peras.enabled: false to skip it",
                key="peras",
            )
        self._check_committees()
        self._check_repeats()
        clf = self.classifier_dataset
        if clf is not None and clf not in self.datasets:
            raise InputError(
                f"dataset {clf!r} is not among the datasets PERAS judges ({self.datasets})",
                key="peras.classifier.dataset",
            )
        # a persona the user names must run; the defaults (null) apply to the personas that run
        if self.section["significance"]["reference"] is not None:
            self._check_reference()
        shown = self.run_personas
        for i, p in enumerate(self.section["figures"]["confidence_personas"] or []):
            if p not in shown:
                raise InputError(
                    f"persona {p!r} is not run by any judge (the run's personas: {sorted(shown)})",
                    key=f"peras.figures.confidence_personas[{i}]",
                )

    def _check_reference(self) -> None:
        live = list(self.project.personas) if self.judges else []
        ref = self.reference
        if len(live) > 1 and ref not in live:
            raise InputError(
                f"persona {ref!r} is not run (the run's personas: {live}); the "
                "significance stage would compare nothing",
                key="peras.significance.reference",
            )
        imported = {n: j for n, j in self.project.imported.items() if j.graded}
        for name, judge in imported.items():
            if len(judge.personas) > 1 and ref not in judge.personas:
                raise InputError(
                    f"persona {ref!r} is not among the personas of imported judge {name!r} "
                    f"(imported_judges.{name}.personas: {list(judge.personas)})",
                    key="peras.significance.reference",
                )

    def llm_jobs(self):
        jobs = [
            LLMJob(rule, m, (("dataset", d), ("model", m), ("template", t), ("persona", p)), self.name)
            for d, m, t in self.cells
            for p in self.project.personas
            for rule in ("peras_judge", "peras_confidence")
        ]
        # a repeated judge that parses asks samples 1..k-1; one read from the logits asks nothing
        keys = ("dataset", "model", "template", "persona")
        jobs += [
            LLMJob("peras_repeats", c["model"], tuple((k, c[k]) for k in keys), self.name)
            for c in self.repeat_cells()
            if c["reading"] == "parse"
        ]
        return jobs

    def targets(self) -> list[str]:
        path = self.project.path
        targets = [path("metrics"), path("significance")]
        targets += [path("metrics_significance", ext=e) for e in ("tsv", "html")]
        targets += [path("peras_table", table=t, ext=e) for t in TABLES for e in ("tsv", "md", "tex", "html")]
        for kind in FIGURE_KINDS:
            for ext in ("png", "pdf"):
                targets += [
                    path("figure", kind=kind, dataset=d, model=m, template=t, ext=ext)
                    for d, m, t in self.groups
                ]
        targets += [path("peras_calibration"), path("peras_reliability")]
        targets += [path("peras_reliability_figure", ext=e) for e in ("png", "pdf")]
        if self.repeat_cells():
            targets += [path("consistency", ext=e) for e in ("tsv", "md")]
        if self.classifier_groups():
            targets += [path("classifier_table", ext=e) for e in ("tsv", "md", "tex", "html")]
        return targets

    # -- the estimate -------------------------------------------------------------------------

    def requests(self, job, ctx) -> Iterator[tuple[str, Request, bool]]:
        """For ``judgelab estimate``: the requests of one job (:mod:`.estimate`)."""
        return estimate.requests(self, job, ctx)
