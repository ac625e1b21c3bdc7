"""Perturbations ("When LLM Judges Inflate Scores", section 3): meaning-preserving rewrites and
query-dependent insertions.

Config section ``perturbations``; target ``perturbations``; rules ``workflow/rules/perturbations/perturbations.smk``
and ``workflow/rules/perturbations/``; jobs :mod:`judgelab.studies.perturbations.jobs`; science
:mod:`judgelab.studies.perturbations`; prompts ``resources/prompts/perturbations/``.

Per dataset: each judge's sample of its original judgment (``original: peras`` - the PERAS
``judge`` rule's table of the study's ``template`` and ``persona``; ``original: overrating`` -
the overrating study's graded pointwise table, as in the paper; requiring it schedules that job
even when its study is disabled), one rewrite job per rewrite variant over the pooled samples
(rewriter + meaning check), one insertion job per insertion variant (SEM calls the rewriter for
the queries without a reviewed sentence), one re-judge job per variant x judge made exactly like
the original judgment, the transition / distribution tables and the figures; with more than one
dataset, the tables and Figures 1 and 3 pooled over them (as the paper shows them).

Each job's settings are one value per concern (:mod:`.settings`), built here and carried whole as
the rule's params: the re-judging's judge (:meth:`Plan.judge`: the PERAS plan's judge, or the
overrating graded pointwise judge), the rewriter and meaning checker (:meth:`Plan.rewrite_writer`,
:meth:`Plan.check_writer`), the SEM writer (:meth:`Plan.sem_writer`), the sample's draw, an
insertion, a re-judge job's pairs and the figures.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from pathlib import Path

import pandas as pd

from judgelab.errors import InputError, NothingToDo
from judgelab.llm.backends.base import Request
from judgelab.llm.judge import Coverage, JudgeSection
from judgelab.project.plan import LLMJob, StudyPlan
from judgelab.studies.perturbations import estimate
from judgelab.studies.perturbations.attacks import (
    CLEAN,
    check_name,
    defended_template,
    read_injections,
)
from judgelab.studies.perturbations.insertions import load_stopwords, stopwords_param
from judgelab.studies.perturbations.originals import variant_requests
from judgelab.studies.perturbations.settings import (
    Attack,
    AttackFigure,
    AttackMeasure,
    AttackSampling,
    Insertion,
    InsertionFigure,
    OriginalJudge,
    Sampling,
    Selection,
    SemWriter,
    TransitionFigure,
    Writer,
)

#: The template kind each prompt key needs (the rewrite variants: ``rewrite``).
PROMPT_KINDS = {"meaning_check": "meaning_check", "SEM": "sem_sentence", "LEX": "lex_sentence"}

#: The placeholders each prompt must hold (by its key under ``perturbations.prompts``).
PLACEHOLDERS = {
    "PSV": ("{passage}",),
    "ACV": ("{passage}",),
    "SUM": ("{passage}",),
    "EXP": ("{passage}",),
    "meaning_check": ("{original}", "{rewritten}"),
    "SEM": ("{query}",),
    "LEX": ("{terms}",),
}

#: Insertions that call a model (the others are fixed sentences).
LLM_INSERTIONS = ("SEM",)


class Plan(StudyPlan):
    name = "perturbations"
    paths = {
        "perturbation_sample": "{results}/perturbations/{dataset}/samples/{model}.tsv",
        "perturbation_rewrites": "{results}/perturbations/{dataset}/rewrites/{variant}.tsv",
        "perturbation_insertions": "{results}/perturbations/{dataset}/insertions/{variant}.tsv",
        "perturbation_sentences": "{results}/perturbations/{dataset}/insertions/{variant}_sentences.tsv",
        "perturbation_rejudged": "{results}/perturbations/{dataset}/rejudged/{variant}/{model}.tsv",
        "perturbation_transitions": "{results}/perturbations/{dataset}/transitions.tsv",
        "perturbation_shifts": "{results}/perturbations/{dataset}/shifts.tsv",
        "perturbation_kept": "{results}/perturbations/{dataset}/kept.tsv",
        "perturbation_distributions": "{results}/perturbations/{dataset}/distributions.tsv",
        "perturbation_insertion_counts": "{results}/perturbations/{dataset}/insertion_counts.tsv",
        "perturbation_transition_figure": "{results}/perturbations/{dataset}/figures/transitions/{model}.{ext}",
        "perturbation_insertion_figure": "{results}/perturbations/{dataset}/figures/insertions.{ext}",
        # every dataset pooled (a folder of its own: no dataset wildcard matches it)
        "perturbation_pooled_transitions": "{results}/perturbations-pooled/transitions.tsv",
        "perturbation_pooled_distributions": "{results}/perturbations-pooled/distributions.tsv",
        "perturbation_pooled_transition_figure": "{results}/perturbations-pooled/figures/transitions/{model}.{ext}",
        "perturbation_pooled_insertion_figure": "{results}/perturbations-pooled/figures/insertions.{ext}",
        # attacks on passages (STUFF, INJECT): the attacked passages, each template x attack x
        # judge's judgments (attack `none`: clean), the table and its figure
        "perturbation_attack_sample": "{results}/perturbations/{dataset}/attacks/sample.tsv",
        "perturbation_attack_judged": "{results}/perturbations/{dataset}/attacks/{defense}/{attack}/{model}.tsv",
        "perturbation_attacks": "{results}/perturbations/{dataset}/attacks.tsv",
        "perturbation_attacks_md": "{results}/perturbations/{dataset}/attacks.md",
        "perturbation_attack_figure": "{results}/perturbations/{dataset}/figures/attacks.{ext}",
    }

    def __init__(self, project):
        super().__init__(project)
        self._estimates: dict = {}

    # -- the section --------------------------------------------------------------------------

    @property
    def rewrite_variants(self) -> list[str]:
        return list(self.section["variants"])

    @property
    def insertions(self) -> list[str]:
        return list(self.section["insertions"])

    @property
    def variants(self) -> list[str]:
        return self.rewrite_variants + self.insertions

    @staticmethod
    def wildcard(variant: str) -> str:
        """A variant's name in the result paths (``SUM`` -> ``sum``)."""
        return variant.lower()

    @staticmethod
    def variant(wildcard: str) -> str:
        return wildcard.upper()

    @property
    def original(self) -> str:
        """Where the original labels come from, and so how the re-judging is made: ``peras`` or
        ``overrating`` (its graded pointwise run)."""
        return self.section["original"]

    @property
    def template(self) -> str:
        """The PERAS template of the original judgment and of the re-judging (``original:
        peras``)."""
        return self.section["template"]

    @property
    def persona(self) -> str:
        """The persona of the original judgment and the re-judging (``original: peras``; the
        overrating judgment has none): ``perturbations.persona``, or where it is null (the
        default) ``default`` when the run has it, else the run's first persona."""
        chosen = self.section["persona"]
        if chosen is not None:
            return chosen
        run = list(self.project.personas)
        return "default" if "default" in run or not run else run[0]

    @property
    def sampling(self) -> dict[str, int]:
        """The sample job's settings: ``per_label`` passages per query and predicted label, ``seed``."""
        return {k: int(self.section[k]) for k in ("per_label", "seed")}

    def sampling_settings(self) -> Sampling:
        """:attr:`sampling` as the sample job's value (a tracked param)."""
        return Sampling(**self.sampling)

    @property
    def rewrite_max_tokens(self) -> int:
        return int(self.section["rewrite_max_tokens"])

    @property
    def check_max_tokens(self) -> int:
        return int(self.section["check_max_tokens"])

    @property
    def sem_max_tokens(self) -> int:
        return int(self.section["sem_max_tokens"])

    @property
    def sem_max_attempts(self) -> int:
        return int(self.section["sem_max_attempts"])

    @property
    def rewrite_filter(self) -> str:
        return self.section["rewrite_filter"]

    @cached_property
    def stopwords(self) -> frozenset[str]:
        """The stopword list of LEX and SEM (``perturbations.stopwords``)."""
        return load_stopwords(self.section["stopwords"], self.project.resources)

    @property
    def stopwords_param(self) -> str:
        return stopwords_param(self.stopwords)

    @property
    def sem_file(self) -> str | None:
        """The file of reviewed SEM sentences (``perturbations.sem_sentences``), or None."""
        return self.section.get("sem_sentences")

    @property
    def pooled(self) -> bool:
        """Whether the tables and figures are also pooled over the datasets (more than one)."""
        return len(self.datasets) > 1

    @property
    def rewriter(self) -> str:
        return self.section["rewriter"]

    @property
    def checker(self) -> str:
        """The meaning checker (null: the rewriter)."""
        return self.section["checker"] or self.rewriter

    @property
    def rewrite_models(self) -> list[str]:
        """The models a rewrite job calls: the rewriter, then the checker if it differs."""
        return list(dict.fromkeys([self.rewriter, self.checker]))

    def models(self) -> list[str]:
        used = list(self.judges)
        if self.rewrite_variants:
            used += self.rewrite_models
        if any(v in LLM_INSERTIONS for v in self.insertions) and self.rewriter:
            used.append(self.rewriter)
        return list(dict.fromkeys(used))

    @property
    def _prompt_keys(self) -> list[str]:
        keys = list(self.rewrite_variants)
        if keys:
            keys.append("meaning_check")
        return keys + [v for v in self.insertions if v in PLACEHOLDERS]

    def prompt(self, key: str) -> str:
        """A prompt's text (``PSV``..``EXP``, ``meaning_check``, ``SEM``, ``LEX``): a tracked
        param of the jobs using it."""
        return self.prompt_texts[key]

    @cached_property
    def prompt_texts(self) -> dict[str, str]:
        return {
            k: self.project.load_template(
                self.section["prompts"][k], PROMPT_KINDS.get(k, "rewrite"), f"perturbations.prompts.{k}"
            )
            for k in self._prompt_keys
        }

    # -- how the original judgment (and so the re-judging) is made ----------------------------

    @property
    def original_section(self) -> JudgeSection:
        """The section of templates and judges the original judgment was made with (``original``:
        PERAS's or the overrating study's; :data:`judgelab.project.judges.JUDGE_SECTIONS`)."""
        return self.judge_section(self.original)

    @property
    def original_template(self) -> str:
        """The template of the original judgment in its section: the study's ``template`` (PERAS),
        or the overrating study's graded one."""
        return self.template if self.original == "peras" else "graded"

    @property
    def judge_template_text(self) -> str:
        return self.original_section.template(self.original_template).text

    @property
    def judge_labels(self) -> list[str]:
        return list(self.original_section.template(self.original_template).labels)

    @property
    def judge_max_tokens(self) -> int:
        return self.original_section.template(self.original_template).max_tokens

    def judge_answer(self, model: str) -> str:
        """How the label of ``model`` is read: the PERAS ``answer`` mode (``original: peras``), or
        the overrating reading (``parse``: parsed where it is generated)."""
        return self.original_section.answer_of(model)

    @property
    def judge_persona(self) -> str | None:
        """The persona of the original judgment and the re-judging (None for the overrating
        judgment: it has none)."""
        return self.persona if self.original == "peras" else None

    def _persona_text(self, ctx) -> str | None:
        return ctx.persona_text(self.judge_persona) if self.judge_persona else ""

    def coverage(self) -> Coverage:
        """The coverage check of the re-judge jobs (a tracked param)."""
        return self.original_section.coverage(self.original_template)

    def judge(self, model: str) -> OriginalJudge:
        """The judge of the re-judge jobs of ``model``: its original judgment's judge (the rule's
        one tracked param of the judge), from the original's section: ``original: peras`` -
        PERAS's judge of the study's template and persona (its persona "" when it is a generated
        one: the job reads the file); ``overrating`` - the overrating study's graded pointwise
        judge (its template, labels and bound, no persona - so no placement either - the label
        parsed)."""
        judge = self.original_section.judge(model, self.original_template, self.judge_persona)
        return OriginalJudge.of(self.original, judge)

    def judge_requests(self, pairs: pd.DataFrame, model: str, persona_text: str | None) -> list[Request]:
        """The requests judging ``pairs`` as the original judgment does (the estimate; the
        persona's instruction ``persona_text``, that of a generated persona read by the caller)."""
        judge = self.judge(model)
        if self.original == "peras":
            judge = judge.but(persona=persona_text or "")
        return variant_requests(pairs, judge)

    def display_names(self) -> dict[str, str]:
        return self.project.display_names(self.judges)

    # -- attacks on passages (STUFF, INJECT) ----------------------------------------------------

    @property
    def attack_section(self) -> dict:
        return dict(self.section["attacks"])

    @property
    def attack_kinds(self) -> list[str]:
        """The attack kinds run (``perturbations.attacks.run``; [] = none)."""
        return [str(k) for k in self.attack_section["run"]]

    @cached_property
    def injection_texts(self) -> dict[str, str]:
        """The injection list (``attacks.injection_list``) with ``attacks.custom_injections``
        over it, name -> sentence."""
        from judgelab.llm.prompts import template_path

        a = self.attack_section
        ref = str(a["injection_list"])
        path = template_path(ref, self.project.resources)
        if not Path(path).is_file():
            raise InputError(f"no injection list {path}", key=f"{self.name}.attacks.injection_list")
        texts = read_injections(path)
        for name, sentence in a["custom_injections"].items():
            check_name(str(name), f"{self.name}.attacks.custom_injections")
            if not str(sentence).strip():
                raise InputError(
                    f"injection {name!r} is empty", key=f"{self.name}.attacks.custom_injections.{name}"
                )
            texts[str(name)] = str(sentence).strip()
        return texts

    @cached_property
    def attacks(self) -> dict[str, Attack]:
        """The attacks run, by name (``stuff``; ``inject_<name>`` per injection), each at the
        configured positions."""
        a = self.attack_section
        positions = tuple(str(p) for p in a["positions"])
        out: dict[str, Attack] = {}
        if "STUFF" in self.attack_kinds:
            out["stuff"] = Attack(
                name="stuff",
                kind="STUFF",
                positions=positions,
                repeat=int(a["stuff_repeat"]),
                stopwords=tuple(sorted(self.stopwords)),
            )
        if "INJECT" in self.attack_kinds:
            for name in a["injections"]:
                out[f"inject_{name}"] = Attack(
                    name=f"inject_{name}",
                    kind="INJECT",
                    positions=positions,
                    sentence=self.injection_texts.get(str(name), ""),
                )
        return out

    def attack(self, name: str) -> Attack:
        """An attack's settings (a tracked param of its judge jobs); ``none``: the clean judgment."""
        return Attack(name=CLEAN) if name == CLEAN else self.attacks[name]

    @property
    def attack_names(self) -> list[str]:
        """The attack judge jobs' attacks: ``none`` (clean) and every attack (none without one)."""
        return [CLEAN, *self.attacks] if self.attacks else []

    @property
    def defenses(self) -> list[str]:
        """The templates attacks are judged with: ``plain``, and ``defended`` with
        ``attacks.defended``."""
        return ["plain", "defended"] if self.attack_section["defended"] else ["plain"]

    @cached_property
    def defense_text(self) -> str:
        ref = str(self.attack_section["defense"])
        return self.project.load_template(ref, "defense", f"{self.name}.attacks.defense")

    def attack_judge(self, model: str, defense: str) -> OriginalJudge:
        """The judge of the attack jobs: the original judgment's (:meth:`judge`), with the
        ``defended`` template the judge's template inside the defense template."""
        judge = self.judge(model)
        if defense == "defended":
            return judge.but(template=defended_template(self.defense_text, judge.template))
        return judge

    def attack_sampling(self) -> AttackSampling:
        a = self.attack_section
        return AttackSampling(
            grades=tuple(a["grades"]),
            per_label=int(self.section["per_label"] if a["per_label"] is None else a["per_label"]),
            seed=int(self.section["seed"]),
            other_topics=bool(a["other_topics"]),
        )

    def attack_measure(self) -> AttackMeasure:
        a = self.attack_section
        return AttackMeasure(
            relevant=int(a["relevant"]),
            n_boot=int(a["n_boot"]),
            seed=int(a["seed"]),
            alpha=float(a["alpha"]),
        )

    def attack_figure(self, dataset: str) -> AttackFigure:
        return AttackFigure(title=dataset, names=self.display_names())

    def attack_judged(self, dataset: str) -> list[str]:
        """Every attack judgment of ``dataset`` (template x attack, clean included, x judge)."""
        return [
            self.project.path("perturbation_attack_judged", dataset=dataset, defense=d, attack=a, model=m)
            for d in self.defenses
            for a in self.attack_names
            for m in self.judges
        ]

    def _check_attacks(self) -> None:
        key = f"{self.name}.attacks"
        a = self.attack_section  # the kinds, positions, grades and repeat count: the schema's
        if not self.attack_kinds:
            return
        if "INJECT" in self.attack_kinds:
            names = list(a["injections"])
            if not names:
                raise InputError(
                    "INJECT is run but no injection is named (names of the injection list or of "
                    "custom_injections)",
                    key=f"{key}.injections",
                )
            for i, n in enumerate(names):
                if str(n) not in self.injection_texts:
                    raise InputError(
                        f"no injection {n!r} (the list and custom_injections hold "
                        f"{sorted(self.injection_texts)})",
                        key=f"{key}.injections[{i}]",
                    )
        if self.defenses[-1] == "defended":
            _ = self.defense_text

    # -- the jobs' settings ---------------------------------------------------------------------

    def rewrite_writer(self, variant: str) -> Writer:
        """The rewriter of ``variant`` (a name or a path wildcard): its model, the variant's
        prompt and ``rewrite_max_tokens`` (a tracked param: editing one variant's prompt reruns
        that variant's jobs only)."""
        return Writer(
            model=self.rewriter,
            spec=self.project.model_entry(self.rewriter),
            template=self.prompt(self.variant(variant)),
            max_tokens=self.rewrite_max_tokens,
        )

    def check_writer(self) -> Writer:
        """The meaning checker: its model (null: the rewriter), the meaning-check prompt and
        ``check_max_tokens``."""
        return Writer(
            model=self.checker,
            spec=self.project.model_entry(self.checker),
            template=self.prompt("meaning_check"),
            max_tokens=self.check_max_tokens,
        )

    def sem_writer(self) -> SemWriter:
        """The SEM writer: the rewriter (model "" without one: the reviewed sentences only), the
        SEM prompt, ``sem_max_tokens`` and ``sem_max_attempts``."""
        model = self.rewriter or ""
        return SemWriter(
            model=model,
            spec=self.project.model_entry(model) if model else {},
            template=self.prompt("SEM"),
            max_tokens=self.sem_max_tokens,
            max_attempts=self.sem_max_attempts,
        )

    def insertion(self, variant: str) -> Insertion:
        """An insertion variant's settings: the stopword list and, for LEX, its template
        sentence (a tracked param: editing the list reruns exactly the insertion jobs)."""
        v = self.variant(variant)
        return Insertion(
            variant=v,
            stopwords=tuple(sorted(self.stopwords)),
            template=self.prompt("LEX") if v == "LEX" else "",
        )

    def selection(self, variant: str) -> Selection:
        """The pairs the re-judge jobs of ``variant`` judge (the variant and the rewrite filter)."""
        return Selection(variant=self.variant(variant), rewrite_filter=self.rewrite_filter)

    def _title(self, dataset: str | None) -> str:
        return dataset if dataset is not None else " + ".join(self.datasets)

    def transition_figure(self, model: str, dataset: str | None = None) -> TransitionFigure:
        """Figure 1 of judge ``model`` on ``dataset`` (None: every dataset pooled)."""
        return TransitionFigure(
            title=self._title(dataset),
            judge=model,
            display=self.project.display_name(model),
            variants=tuple(self.rewrite_variants),
        )

    def insertion_figure(self, dataset: str | None = None) -> InsertionFigure:
        """Figure 3 on ``dataset`` (None: every dataset pooled)."""
        return InsertionFigure(
            title=self._title(dataset), variants=tuple(self.insertions), names=self.display_names()
        )

    # -- files ----------------------------------------------------------------------------------

    def judgments(self, dataset: str, judge: str) -> str:
        """The original judgment a sample is drawn from: the PERAS judge rule's table, or the
        overrating study's graded pointwise table."""
        if self.original == "overrating":
            return self.project.path("overrating_pointwise", dataset=dataset, model=judge, scale="graded")
        return self.project.path(
            "judgments", dataset=dataset, model=judge, template=self.template, persona=self.persona
        )

    def rewrite_tables(self, dataset: str) -> list[str]:
        return [self.variant_table(dataset, v) for v in self.rewrite_variants]

    def filter_inputs(self, dataset: str, variant: str) -> list[str]:
        """The rewrite tables a re-judge job of ``variant`` also reads: all of them with
        ``rewrite_filter: all_variants`` (the passages kept by every variant), else none."""
        if self.rewrite_filter == "all_variants" and self.variant(variant) in self.rewrite_variants:
            return self.rewrite_tables(dataset)
        return []

    def samples(self, dataset: str) -> list[str]:
        return [self.project.path("perturbation_sample", dataset=dataset, model=m) for m in self.judges]

    def variant_table(self, dataset: str, variant: str) -> str:
        """The rewrites or insertions table of a variant (given as a name or a path wildcard)."""
        v = self.variant(variant)
        kind = "perturbation_rewrites" if v in self.rewrite_variants else "perturbation_insertions"
        return self.project.path(kind, dataset=dataset, variant=self.wildcard(v))

    def rejudged(self, dataset: str, variants: list[str]) -> list[str]:
        return [
            self.project.path("perturbation_rejudged", dataset=dataset, variant=self.wildcard(v), model=m)
            for v in variants
            for m in self.judges
        ]

    # -- the study's contract -----------------------------------------------------------------

    def check(self) -> None:
        super().check()
        s, key = self.section, self.name
        if not self.judges:
            raise NothingToDo(
                "the study is enabled but has no live judge (perturbations.judges; null = the "
                f"top-level `judges`: {self.project.judges}): its judges re-judge the perturbed "
                "passages, which an imported judge cannot; set perturbations.enabled: false to skip it",
                key=key,
            )
        if self.original == "overrating":
            self._check_overrating_original()
        else:
            self._check_peras_original()
        _ = self.stopwords  # loaded here: a missing or malformed list fails before any job
        self._check_attacks()
        if self.sem_file is not None and not Path(self.sem_file).is_file():
            raise InputError(f"file {self.sem_file} does not exist", key=f"{key}.sem_sentences")
        models = self.project.config["models"]
        uses = {
            "rewriter": bool(self.rewrite_variants)
            or (any(v in LLM_INSERTIONS for v in self.insertions) and self.sem_file is None),
            "checker": bool(self.rewrite_variants),
        }
        if uses["rewriter"] and s.get("rewriter") is None:
            raise InputError(
                "the rewrites and SEM sentences need a rewriter (a key of `models`; SEM without one "
                "needs perturbations.sem_sentences)",
                key=f"{key}.rewriter",
            )
        for name, used in uses.items():
            if used and s.get(name) is not None and s[name] not in models:
                raise InputError(
                    f"{s[name]!r} is not a key of `models` (known: {sorted(models)})", key=f"{key}.{name}"
                )
        for k in self._prompt_keys:
            text = self.prompt_texts[k]
            missing = [p for p in PLACEHOLDERS[k] if p not in text]
            if missing:
                raise InputError(
                    f"the prompt {s['prompts'][k]!r} has no placeholder {', '.join(missing)}",
                    key=f"{key}.prompts.{k}",
                )

    def _check_peras_original(self) -> None:
        key = self.name
        peras = self.judge_section("peras")
        if self.template not in peras.names:
            raise InputError(
                f"{self.template!r} is not a PERAS template (keys of peras.templates: {sorted(peras.names)})",
                key=f"{key}.template",
            )
        if self.persona not in self.project.personas:
            raise InputError(
                f"{self.persona!r} is not a persona of the run (personas.include and "
                f"personas.custom: {list(self.project.personas)})",
                key=f"{key}.persona",
            )
        self._check_judges_among(list(peras.judges), "the PERAS judge rule", "peras.judges")

    def _check_overrating_original(self) -> None:
        ovr = self.judge_section("overrating")
        if "graded" not in ovr.names:
            raise InputError(
                "the original labels are the overrating study's graded run (original: overrating), "
                f"but overrating.pointwise.scales is {list(ovr.names)}: add graded",
                key=f"{self.name}.original",
            )
        _ = ovr.template("graded")  # the graded template, checked
        self._check_judges_among(list(ovr.judges), "the overrating pointwise rule", "overrating.judges")

    def _check_judges_among(self, allowed: list[str], rule: str, key: str) -> None:
        for i, m in enumerate(self.judges):
            if m not in allowed:
                where = (
                    f"{self.name}.judges[{i}]"
                    if self.section.get("judges") is not None
                    else f"{self.name}.judges"
                )
                raise InputError(
                    f"judge {m!r}: its original judgments come from {rule}, which runs the judges "
                    f"{allowed} ({key}, null = the top-level `judges`); add it there",
                    key=where,
                )

    def _original_jobs(self) -> set:
        """The (rule, wildcards) of the original judgments the original study runs anyway."""
        study = self.project.plan(self.original)
        return {(j.rule, j.wildcards) for j in study.llm_jobs()} if study.enabled else set()

    def _original_job(self, dataset: str, judge: str) -> LLMJob:
        wc: tuple[tuple[str, str], ...]
        if self.original == "overrating":
            wc = (("dataset", dataset), ("model", judge), ("scale", "graded"))
            return LLMJob("overrating_pointwise", judge, wc, self.name)
        wc = (("dataset", dataset), ("model", judge), ("template", self.template), ("persona", self.persona))
        return LLMJob("peras_judge", judge, wc, self.name)

    def llm_jobs(self):
        jobs = []
        covered = self._original_jobs()
        for d in self.datasets:
            # the original judgments (the samples of the rewrites and insertions; the attacks
            # need none), unless their study runs them anyway
            for m in self.judges if self.variants else []:
                job = self._original_job(d, m)
                if (job.rule, job.wildcards) not in covered:
                    jobs.append(job)
            for v in self.rewrite_variants:  # one job; a separate checker is a second model of it
                for model in self.rewrite_models:
                    jobs.append(
                        LLMJob(
                            "perturbation_rewrite",
                            model,
                            (("dataset", d), ("variant", self.wildcard(v))),
                            self.name,
                        )
                    )
            if "SEM" in self.insertions and self.rewriter:
                jobs.append(LLMJob("perturbation_sem", self.rewriter, (("dataset", d),), self.name))
            for defense in self.defenses:
                for a in self.attack_names:
                    for m in self.judges:
                        wc = (("dataset", d), ("defense", defense), ("attack", a), ("model", m))
                        jobs.append(LLMJob("perturbation_attack_judge", m, wc, self.name))
            for v in self.variants:
                for m in self.judges:
                    jobs.append(
                        LLMJob(
                            "perturbation_rejudge",
                            m,
                            (("dataset", d), ("variant", self.wildcard(v)), ("model", m)),
                            self.name,
                        )
                    )
        return jobs

    def targets(self) -> list[str]:
        path = self.project.path
        out = []
        for d in self.datasets:
            if self.rewrite_variants:
                out += [
                    path(k, dataset=d)
                    for k in ("perturbation_transitions", "perturbation_shifts", "perturbation_kept")
                ]
                out += [
                    path("perturbation_transition_figure", dataset=d, model=m, ext=e)
                    for m in self.judges
                    for e in ("png", "pdf")
                ]
            if self.insertions:
                out += [
                    path(k, dataset=d)
                    for k in ("perturbation_distributions", "perturbation_insertion_counts")
                ]
                out += [path("perturbation_insertion_figure", dataset=d, ext=e) for e in ("png", "pdf")]
            if self.attacks:
                out += [path("perturbation_attacks", dataset=d), path("perturbation_attacks_md", dataset=d)]
                out += [path("perturbation_attack_figure", dataset=d, ext=e) for e in ("png", "pdf")]
        if self.pooled and self.rewrite_variants:
            out.append(path("perturbation_pooled_transitions"))
            out += [
                path("perturbation_pooled_transition_figure", model=m, ext=e)
                for m in self.judges
                for e in ("png", "pdf")
            ]
        if self.pooled and self.insertions:
            out.append(path("perturbation_pooled_distributions"))
            out += [path("perturbation_pooled_insertion_figure", ext=e) for e in ("png", "pdf")]
        return out

    # -- the estimate -------------------------------------------------------------------------

    def requests(self, job, ctx) -> Iterator[tuple[str, Request, bool]]:
        """For ``judgelab estimate``: the requests of one job (:mod:`.estimate`)."""
        return estimate.requests(self, job, ctx)
