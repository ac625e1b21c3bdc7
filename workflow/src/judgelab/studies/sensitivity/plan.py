"""Prompt sensitivity: the config section ``sensitivity`` resolved; see the package docstring.

Config section ``sensitivity``; target ``sensitivity``; rules ``workflow/rules/sensitivity/``; jobs
:mod:`.jobs`; science :mod:`.science`; the published files :mod:`.published` (their manifest
``resources/sensitivity/published.tsv``); paths :mod:`.paths`.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from judgelab.analysis.scores import parse_measures
from judgelab.cache.filehash import sha256_of_file
from judgelab.data.readers import run_name
from judgelab.data.sources import JUDGED_QUERIES
from judgelab.errors import InputError, NothingToDo
from judgelab.llm.backends.base import Request
from judgelab.llm.judge import Judge, JudgeSection, JudgeTemplate
from judgelab.llm.judging import judgment_requests
from judgelab.llm.pairwise import pairwise_jobs
from judgelab.llm.prompts import register_kind
from judgelab.project.plan import LLMJob, StudyPlan
from judgelab.studies.sensitivity.pairwise import (
    PLACEHOLDERS,
    formed_pairs,
    listed_pairs,
    pairwise_labels,
    pairwise_requests,
)
from judgelab.studies.sensitivity.paths import FIGURES, PATHS, TABLES
from judgelab.studies.sensitivity.published import (
    PAIR_LIST_LINES,
    SCALES,
    PublishedFile,
    read_manifest,
    read_prompts,
)
from judgelab.studies.sensitivity.settings import Bootstrap, Downloads, PairSampling, Rankings, Selection

#: the manifest of the published files, under the workflow's ``resources/``
MANIFEST = "sensitivity/published.tsv"
#: the types a live judge judges with a prompt
LIVE_TYPES = ("binary", "graded", "pairwise")
#: the placeholders a prompt's text of each type needs
NEEDS: dict[str, tuple[str, ...]] = {
    "binary": ("query", "document"),
    "graded": ("query", "document"),
    "pairwise": PLACEHOLDERS,
}

#: The template kind of a pairwise prompt of ``sensitivity.prompts``: the query and two passages
#: (``{documentA}`` shown first), answered with one of two option names (default ``A``, ``B``).
PAIRWISE_KIND = "sensitivity_pairwise"
register_kind(PAIRWISE_KIND, PLACEHOLDERS, labels=["A", "B"])


@dataclass(frozen=True)
class LivePrompt:
    """A live prompt: its author group, per type (template text, system text, how it is named),
    and its pairwise text's two option names (the first naming the first passage)."""

    group: str
    texts: dict[str, tuple[str, str, str]]
    pair_labels: tuple[str, ...] = field(default=("A", "B"))


