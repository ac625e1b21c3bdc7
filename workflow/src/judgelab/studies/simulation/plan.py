"""Evaluator simulation (PersonaJudge): predicting one evaluator's three-way preference
judgments from that evaluator's own past judgments through a two-round cascade.

Config section ``simulation``; target ``simulation``; rules ``workflow/rules/simulation/simulation.smk`` and
``workflow/rules/simulation/``; jobs :mod:`judgelab.studies.simulation.jobs`; library
:mod:`judgelab.studies.simulation`; prompt ``resources/prompts/simulation/personajudge.yaml``.

The study's data are *evaluator sets* (``simulation.datasets``: per-evaluator preference
judgments, not the relevance datasets of the top-level ``datasets``); each is the ``dataset``
wildcard of its paths. A *cell* is evaluator set x model x demonstration type x shot count, one
prediction job each; the Base Judge is the cell of type ``base`` with 0 shots (one per model).
The demonstration types an evaluator set cannot support (J+IT needs telemetry on every record,
J+RR reasoning) are left out of the design with the reason: the ``pandalm`` format carries
judgments only (known before any job runs); a ``jsonl`` file is read when the workflow starts, or,
when the workflow downloads it and a configured type needs telemetry or reasoning, after its
download, a Snakemake checkpoint (:meth:`Plan.checkpoints`): the cells are planned from the
downloaded file exactly as from the same file given as ``source: files``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from functools import cached_property

from judgelab.errors import InputError, NothingToDo
from judgelab.llm.backends.base import Request
from judgelab.llm.judge import Coverage
from judgelab.project.plan import LLMJob, StudyPlan
from judgelab.studies.simulation import estimate
from judgelab.studies.simulation.data import DEMO_TYPES, PANDALM_URL, load_records, plan_types, select_task
from judgelab.studies.simulation.prompt import BASE, SimulationPrompt
from judgelab.studies.simulation.settings import (
    BaselineSettings,
    CascadeJudge,
    CascadeSettings,
    Design,
    MetricSettings,
    Selection,
    StatsSettings,
    TableSettings,
)

log = logging.getLogger("judgelab")

#: Where a ``sample`` evaluator set's file lies under resources/sample/<name>/, by format.
SAMPLE_FILES = {"pandalm": "testset-v1.json", "jsonl": "records.jsonl"}
#: Extension of a downloaded file, by format.
RAW_EXT = {"pandalm": "json", "jsonl": "jsonl"}

#: files written by :func:`metrics_job` into its output folder
METRIC_FILES = (
    "predictions.tsv",
    "accuracy.tsv",
    "accuracy_eligible.tsv",
    "deviation.tsv",
    "deviation_pooled.tsv",
    "confusion.tsv",
    "prf.tsv",
    "distribution.tsv",
    "control.tsv",
    "control_items.tsv",
    "random_draws.tsv",
    "traits.tsv",
    "correlations.tsv",
    "design.tsv",
)
#: files written by :func:`stats_job`
STATS_FILES = (
    "factors.tsv",
    "pairwise.tsv",
    "versus_base.tsv",
    "improvements.tsv",
    "all_pairs.tsv",
    "chance.tsv",
    "alignment.tsv",
    "control.tsv",
)
#: tables written by :func:`tables_job` (each as .tsv and .md), in the report's order (the keys
#: of :data:`.report.CAPTIONS`; named here, in the plan, so the rules and the jobs read them from one place)
REPORT_TABLES = (
    "annotators",
    "splits",
    "factors",
    "core",
    "improvements",
    "evaluators",
    "baselines",
    "deviation",
    "confusion",
    "prf",
    "confusion_cells",
    "prf_cells",
    "distribution",
    "correlations",
    "cross_task",
    "stats_factors",
    "stats_pairwise",
    "stats_versus_base",
    "stats_all_pairs",
    "stats_chance",
    "stats_alignment",
    "stats_control",
    "design",
)
#: the report tables that say what the data can support (shown first)
DATA_TABLES = ("annotators", "splits")
#: figures written by :func:`figures_job` per evaluator set (each as .png and .pdf)
REPORT_FIGURES = (
    "accuracy_by_shots",
    "control_advantage",
    "evaluator_traits",
    "confusion",
    "label_distribution",
)
#: the cross-task figure (PersonaJudge Figure 3), written where two evaluator sets have different tasks
CROSS_TASK_FIGURE = "cross_task"


class Plan(StudyPlan):
    name = "simulation"
    paths = {
        "simulation_raw": "{results}/simulation/{dataset}/download.{ext}",
        "simulation_records": "{results}/simulation/{dataset}/records.jsonl",
        "simulation_splits": "{results}/simulation/{dataset}/splits.tsv",
        "simulation_evaluators": "{results}/simulation/{dataset}/evaluators.tsv",
        "simulation_split_report": "{results}/simulation/{dataset}/split_report.tsv",
        "simulation_annotators": "{results}/simulation/{dataset}/annotators.tsv",
        "simulation_predictions": "{results}/simulation/{dataset}/predictions/{model}/{demo_type}/{shots}.tsv",
        "simulation_demos": "{results}/simulation/{dataset}/demos/{model}/{demo_type}/{shots}.tsv",
        "simulation_baselines": "{results}/simulation/{dataset}/baselines.tsv",
        "simulation_metrics": "{results}/simulation/{dataset}/metrics/{name}.tsv",
        "simulation_stats": "{results}/simulation/{dataset}/stats/{name}.tsv",
        "simulation_figure": "{results}/simulation/figures/{dataset}/{name}.{ext}",
        "simulation_cross_figure": "{results}/simulation/figures/cross_task.{ext}",
        "simulation_table": "{results}/simulation/tables/{name}.{ext}",
    }

    def __init__(self, project):
        super().__init__(project)
        #: evaluator set -> (its file's version, (types, skipped))
        self._types_memo: dict[str, tuple[tuple, tuple[list[str], dict[str, str]]]] = {}

    # -- evaluator sets -----------------------------------------------------------------------

    @property
    def sets(self) -> dict[str, dict]:
        return self.section["datasets"]

    @property
    def datasets(self) -> list[str]:
        """The evaluator sets (keys of ``simulation.datasets``)."""
        return list(self.sets)

    @property
    def own_datasets(self) -> list[str]:
        return self.datasets

    def text_datasets(self) -> list[str]:
        """None of the top-level ``datasets``: the study reads its own evaluator sets."""
        return []

    def raw_file(self, d: str) -> str:
        """The downloaded file of a ``download`` evaluator set."""
        return self.project.path("simulation_raw", dataset=d, ext=RAW_EXT[self.sets[d]["format"]])

    def source_file(self, d: str) -> str:
        """The file the prepare job reads: the bundled sample, the configured path or the download,
        as the rule gives it to Snakemake: relative to the run's working directory (open it from
        anywhere with :meth:`judgelab.wiring.facade.Project.local`)."""
        s = self.sets[d]
        if s["source"] == "sample":
            return self.project.run_path(self.project.resources / "sample" / d / SAMPLE_FILES[s["format"]])
        if s["source"] == "files":
            return self.project.run_path(s["path"])
        return self.raw_file(d)

    def download_url(self, d: str) -> str:
        return self.sets[d].get("url") or PANDALM_URL

    def selection(self, d: str) -> Selection:
        """What the prepare job does with the file (a tracked param): format, evaluators, split."""
        s = self.sets[d]
        return Selection(
            format=s["format"],
            evaluators=tuple(s["evaluators"] or []),
            task=s["task"],
            pool=int(s["pool"]),
            validation=int(s["validation"]),
            split=s["split"],
            group_by=s["group_by"],
            balance_neutral=bool(s["balance_neutral"]),
            seed=int(s["seed"]),
            min_neutral=int(self.section["min_neutral"]),
        )

    # -- the design ---------------------------------------------------------------------------

    @property
    def metric(self) -> str:
        """The accuracy the tables, figures and tests report (``accuracy`` or ``accuracy_all``)."""
        return self.section["metric"]

    @property
    def seed(self) -> int:
        return int(self.section["seed"])

    @property
    def majority_source(self) -> str:
        return self.section["majority_source"]

    @property
    def alpha(self) -> float:
        return float(self.section["alpha"])

    @property
    def permutations(self) -> int:
        """Random permutations of the item-level tests."""
        return int(self.section["permutations"])

    @property
    def random_draws(self) -> int:
        """Seeded draws of Random Selection shown beside its expectation."""
        return int(self.section["random_draws"])

    @property
    def cluster_by(self) -> str:
        """What the item-level tests keep together (``group``, ``item``, ``judgment``)."""
        return self.section["cluster_by"]

    @property
    def demo_types(self) -> list[str]:
        return list(self.section["demo_types"])

    @property
    def shots(self) -> list[int]:
        return [int(k) for k in self.section["shots"]]

    def file_decides(self, d: str) -> bool:
        """Whether the demonstration types of evaluator set ``d`` wait for the file the workflow
        downloads: a ``jsonl`` file (telemetry and reasoning are optional per record) with
        ``source: download``, when a configured type needs telemetry or reasoning (``J`` alone
        runs on any file). Its download is a Snakemake checkpoint (:meth:`checkpoints`): the rules
        that list the set's cells ask for them after it has run."""
        s = self.sets[d]
        return (
            s["source"] == "download"
            and s["format"] == "jsonl"
            and any(DEMO_TYPES[t] for t in self.demo_types)
        )

    def checkpoints(self, dataset: str | None = None) -> list[tuple[str, dict[str, str]]]:
        """The checkpoint jobs (rule, wildcards) whose output decides the cells of evaluator set
        ``dataset`` (None: of every set): the download of each set whose types the file decides
        (:meth:`file_decides`). The rules that list cells (the metrics job's inputs and design,
        the provenance table) wait for them."""
        sets = self.datasets if dataset is None else [dataset]
        return [
            ("simulation_download", {"dataset": d, "ext": RAW_EXT["jsonl"]})
            for d in sets
            if self.file_decides(d)
        ]

    def types_known(self, d: str) -> bool:
        """Whether the demonstration types of ``d`` are known now: always, except for a set
        whose types its download decides (:meth:`file_decides`) before that download."""
        return not self.file_decides(d) or self.project.local(self.source_file(d)).exists()

    def _read_types(self, d: str) -> tuple[list[str], dict[str, str]]:
        """The types of a jsonl evaluator set, from its file's records (the task and evaluators
        the set selects): what the prepare job will read."""
        s = self.sets[d]
        path = self.source_file(d)
        if not self.project.local(path).exists():
            if s["source"] == "download":
                raise InputError(
                    f"its demonstration types depend on the telemetry and reasoning of {path}, "
                    "which is not downloaded yet: the workflow plans the set's cells after its "
                    "download (the checkpoint simulation_download)",
                    key=f"simulation.datasets.{d}.source",
                )
            raise InputError(
                f"file {path} does not exist (a relative path is relative to the "
                "working directory of the run)",
                key=f"simulation.datasets.{d}.path",
            )
        try:
            records = select_task(load_records(self.project.local(path), "jsonl"), s["task"], path)
        except InputError as exc:
            if exc.key != "simulation.task":
                raise
            raise InputError(
                str(exc).removeprefix(f"config key '{exc.key}': "),
                key=f"simulation.datasets.{d}.task",
            ) from None
        keep = set(s["evaluators"] or [])
        if keep:
            records = [r for r in records if r.evaluator in keep]
        return plan_types(self.demo_types, records)

    def _types(self, d: str) -> tuple[list[str], dict[str, str]]:
        """(types, skipped) of evaluator set ``d``, worked out once per version of its file (a
        download the run replaces is read again)."""
        s = self.sets[d]
        # no file to read: the pandalm format, or a download asked for J alone (any file has it)
        if s["format"] == "pandalm" or (s["source"] == "download" and not self.file_decides(d)):
            stamp: tuple = ()
        else:
            local = self.project.local(self.source_file(d))
            stamp = (local.stat().st_mtime_ns, local.stat().st_size) if local.exists() else ("missing",)
        if d in self._types_memo and self._types_memo[d][0] == stamp:
            return self._types_memo[d][1]
        wanted = self.demo_types
        if s["format"] == "pandalm":  # judgments only: no telemetry, no reasoning
            types = [t for t in wanted if not DEMO_TYPES[t]]
            skipped = {
                t: f"the pandalm format carries judgments only (no {' or '.join(DEMO_TYPES[t])})"
                for t in wanted
                if DEMO_TYPES[t]
            }
            for t, why in skipped.items():
                log.warning("simulation %s: skipping demonstration type %s: %s", d, t, why)
        elif not stamp:
            types, skipped = list(wanted), {}
        else:
            types, skipped = self._read_types(d)
        self._types_memo[d] = (stamp, (types, skipped))
        return types, skipped

    def types(self, d: str) -> list[str]:
        """The demonstration types the evaluator set supports, in config order."""
        return self._types(d)[0]

    def skipped(self, d: str) -> dict[str, str]:
        """The demonstration types left out, with the reason."""
        return self._types(d)[1]

    def cells(self, d: str) -> list[dict]:
        """The cells of an evaluator set: a Base Judge per model, then model x type x shots."""
        return self._cells(d, self.types(d))

    def job_cells(self, d: str) -> list[dict]:
        """The cells as far as they are known now: :meth:`cells`, or before the download of a
        set whose types the file decides, those of every configured type (an upper bound; the
        estimate counts them and says so)."""
        return self._cells(d, self.types(d) if self.types_known(d) else self.demo_types)

    def _cells(self, d: str, types: list[str]) -> list[dict]:
        cells = [{"model": m, "demo_type": BASE, "shots": 0} for m in self.judges]
        cells += [
            {"model": m, "demo_type": t, "shots": k} for m in self.judges for t in types for k in self.shots
        ]
        return cells

    def all_demo_types(self) -> list[str]:
        """Every value the ``demo_type`` wildcard takes (for its constraint)."""
        return [BASE, *DEMO_TYPES]

    def design(self, d: str) -> Design:
        """The evaluator set's cells and skipped demonstration types (the metrics job's param)."""
        return Design(cells=tuple(self.cells(d)), skipped=self.skipped(d))

    # -- prompts and settings -----------------------------------------------------------------

    @cached_property
    def prompt(self):
        return SimulationPrompt.load(self.section["prompt"], self.project.resources)

    def prompt_texts(self, d: str, demo_type: str) -> dict:
        """The texts a cell's prompts use (:meth:`SimulationPrompt.texts_for` of the set's task)."""
        return self.prompt.texts_for(self.sets[d]["task"], demo_type)

    def cascade(self, d: str, model: str) -> CascadeSettings:
        """The cascade settings of a cell, ``answer: auto`` resolved for the model (logits for the
        embedded model, parse for API models)."""
        values = {
            "task": self.sets[d]["task"],
            "answer": self.section["answer"],
            "max_tokens": int(self.section["max_tokens"]),
            "seed": int(self.section["seed"]),
            "min_neutral": int(self.section["min_neutral"]),
        }
        return CascadeSettings.resolve(values, self.project.config["models"][model])

    def settings(self, d: str, model: str) -> dict:
        """:meth:`cascade` as a mapping."""
        return self.cascade(d, model).to_json()

    def coverage(self) -> Coverage:
        """The coverage check of the predict jobs (a tracked param, part of :meth:`judge`): the
        share of validation items with an answered (composed) label."""
        return Coverage(
            float(self.project.config["min_coverage"]),
            f"{self.section['prompt']} (simulation.prompt)",
            "simulation.max_tokens",
            "simulation.answer",
        )

    def judge(self, d: str, model: str, demo_type: str) -> CascadeJudge:
        """The judge of the prediction jobs of ``model`` x ``demo_type`` on evaluator set ``d``
        (any shot count; the rule's one tracked param of the judge): the model's entry, the
        texts the cell's prompts use, the cascade settings and the coverage floor. Adding a
        model or a shot count runs only the new cells; a prompt edit reruns exactly the cells
        whose texts it changes."""
        return CascadeJudge(
            model=model,
            spec=self.project.model_entry(model),
            prompt=self.prompt_texts(d, demo_type),
            cascade=self.cascade(d, model),
            coverage=self.coverage(),
        )

    def baseline_settings(self) -> BaselineSettings:
        return BaselineSettings(seed=self.seed, majority_source=self.majority_source)

    def metric_settings(self) -> MetricSettings:
        return MetricSettings(metric=self.metric, random_draws=self.random_draws, seed=self.seed)

    def stats_settings(self) -> StatsSettings:
        return StatsSettings(
            metric=self.metric,
            alpha=self.alpha,
            permutations=self.permutations,
            seed=self.seed,
            cluster_by=self.cluster_by,
        )

    def table_settings(self) -> TableSettings:
        return TableSettings(metric=self.metric, alpha=self.alpha)

    # -- the study's contract -----------------------------------------------------------------

    def check(self) -> None:
        models = self.project.config["models"]
        for i, m in enumerate(self.section.get("judges") or []):
            if m not in models:
                raise InputError(
                    f"{m!r} is not a key of `models` (known: {sorted(models)})", key=f"simulation.judges[{i}]"
                )
        if not self.judges:
            raise NothingToDo(
                "the study is enabled but has no live judge (simulation.judges; null = the top-level "
                f"`judges`: {self.project.judges}): every cell asks a model; set simulation.enabled: "
                "false to skip it",
                key="simulation",
            )
        for d, s in self.sets.items():
            key = f"simulation.datasets.{d}"
            if s["source"] == "sample" and not self.project.local(self.source_file(d)).exists():
                raise InputError(
                    f"no bundled sample {self.source_file(d)} for format {s['format']!r}", key=f"{key}.source"
                )
            if s["source"] == "files" and not s.get("path"):
                raise InputError("source 'files' needs `path`", key=f"{key}.path")
            if s["source"] == "download" and s["format"] == "jsonl" and not s.get("url"):
                raise InputError(
                    "source 'download' of a jsonl file needs `url` (only the pandalm "
                    "format has a default, PandaLM's public file)",
                    key=f"{key}.url",
                )
            if s["task"] not in self.prompt.scales:
                raise InputError(
                    f"the prompt {self.section['prompt']!r} has no scale block for task "
                    f"{s['task']!r} (it has {sorted(self.prompt.scales)})",
                    key=f"{key}.task",
                )

    def llm_jobs(self):
        """The prediction jobs (:meth:`job_cells`): before the download of a set whose file decides
        its types, every configured type stands (an upper bound, for the estimate and the parse);
        the rules that list them wait for the download first (:meth:`checkpoints`)."""
        return [
            LLMJob(
                "simulation_predict",
                c["model"],
                (
                    ("dataset", d),
                    ("model", c["model"]),
                    ("demo_type", c["demo_type"]),
                    ("shots", str(c["shots"])),
                ),
                self.name,
            )
            for d in self.datasets
            for c in self.job_cells(d)
        ]

    def tasks(self) -> dict[str, str]:
        """Evaluator set -> its task (the prompt's scale block)."""
        return {d: s["task"] for d, s in self.sets.items()}

    @property
    def cross_task(self) -> bool:
        """Whether two evaluator sets have different tasks (the cross-task figure, PersonaJudge
        Figure 3, compares the evaluators they share)."""
        return len(set(self.tasks().values())) > 1

    def targets(self) -> list[str]:
        path = self.project.path
        out = [path("simulation_table", name=t, ext=e) for t in REPORT_TABLES for e in ("tsv", "md")]
        out += [
            path("simulation_figure", dataset=d, name=f, ext=e)
            for d in self.datasets
            for f in REPORT_FIGURES
            for e in ("png", "pdf")
        ]
        if self.cross_task:
            out += [path("simulation_cross_figure", ext=e) for e in ("png", "pdf")]
        return out

    # -- the estimate -------------------------------------------------------------------------

    def requests(self, job, ctx) -> Iterator[tuple[str, Request, bool]]:
        """For ``judgelab estimate``: the requests of one job (:mod:`.estimate`)."""
        return estimate.requests(self, job, ctx)
