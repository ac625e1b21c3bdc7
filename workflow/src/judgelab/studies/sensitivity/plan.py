"""Prompt sensitivity: the config section ``sensitivity`` resolved; see the package docstring.

Config section ``sensitivity``; target ``sensitivity``; rules ``workflow/rules/sensitivity/``; jobs
:mod:`.jobs`; science :mod:`.science`; the published files :mod:`.published` (their manifest
``resources/sensitivity/published.tsv``); paths :mod:`.paths`.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from judgelab.errors import InputError, NothingToDo
from judgelab.llm.backends.base import Request
from judgelab.llm.judge import Judge, JudgeSection, JudgeTemplate
from judgelab.llm.judging import judgment_requests
from judgelab.project.plan import LLMJob, StudyPlan
from judgelab.studies.sensitivity.paths import FIGURES, PATHS, TABLES
from judgelab.studies.sensitivity.published import SCALES, PublishedFile, read_manifest
from judgelab.studies.sensitivity.settings import Bootstrap, Downloads, Selection

#: the manifest of the published files, under the workflow's ``resources/``
MANIFEST = "sensitivity/published.tsv"
#: the types a live judge judges with a prompt (pairwise live judging is not built)
LIVE_TYPES = ("binary", "graded")


class Plan(StudyPlan):
    name = "sensitivity"
    paths = PATHS

    @property
    def published(self) -> dict:
        return self.section["published"]

    @cached_property
    def manifest(self) -> list[PublishedFile]:
        return read_manifest(self.project.resources / MANIFEST)

    @property
    def published_datasets(self) -> dict[str, str]:
        """Published dataset (``dl20``, ``dl21``) -> the key of ``datasets`` holding its qrels."""
        return dict(self.published["datasets"])

    # -- live judges: every pair of the study's datasets judged with each prompt ----------------

    @property
    def prompts(self) -> dict[str, dict]:
        """The live prompt set (``sensitivity.prompts``): id -> its templates by type and group."""
        return dict(self.section["prompts"])

    def prompt_types(self, prompt: str) -> list[str]:
        return [t for t in LIVE_TYPES if self.prompts[prompt].get(t)]

    @property
    def live_cells(self) -> list[tuple[str, str, str, str]]:
        """(dataset, model, prompt, type) of every live judge job."""
        return [
            (d, m, p, t)
            for d in self.datasets
            for m in self.judges
            for p in self.prompts
            for t in self.prompt_types(p)
        ]

    def text_datasets(self) -> list[str]:
        """The live judges' datasets (the published judgments show no passage to a model)."""
        return sorted({d for d, _, _, _ in self.live_cells})

    def _template(self, name: str) -> JudgeTemplate:
        """``<prompt>/<type>``'s template, checked: kind ``judgment`` and the type's labels."""
        prompt, kind = name.rsplit("/", 1)
        key = f"{self.name}.prompts.{prompt}.{kind}"
        ref = self.prompts[prompt][kind]
        t = self.project.template(ref, "judgment", key)
        labels = tuple(t.labels or ())
        wanted = tuple(str(v) for v in SCALES[kind])
        if labels != wanted:
            raise InputError(
                f"{t.path} declares labels {list(labels)}: a {kind} prompt answers with {list(wanted)}",
                key=key,
            )
        return JudgeTemplate(t.text, labels, int(self.section["max_tokens"]), ref, f"{self.name}.max_tokens")

    @cached_property
    def judges_section(self) -> JudgeSection:
        """The study's section of templates (:class:`judgelab.llm.judge.JudgeSection`, the one judge
        factory), a template per ``<prompt>/<type>``; the label read as the backend can (``auto``)."""
        return JudgeSection(
            models=self.project.model_entry,
            template=self._template,
            min_coverage=float(self.project.config["min_coverage"]),
            answer="auto",
        )

    def judge(self, model: str, prompt: str, kind: str) -> Judge:
        """The judge of ``model``'s jobs with ``prompt``'s ``kind`` template (no persona)."""
        return self.judges_section.judge(model, f"{prompt}/{kind}")

    def judgments_path(self, cell: tuple[str, str, str, str]) -> str:
        d, m, p, t = cell
        return self.project.path("sensitivity_judgments", dataset=d, model=m, prompt=p, type=t)

    # -- the published judgments ------------------------------------------------------------------

    @cached_property
    def judgments(self) -> list[PublishedFile]:
        """The judgment files of the selected models, types, datasets and prompts, in manifest order."""
        p = self.published
        prompts = None if p["prompts"] is None else {str(x) for x in p["prompts"]}
        return [
            f
            for f in self.manifest
            if f.kind == "judgments"
            and f.model in p["models"]
            and f.type in p["types"]
            and f.dataset in self.published_datasets
            and (prompts is None or f.prompt in prompts)
        ]

    @cached_property
    def support(self) -> list[PublishedFile]:
        """``prompts.json`` and the pair lists of the datasets judged pairwise (nothing without a
        published judgment file)."""
        if not self.judgments:
            return []
        pairwise = {f.dataset for f in self.judgments if f.type == "pairwise"}
        return [
            f for f in self.manifest if f.kind == "prompts" or (f.kind == "pairs" and f.dataset in pairwise)
        ]

    def file_path(self, f: PublishedFile) -> str:
        return self.project.path("sensitivity_published", file=f.file)

    def downloads(self) -> Downloads:
        return Downloads(tuple(f.download() for f in self.support + self.judgments))

    def downloaded(self) -> list[str]:
        """The download job's outputs, in the order of :meth:`downloads`."""
        return [self.file_path(f) for f in self.support + self.judgments]

    def prompts_file(self) -> list[str]:
        """``prompts.json`` where a published judgment file is read (none otherwise)."""
        return [self.file_path(f) for f in self.support if f.kind == "prompts"]

    def pair_lists(self) -> list[PublishedFile]:
        return [f for f in self.support if f.kind == "pairs"]

    def tables(self) -> list[str]:
        """The datasets (keys of ``datasets``) whose tables the agreement job reads: those holding
        the qrels of a published binary or graded file, and the live judges'."""
        published = {self.published_datasets[f.dataset] for f in self.judgments if f.type != "pairwise"}
        return sorted(published | {d for d, _, _, _ in self.live_cells})

    def selection(self) -> Selection:
        return Selection(
            judgments=tuple((f.model, f.type, f.dataset, f.prompt) for f in self.judgments),
            pairs=tuple(f.dataset for f in self.pair_lists()),
            tables=tuple(self.tables()),
            published=tuple(sorted(self.published_datasets.items())),
            live=tuple(self.live_cells),
            groups=tuple((p, str(v["group"])) for p, v in self.prompts.items()),
        )

    def bootstrap(self) -> Bootstrap:
        b = self.section["bootstrap"]
        return Bootstrap(int(b["resamples"]), int(b["seed"]), float(b["level"]))

    def check(self) -> None:
        super().check()
        for p in self.prompts:
            if not self.prompt_types(p):
                raise InputError("names no template (binary, graded)", key=f"{self.name}.prompts.{p}")
            for t in self.prompt_types(p):
                self._template(f"{p}/{t}")
        key = f"{self.name}.published"
        known = self.project.config["datasets"]
        for published, name in self.published_datasets.items():
            if name not in known:
                raise InputError(
                    f"{name!r} is not a key of `datasets` (known: {sorted(known)})",
                    key=f"{key}.datasets.{published}",
                )
        ids = {f.prompt for f in self.manifest if f.kind == "judgments"}
        for i, pid in enumerate(self.published["prompts"] or []):
            if str(pid) not in ids:
                raise InputError(
                    f"no published judgments with prompt {pid!r} (prompts with files: "
                    f"{sorted(ids, key=int)})",
                    key=f"{key}.prompts[{i}]",
                )
        if not self.judgments and not self.live_cells:
            raise NothingToDo(
                f"no live judge job ({self.name}.datasets {self.datasets}, {self.name}.judges "
                f"{self.judges}) and no published judgment file of models {self.published['models']}, "
                f"types {self.published['types']}, datasets {sorted(self.published_datasets)} "
                f"({key}); set {self.name}.enabled: false to skip the study",
                key=self.name,
            )

    def llm_jobs(self) -> list[LLMJob]:
        return [
            LLMJob(
                f"{self.name}_judge", m, (("dataset", d), ("model", m), ("prompt", p), ("type", t)), self.name
            )
            for d, m, p, t in self.live_cells
        ]

    def targets(self) -> list[str]:
        path = self.project.path
        out = [path("sensitivity_agreement", ext=e) for e in TABLES]
        out += [path(k, ext=e) for k in ("sensitivity_spread", "sensitivity_groups") for e in TABLES]
        return out + [path("sensitivity_figure", ext=e) for e in FIGURES]

    def requests(self, job, ctx) -> Iterator[tuple[str, Request, bool]]:
        """For ``judgelab estimate``: one request per pair of a live judge job, built as the job
        builds them."""
        src = ctx.pairs(job.wc["dataset"])
        for req in judgment_requests(src.pairs, self.judge(job.model, job.wc["prompt"], job.wc["type"])):
            yield "judge", req, src.exact and ctx.cached(job.model, req) is not None