def literal_template(text: str, names: tuple[str, ...] = ("query", "document")) -> str:
    """A published prompt's text as a template whose only placeholders are ``names`` (``{query}``
    and ``{document}``; pairwise ``{query}``, ``{documentA}``, ``{documentB}``): every other brace
    escaped (``{Document}``, literal JSON braces stay text), so :func:`judgelab.llm.prompts.fill`
    replaces those literally and nothing else."""
    escaped = text.replace("{", "{{").replace("}", "}}")
    for name in names:
        escaped = escaped.replace("{{" + name + "}}", "{" + name + "}")
    return escaped


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

    @cached_property
    def live_prompts(self) -> dict[str, LivePrompt]:
        """Every live prompt by id: ``sensitivity.prompts`` (the project's templates, checked) and
        ``sensitivity.published_prompts`` (the authors' texts; a type whose text lacks a
        placeholder left out, with a notice)."""
        out: dict[str, LivePrompt] = {}
        for pid, entry in self.section["prompts"].items():
            texts, labels = {}, ("A", "B")
            for kind in LIVE_TYPES:
                if entry.get(kind):
                    t = self._checked_template(str(pid), kind, entry[kind])
                    texts[kind] = (t.text, "", entry[kind])
                    if kind == "pairwise":
                        labels = tuple(t.labels or ())
            if not texts:
                raise InputError(
                    "names no template (binary, graded, pairwise)", key=f"{self.name}.prompts.{pid}"
                )
            out[str(pid)] = LivePrompt(str(entry["group"]), texts, labels)
        for pid, prompt in self._published_prompts().items():
            if pid in out:
                raise InputError(
                    f"prompt id {pid!r} is also a key of {self.name}.prompts",
                    key=f"{self.name}.published_prompts.ids",
                )
            out[pid] = prompt
        return out

    def _checked_template(self, pid: str, kind: str, ref: str):
        key = f"{self.name}.prompts.{pid}.{kind}"
        if kind == "pairwise":
            t = self.project.template(ref, PAIRWISE_KIND, key)
            if len(t.labels or ()) != 2 or len(set(t.labels or ())) != 2:
                raise InputError(
                    f"{t.path} declares labels {list(t.labels or ())}: a pairwise prompt answers with two "
                    "option names (the first naming the first passage)",
                    key=key,
                )
            return t
        t = self.project.template(ref, "judgment", key)
        labels = tuple(t.labels or ())
        wanted = tuple(str(v) for v in SCALES[kind])
        if labels != wanted:
            raise InputError(
                f"{t.path} declares labels {list(labels)}: a {kind} prompt answers with {list(wanted)}",
                key=key,
            )
        return t

    def _published_prompts(self) -> dict[str, LivePrompt]:
        """The authors' prompts of ``published_prompts.file`` (its SHA-256 the manifest's)."""
        spec = self.section["published_prompts"]
        if not spec["file"]:
            return {}
        key = f"{self.name}.published_prompts.file"
        path = self.project.local(spec["file"])
        if not path.is_file():
            raise InputError(
                f"no file {path} (a copy of the authors' prompts.json; fetch it with `snakemake "
                "results/sensitivity/published/prompts.json --configfile config/published-sensitivity.yaml`)",
                key=key,
            )
        published = next(f for f in self.manifest if f.kind == "prompts")
        if sha256_of_file(path) != published.sha256:
            raise InputError(
                f"{path} is not the published prompts.json (its SHA-256 is not {published.sha256})", key=key
            )
        data = json.loads(path.read_text(encoding="utf-8"))
        ids = [str(i) for i in spec["ids"]] if spec["ids"] is not None else list(data)
        groups = read_prompts(path)
        out = {}
        for i, pid in enumerate(ids):
            if pid not in data:
                raise InputError(
                    f"no prompt {pid!r} in {path} (ids: {list(data)})",
                    key=f"{self.name}.published_prompts.ids[{i}]",
                )
            texts, labels = {}, ("A", "B")
            for kind in LIVE_TYPES:
                if kind not in spec["types"]:
                    continue
                if kind == "binary" and groups[pid] == "umbrela":
                    # UMBRELA is a graded prompt: the file's binary entry for it asks for a 0-3 score
                    self.project.note(
                        f"sensitivity: published prompt {pid} is UMBRELA's, a graded prompt (its binary "
                        "entry asks for a 0-3 score): left out for binary"
                    )
                    continue
                entry = data[pid].get(kind) or {}
                user, system = str(entry.get("user") or ""), str(entry.get("system") or "")
                missing = ["{" + p + "}" for p in NEEDS[kind] if "{" + p + "}" not in user]
                if missing:
                    self.project.note(
                        f"sensitivity: published prompt {pid}'s {kind} text has no {' or '.join(missing)}: "
                        f"left out for {kind}"
                    )
                    continue
                texts[kind] = (literal_template(user, NEEDS[kind]), system, f"prompts.json {pid} {kind}")
                if kind == "pairwise":
                    labels = pairwise_labels(user, system)
            if texts:
                out[pid] = LivePrompt(groups[pid], texts, labels)
        return out

    @property
    def prompts(self) -> dict[str, LivePrompt]:
        return self.live_prompts

    def prompt_types(self, prompt: str) -> list[str]:
        return [t for t in LIVE_TYPES if t in self.live_prompts[prompt].texts]

    @property
    def live_cells(self) -> list[tuple[str, str, str, str]]:
        """(dataset, model, prompt, type) of every live judge job."""
        return [
            (d, m, p, t)
            for d in self.datasets
            for m in self.judges
            for p in self.live_prompts
            for t in self.prompt_types(p)
        ]

    def pairwise_datasets(self) -> list[str]:
        """The datasets a live judge judges pairwise (a pairs job each)."""
        return sorted({d for d, _, _, t in self.live_cells if t == "pairwise"})

    def pair_list_of(self, dataset: str) -> PublishedFile | None:
        """The authors' pair list a live dataset's pairs come from: that of the published dataset
        ``sensitivity.published.datasets`` maps to it; None: the pairs are formed from its grades."""
        for published, name in self.published_datasets.items():
            if name == dataset:
                return next(f for f in self.manifest if f.kind == "pairs" and f.dataset == published)
        return None

    def pair_list_input(self, dataset: str) -> list[str]:
        """The pairs job's pair list (a list of one; none when the pairs are formed)."""
        f = self.pair_list_of(dataset)
        return [] if f is None else [self.file_path(f)]

    def pair_sampling(self) -> PairSampling:
        p = self.section["pairwise"]
        return PairSampling(int(p["per_query"]), int(p["seed"]))

    def text_datasets(self) -> list[str]:
        """The live judges' datasets (the published judgments show no passage to a model)."""
        return sorted({d for d, _, _, _ in self.live_cells})

    def _template(self, name: str) -> JudgeTemplate:
        """``<prompt>/<type>``'s template: its text, the type's labels, the bound."""
        prompt, kind = name.rsplit("/", 1)
        live = self.live_prompts[prompt]
        text, _, shown = live.texts[kind]
        labels = live.pair_labels if kind == "pairwise" else tuple(str(v) for v in SCALES[kind])
        return JudgeTemplate(text, labels, int(self.section["max_tokens"]), shown, f"{self.name}.max_tokens")

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
        """The judge of ``model``'s jobs with ``prompt``'s ``kind`` template: no persona; a
        published prompt's system text as the system message."""
        judge = self.judges_section.judge(model, f"{prompt}/{kind}")
        system = self.live_prompts[prompt].texts[kind][1]
        return judge.but(persona=system, placement="system") if system.strip() else judge

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
        """``prompts.json`` (where a published judgment file is read) and the pair lists of the
        datasets judged pairwise: by a published file, or by a live judge on the dataset the
        published one maps to."""
        pairwise = {f.dataset for f in self.judgments if f.type == "pairwise"}
        pairwise |= {f.dataset for d in self.pairwise_datasets() if (f := self.pair_list_of(d)) is not None}
        return [
            f
            for f in self.manifest
            if (f.kind == "prompts" and self.judgments) or (f.kind == "pairs" and f.dataset in pairwise)
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
            groups=tuple((p, v.group) for p, v in self.live_prompts.items()),
        )

    def bootstrap(self) -> Bootstrap:
        b = self.section["bootstrap"]
        return Bootstrap(int(b["resamples"]), int(b["seed"]), float(b["level"]))

    # -- beyond the paper: each prompt's labels as qrels for the runs ------------------------------

    @property
    def ranking_datasets(self) -> list[str]:
        """The datasets of ``sensitivity.rankings.runs`` (checked by :meth:`check`: each one the
        study labels pairs of)."""
        return [str(d) for d in self.section["rankings"]["runs"]]

    @cached_property
    def ranking_runs(self) -> dict[str, dict[str, str]]:
        """Dataset -> run name -> run file (``sensitivity.rankings.runs``: globs expanded in sorted
        order, relative to the run folder); a pattern matching nothing or two files of one run name
        are errors naming the key. Asked when the rankings job is scheduled (its input function),
        as the ranking study asks for its run files: a run file need not exist when the config is
        loaded."""
        key = f"{self.name}.rankings.runs"
        out: dict[str, dict[str, str]] = {}
        for dataset, patterns in self.section["rankings"]["runs"].items():
            files: dict[str, str] = {}
            for i, pattern in enumerate(patterns):
                matched = sorted(glob.glob(str(pattern), root_dir=self.project.workdir))
                if not matched:
                    raise InputError(f"{pattern!r} matches no file", key=f"{key}.{dataset}[{i}]")
                for f in matched:
                    name = run_name(f)
                    if name in files or any(c.isspace() for c in name):
                        raise InputError(
                            f"{f}: the run name {name!r} is taken by {files.get(name)} or has white space",
                            key=f"{key}.{dataset}[{i}]",
                        )
                    files[name] = f
            out[str(dataset)] = files
        return out

    def _check_rankings(self) -> None:
        """Each dataset of ``rankings.runs`` one the study labels pairs of; the measures readable."""
        key = f"{self.name}.rankings.runs"
        labelled = {self.published_datasets[f.dataset] for f in self.judgments if f.type != "pairwise"}
        labelled |= {d for d, _, _, t in self.live_cells if t != "pairwise"}
        for dataset in self.ranking_datasets:
            if dataset not in labelled:
                raise InputError(
                    f"the study labels no pair of {dataset!r} (datasets with binary or graded labels: "
                    f"{sorted(labelled)})",
                    key=f"{key}.{dataset}",
                )
        parse_measures(self.ranking_measures, f"{self.name}.rankings.measures")

    @property
    def ranking_measures(self) -> list[str]:
        """``sensitivity.rankings.measures``, or the ranking study's ``ranking.measures``."""
        own = self.section["rankings"]["measures"]
        return [str(m) for m in (own if own is not None else self.project.config["ranking"]["measures"])]

    def rankings(self) -> Rankings:
        """The rankings job's selection: the published binary and graded files and the live tables
        of the datasets with runs."""
        runs = self.ranking_runs
        published = {p: d for p, d in self.published_datasets.items() if d in runs}
        return Rankings(
            judgments=tuple(
                (f.model, f.type, f.dataset, f.prompt)
                for f in self.judgments
                if f.type != "pairwise" and f.dataset in published
            ),
            tables=tuple(sorted(runs)),
            published=tuple(sorted(published.items())),
            # binary and graded only: a pairwise judge's preferences are no qrels
            live=tuple(c for c in self.live_cells if c[0] in runs and c[3] != "pairwise"),
            groups=tuple((p, v.group) for p, v in self.live_prompts.items()),
            runs=tuple((d, n) for d in sorted(runs) for n in runs[d]),
            measures=tuple(self.ranking_measures),
        )

    def ranking_files(self) -> dict[str, list[str]]:
        """The rankings job's inputs, in the order of :meth:`rankings`."""
        r = self.rankings()
        chosen = set(r.judgments)
        files = [f for f in self.judgments if (f.model, f.type, f.dataset, f.prompt) in chosen]
        return {
            "judgments": [self.file_path(f) for f in files],
            "prompts": self.prompts_file() if files else [],
            "tables": [self.project.path("dataset", dataset=d) for d in r.tables],
            "live": [self.judgments_path(c) for c in r.live],
            "runs": [self.ranking_runs[d][n] for d, n in r.runs],
        }

    def check(self) -> None:
        super().check()
        self.live_prompts  # noqa: B018 - every live prompt read and checked
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
        self._check_rankings()

    def llm_jobs(self) -> list[LLMJob]:
        """A judge job per live cell: ``sensitivity_judge`` (binary, graded) or
        ``sensitivity_pairwise`` (every pair in both orders)."""
        return [
            LLMJob(
                f"{self.name}_pairwise" if t == "pairwise" else f"{self.name}_judge",
                m,
                (("dataset", d), ("model", m), ("prompt", p), ("type", t)),
                self.name,
            )
            for d, m, p, t in self.live_cells
        ]

    def targets(self) -> list[str]:
        path = self.project.path
        out = [path("sensitivity_agreement", ext=e) for e in TABLES]
        out += [path(k, ext=e) for k in ("sensitivity_spread", "sensitivity_groups") for e in TABLES]
        if self.ranking_datasets:
            out += [
                path(k, ext=e)
                for k in ("sensitivity_rankings", "sensitivity_rankings_spread")
                for e in TABLES
            ]
        return out + [path("sensitivity_figure", ext=e) for e in FIGURES]

    def requests(self, job, ctx) -> Iterator[tuple[str, Request, bool]]:
        """For ``judgelab estimate``: one request per pair of a live binary or graded job, and
        per pair and order of a pairwise one, built as the jobs build them (:meth:`estimate_pairs`)."""
        d = job.wc["dataset"]
        src = ctx.pairs(d)
        judge = self.judge(job.model, job.wc["prompt"], job.wc["type"])
        if job.wc["type"] != "pairwise":
            for req in judgment_requests(src.pairs, judge):
                yield "judge", req, src.exact and ctx.cached(job.model, req) is not None
            return
        pairs = self.estimate_pairs(d, src, ctx)
        if pairs is not None:
            for req in pairwise_requests(pairwise_jobs(src.pairs, pairs), judge):
                yield "pairwise", req, ctx.cached(job.model, req) is not None
            return
        # before the dataset's texts or its pair list are here: a stand-in of the known size
        f = self.pair_list_of(d)
        n = (
            PAIR_LIST_LINES[f.dataset]
            if f is not None
            else JUDGED_QUERIES.get(d, src.pairs["qid"].nunique()) * self.pair_sampling().per_query
        )
        first = src.pairs.iloc[0]
        stand_in = {"query": first["query"], "text_1": first["passage"], "text_2": first["passage"]}
        for req in pairwise_requests([stand_in] * (2 * n), judge):
            yield "pairwise", req, False

    def estimate_pairs(self, dataset: str, src, ctx):
        """The pairs a pairwise job of ``dataset`` judges, as its pairs job makes them, for the
        estimate: from the pair list where it is local (the download's output or the mirror's
        copy) and the texts are known; None (a stand-in, an upper bound, flagged not exact) when
        either is not."""
        f = self.pair_list_of(dataset)
        if not src.exact:
            return None
        if f is None:
            s = self.pair_sampling()
            return formed_pairs(src.pairs, s.per_query, s.seed)
        mirror = self.published["mirror"]
        for where in (
            Path(ctx.directory) / self.file_path(f),
            *([self.project.local(mirror) / f.file] if mirror else []),
        ):
            if where.is_file():
                return listed_pairs(str(where), src.pairs)
        ctx.approximate(
            dataset,
            f"{dataset}: the pair list {f.file} is not here yet: {PAIR_LIST_LINES[f.dataset]:,} pairs "
            "x 2 orders stand in per pairwise job",
        )
        return None
