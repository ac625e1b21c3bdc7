"""The project facade: a validated configuration and the answer to every resolution question.

The Snakefile, the rules' helpers (``workflow/rules/common.smk``), ``judgelab estimate``, the job
functions and the CLI all ask a :class:`Project`; none of them re-derives which personas run and
where each one's text comes from, which raw files a dataset reads, which models judge, or where a
result goes. Each study answers its own questions in its plan (``judgelab.studies.<study>.plan``),
which the project holds; with the estimate and the CLI it is the wiring, the layer above the
studies that knows them (by name, from :data:`judgelab.studies.STUDIES`).

Every path the project gives is relative to the working directory of the run, and every resource
(prompts, personas, bundled sample) resolves against the workflow's own folder (``root``), never
against the checkout the package was installed from.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from functools import cached_property
from importlib import import_module
from pathlib import Path

from judgelab import schema
from judgelab.analysis.calibration import CalibrationSettings
from judgelab.data.imported import DEFAULT_TEMPLATE, ImportedJudge, ImportReading, resolve_imported
from judgelab.data.sources import source_urls
from judgelab.errors import InputError, NothingToDo
from judgelab.llm.backends import api_backends, capabilities, temperature_of
from judgelab.llm.judge import JudgeSection
from judgelab.llm.personas import PersonaGeneration, load_persona_file, read_generated, resolve_personas
from judgelab.llm.prompts import load_template_spec
from judgelab.project.bundled import param as bundled_param
from judgelab.project.config import PACKAGE_ROOT, SCHEMA, check_name, load_config, user_layers, validate
from judgelab.project.judges import judge_section
from judgelab.project.manifest import (
    ManifestSettings,
    config_digest,
    manifest_models,
    package_version,
    workflow_commit,
)
from judgelab.project.plan import LLMJob
from judgelab.project.provenance import ProvenanceJob, ProvenanceSettings
from judgelab.studies import STUDIES


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask; all CPUs where that is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no sched_getaffinity (macOS)
        return os.cpu_count() or 1


#: Backends that call a provider's API (their jobs hold one `<backend>_jobs` resource token).
API_BACKENDS = api_backends()

#: Model keys that only some backends read (elsewhere they would be ignored silently): key ->
log = logging.getLogger(__name__)

#: the backends that read it. Keys not listed (backend, threads, prices) apply to every backend.
BACKEND_KEYS = {
    **dict.fromkeys(("model_path", "n_ctx", "n_batch", "reuse_prefix", "amx"), ("local",)),
    **dict.fromkeys(
        ("model", "concurrency", "timeout", "max_retries", "send_sampling", "extra_body"), API_BACKENDS
    ),
    **dict.fromkeys(("base_url", "api_key_env", "batch", "batch_poll_interval"), ("openai", "anthropic")),
    **dict.fromkeys(("logprobs", "top_logprobs", "token_limit_param"), ("openai",)),
    "anthropic_version": ("anthropic",),
}


#: Model keys that change no request or answer, only how the judge is shown (kept out of the
#: model param of the jobs).
DISPLAY_KEYS = ("display_name",)


#: The shared result paths, named once (each study adds its own: ``Plan.paths``). ``{results}`` is
#: the configured folder; the other fields are the jobs' wildcards (see :meth:`Project.path`).
PATHS = {
    "raw": "{results}/raw/{dataset}/{kind}.raw",
    "published": "{results}/published/{judge}/{dataset}.txt",
    "judges_agreement": "{results}/judges/{dataset}/agreement.tsv",
    "judges_figure": "{results}/judges/{dataset}/agreement.{ext}",
    "judges_leaderboard": "{results}/judges/leaderboard.{ext}",
    "dataset": "{results}/datasets/{dataset}.tsv",
    "generated_persona": "{results}/personas/generated/{model}/{persona}.json",
    "persona_table": "{results}/personas/personas.tsv",
    "manifest": "{results}/manifest.json",
    "provenance": "{results}/provenance/{study}.tsv",
    "log": "{results}/logs/{name}.log",
}


class _KeepMissing(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


# -- the project --------------------------------------------------------------------------------


class Project:
    """A validated configuration and the answers to every resolution question.

    ``root`` is the workflow folder (``workflow.basedir`` of the Snakefile): prompts, personas and
    the bundled sample are read from ``root/resources``. Result and cache paths are relative to the
    working directory of the run, as the config writes them.
    """

    def __init__(
        self,
        config: dict,
        root: str | Path | None = None,
        *,
        validated: bool = False,
        workdir: str | Path | None = None,
        user_layers: Sequence[Mapping] | None = None,
    ):
        self.root = Path(root or PACKAGE_ROOT).resolve()
        #: the config layers the user wrote (their --configfile files, --config values, a run
        #: folder's own config/config.yaml), as read: which studies they enable (None: unknown,
        #: every enabled study counts as asked for)
        self.user_layers = None if user_layers is None else [dict(layer) for layer in user_layers]
        #: studies the shipped defaults enable that have nothing to do under this config: why
        self.skipped: dict[str, str] = {}
        #: what planning left out and why (:meth:`note`), printed by the Snakefile before any job
        self.notices: list[str] = []
        #: the run's working directory (default: this process's): relative paths are relative to it
        self.workdir = Path(workdir).resolve() if workdir is not None else Path.cwd()
        self.config = config if validated else validate(config, self.root)
        self.results = self.config["results"]
        self.cache = self.config["cache"]
        self._judge_sections: dict[str, JudgeSection] = {}
        #: dataset -> the studies reading its passage texts, once the checks are done
        self._text_readers: dict[str, list[str]] | None = None
        self._checked = False
        self.plans = {s: import_module(f"judgelab.studies.{s}.plan").Plan(self) for s in STUDIES}
        self.paths = dict(PATHS)
        for plan in self.plans.values():
            clash = sorted(set(plan.paths) & set(self.paths))
            if clash:
                raise ValueError(f"study {plan.name} redefines the result paths {clash}")
            self.paths.update(plan.paths)
        self._check_references()

    @classmethod
    def load(
        cls,
        configfiles: Sequence[str | Path] = (),
        directory: str | Path = ".",
        root: str | Path | None = None,
    ) -> Project:
        """The project a ``snakemake -d DIRECTORY --configfile F...`` run sees. ``root``: the workflow
        folder (default: DIRECTORY when it holds the workflow, else this package's checkout)."""
        if root is None:
            root = directory if (Path(directory) / SCHEMA).exists() else PACKAGE_ROOT
        config = load_config(configfiles, directory, root)
        layers = user_layers(
            Path(directory) / "config" / "config.yaml", root, configfiles, directory=directory
        )
        return cls(config, root, validated=True, workdir=directory, user_layers=layers)

    def asked_for(self, study: str) -> bool:
        """Whether the user's own config asks for ``study`` (not only the shipped defaults): one of
        their layers enables it or sets any of its keys (``peras: {judges: []}`` is a PERAS the
        user configured, so judging nothing is their error, not a skip)."""
        if self.user_layers is None:
            return True
        return any(bool(layer.get(study)) for layer in self.user_layers)

    def path(self, which: str, **fields: str) -> str:
        """The result path ``which`` of :data:`PATHS` with ``fields`` filled in; fields not given stay
        ``{wildcards}`` (the rules' output patterns)."""
        return self.paths[which].format_map(_KeepMissing(results=self.results, **fields))

    def log(self, name: str) -> str:
        """The log file of a job: ``name`` is a path under ``{results}/logs`` (may hold wildcards)."""
        return self.path("log", name=name)

    @property
    def resources(self) -> Path:
        return self.root / "resources"

    def run_path(self, path: str | Path) -> str:
        """An input path as the rules give it to Snakemake (which records it): an absolute path inside
        the run's working directory or inside this workflow's folder becomes relative to the working
        directory, so that a finished run moved or copied elsewhere (with its workflow where it was
        relative to it, e.g. the run folder being the checkout) finds the same inputs and has
        nothing to do; a relative path stays as written, any other absolute path as it is."""
        p = Path(path)
        if not p.is_absolute():
            return str(path)
        if p.is_relative_to(self.workdir) or p.is_relative_to(self.root):
            return os.path.relpath(p, self.workdir)
        return str(p)

    def local(self, path: str | Path) -> Path:
        """A path the project gives (relative to the run's working directory) as this process
        opens it."""
        return self.workdir / path

    # -- studies ------------------------------------------------------------------------------

    def note(self, message: str) -> None:
        """A notice of what planning left out and why (e.g. a published group's judges that give
        scores, where a study takes labels): logged, kept once in :attr:`notices`, which the
        Snakefile prints (``judgelab: <message>``) before any job."""
        if message not in self.notices:
            self.notices.append(message)
            log.info(message)

    def plan(self, study: str):
        """The study's :class:`judgelab.project.plan.StudyPlan`."""
        return self.plans[study]

    def enabled(self, study: str) -> bool:
        return self.plans[study].enabled

    @property
    def studies(self) -> list[str]:
        return [s for s in STUDIES if self.enabled(s)]

    # -- models -------------------------------------------------------------------------------

    @property
    def judges(self) -> list[str]:
        """The models that judge (``judges``), in order; the other entries of ``models`` run only
        where a key names them (e.g. ``personas.generation.model``)."""
        return list(self.config["judges"])

    def model_entry(self, name: str) -> dict:
        """The model entry a job calls the model with, without the keys that change no answer
        (:data:`DISPLAY_KEYS`: renaming a judge reruns only its tables and figures)."""
        return {k: v for k, v in self.config["models"][name].items() if k not in DISPLAY_KEYS}

    def judge_section(self, name: str) -> JudgeSection:
        """The section of templates and judges ``name`` (:func:`judgelab.project.judges.judge_section`),
        built once per project."""
        if name not in self._judge_sections:
            self._judge_sections[name] = judge_section(self, name)
        return self._judge_sections[name]

    def model_param(self, name: str) -> str:
        """:meth:`model_entry` as a deterministic string (a tracked param of the jobs using it)."""
        return json.dumps(self.model_entry(name), sort_keys=True)

    def display_name(self, name: str) -> str:
        """A judge's name in tables and figures: its entry's ``display_name``, else its key (an
        imported judge, not an entry of ``models``: its name)."""
        entry = self.config["models"].get(name) or {}
        return str(entry.get("display_name") or name)

    def display_names(self, names: Sequence[str]) -> dict[str, str]:
        """:meth:`display_name` of each of ``names`` (a tracked param of the table and figure jobs)."""
        return {n: self.display_name(n) for n in names}

    def model_threads(self, name: str) -> int:
        return int(self.config["models"][name].get("threads", schema.default("models.<name>.threads")))

    def job_threads(self, models: Sequence[str], local_cores: int | None = None) -> int:
        """The threads a job of these models reserves from Snakemake's --cores: the largest
        `threads` of the models. ``local_cores``: the --cores of a run on this machine (None for
        a cluster run). Given more than this machine has CPUs (e.g. --cores 8 on 2), a job of a
        local (llama.cpp) model reserves its share of the excess, so that at most CPUs / threads
        such jobs run at once: time-sliced llama.cpp jobs cost 14-26% more CPU
        (docs/performance.md section 4). The job still runs the model's own `threads`
        (``jobs.LLMSession`` takes the smaller of the two)."""
        threads = max(self.model_threads(m) for m in models)
        local = self.runs_here(models)
        cpus = usable_cpus()
        if not local or local_cores is None or local_cores <= cpus:
            return threads
        return max(threads, local_cores // max(1, cpus // threads))

    #: Memory of a job holding a local GGUF model (file + context and buffers: an 8B Q4_K_M model
    #: needs ~6 GB), and of a job that only waits on a provider's API, in MB.
    LOCAL_MODEL_MEM_MB = 8000
    API_MODEL_MEM_MB = 2000
    #: Minutes a job of a batch-API model may wait for the provider (OpenAI / Anthropic: 24 h).
    BATCH_RUNTIME_MIN = 1440

    def uses_backend(self, models: Sequence[str], backend: str) -> bool:
        """Whether any of ``models`` is called through ``backend``."""
        return any(self.config["models"][m]["backend"] == backend for m in models)

    def runs_here(self, models: Sequence[str]) -> bool:
        """Whether any of ``models`` runs inside the job (its backend's
        :attr:`~judgelab.llm.backends.Capabilities.runs_here`: the embedded model)."""
        return any(capabilities(self.config["models"][m]["backend"]).runs_here for m in models)

    def job_memory_mb(self, models: Sequence[str]) -> int:
        """The memory a job calling ``models`` needs (first attempt): a local model is held in the
        job's memory, an API model is not."""
        local = self.runs_here(models)
        return self.LOCAL_MODEL_MEM_MB if local else self.API_MODEL_MEM_MB

    def job_runtime_min(self, models: Sequence[str], runtime: int) -> int:
        """The runtime of a job calling ``models`` (first attempt): the rule's ``runtime``, or a
        day when a model answers through a batch API."""
        batch = any(self.config["models"][m].get("batch") for m in models)
        return max(runtime, self.BATCH_RUNTIME_MIN) if batch else runtime

    @property
    def used_models(self) -> list[str]:
        """Every model some job of this run calls (judges of the enabled studies, generator)."""
        used = [m for s in self.studies for m in self.plans[s].models()]
        if self.generates_personas:
            used.append(self.generation["model"])
        return list(dict.fromkeys(used))

    def api_key_envvars(self) -> list[str]:
        """The environment variables holding the API keys of the models this run calls."""
        from judgelab.llm.backends.api import api_key_envvars

        return api_key_envvars({"models": {m: self.config["models"][m] for m in self.used_models}})

    def api_key_envvars_set(self) -> list[str]:
        """:meth:`api_key_envvars` that are set in this environment (the workflow's ``envvars:``:
        passed on to the jobs by executors that do not inherit the environment; registering
        only the set ones never fails, so a dry run needs no key)."""
        return [v for v in self.api_key_envvars() if os.environ.get(v, "").strip()]

    def check_credentials(self) -> None:
        """Bedrock models take region and credentials from the AWS chain: check it before any job
        (one InputError naming what is missing) when a model this run calls uses it."""
        from judgelab.llm.backends.bedrock import check_aws_chain

        if any(self.config["models"][m]["backend"] == "bedrock" for m in self.used_models):
            check_aws_chain({"models": {m: self.config["models"][m] for m in self.used_models}})

    def check_secrets(self) -> None:
        """The secrets of the models this run calls: every API key variable set, the AWS chain of
        Bedrock models complete; one InputError naming the variable (and the model's key) or what
        the chain lacks. The Snakefile runs it when a run starts (``onstart:``: before any job,
        never in a dry run, so ``snakemake -n`` of a paper config needs no key); each job checks
        its own model again when it builds the backend, before its first call."""
        from judgelab.llm.backends.api import check_api_keys

        check_api_keys({"models": {m: self.config["models"][m] for m in self.used_models}})
        self.check_credentials()

    # -- calibration --------------------------------------------------------------------------

    def calibration(self) -> CalibrationSettings:
        """The options of every study's calibration job (the config's top-level ``calibration``:
        the ECE bins, at least 1 by the schema)."""
        return CalibrationSettings(bins=int(self.config["calibration"]["bins"]))

    # -- datasets -----------------------------------------------------------------------------

    @property
    def datasets(self) -> list[str]:
        return list(self.config["datasets"])

    def dataset(self, name: str) -> dict:
        return self.config["datasets"][name]

    def table(self, name: str = "{dataset}") -> str:
        """The prepared (normalised, subset) table of a dataset."""
        return self.path("dataset", dataset=name)

    def text_readers(self, name: str) -> list[str]:
        """The enabled studies whose jobs read dataset ``name``'s passage texts (shown to a live
        model, or ranked by a retrieval system: :meth:`StudyPlan.text_datasets`), in the order of
        :data:`judgelab.studies.STUDIES`."""
        if self._text_readers is None:
            readers: dict[str, list[str]] = {}
            for s in self.studies:
                for d in dict.fromkeys(self.plans[s].text_datasets()):
                    readers.setdefault(d, []).append(s)
            if not self._checked:  # studies the checks may still skip: asked again later
                return readers.get(name, [])
            self._text_readers = readers
        return self._text_readers.get(name, [])

    def needs_texts(self, name: str) -> bool:
        """Whether some enabled study reads dataset ``name``'s passage texts
        (:meth:`text_readers`). A dataset only imported (or published) judges label needs none."""
        return bool(self.text_readers(name))

    def has_texts(self, name: str) -> bool:
        """Whether dataset ``name`` can have passage texts: a download (its texts file is fetched
        when a study reads it), given texts (``source: files``), or a bundled sample with a texts
        file. A study's ``datasets: null`` takes only these."""
        d = self.dataset(name)
        if d["source"] == "sample":
            ext = "jsonl" if d["format"] == "llmjudge" else "tsv"
            return (self.resources / "sample" / name / f"texts.{ext}").is_file()
        if d["source"] == "files":
            return bool(d.get("texts"))
        return True

    def reads_texts(self, name: str) -> bool:
        """Whether the prepare job of dataset ``name`` reads passage texts: those of the bundled
        sample and a ``texts`` file given (``source: files``) always, a download's only where some
        study needs them (:meth:`needs_texts`; otherwise the texts file is not fetched). Without
        texts the table's ``passage`` column is empty."""
        source = self.dataset(name)["source"]
        if source == "sample":  # a bundled slice without a texts file (LLMJudge's) reads none
            return self.has_texts(name) or self.needs_texts(name)
        if source == "files":
            return self.has_texts(name)
        return self.needs_texts(name)

    def raw_files(self, name: str) -> dict[str, str]:
        """The raw qrels/topics/texts a dataset's prepare job reads, by its ``source``; no texts
        where it reads none (:meth:`reads_texts`)."""
        kinds = ("qrels", "topics", "texts") if self.reads_texts(name) else ("qrels", "topics")
        return self._raw_paths(name, kinds)

    def _raw_paths(self, name: str, kinds: Sequence[str]) -> dict[str, str]:
        d = self.dataset(name)
        if d["source"] == "sample":
            folder = self.resources / "sample" / name
            ext = "jsonl" if d["format"] == "llmjudge" else "tsv"
            files = {"qrels": "qrels.txt", "topics": "topics.txt", "texts": f"texts.{ext}"}
            return {k: self.run_path(folder / files[k]) for k in kinds}
        if d["source"] == "download":
            return {k: self.path("raw", dataset=name, kind=k) for k in kinds}
        return {k: self.run_path(d[k]) for k in kinds}

    def raw_checked(self, name: str) -> dict[str, str]:
        """:meth:`raw_files` (paths relative to the working directory), each configured or bundled
        file checked to exist: one that does not is an error naming its key. The user's files
        (``source: files``) are read as the prepare job reads them (every line, the texts
        aligned with the qrels: :func:`judgelab.data.prepare.build_table`), once while they are
        unchanged (:mod:`judgelab.project.inputs`): a bad line is an error naming its file and
        line before any job runs."""
        files = self.raw_files(name)
        source = self.dataset(name)["source"]
        if source != "download":
            for kind, f in files.items():
                if not self.local(f).is_file():
                    key = f"datasets.{name}.{kind}" if source == "files" else f"datasets.{name}.source"
                    raise InputError(f"{kind} file {f} does not exist", key=key)
        docid_map = self.dataset(name).get("docid_map")
        if docid_map and not self.local(docid_map).is_file():
            raise InputError(f"file {docid_map} does not exist", key=f"datasets.{name}.docid_map")
        if source == "files":
            self._check_raw(name, files)
        return files

    def _check_raw(self, name: str, files: Mapping[str, str]) -> None:
        from judgelab.data.prepare import build_table
        from judgelab.project.inputs import InputCheck, check_inputs

        d = self.dataset(name)
        shown = [files["qrels"], files["topics"]]
        if "texts" in files:
            shown.append(files["texts"])
            if d.get("docid_map"):
                shown.append(self.run_path(d["docid_map"]))
        opened = [self.local(f) for f in shown]

        def read() -> None:
            texts = opened[2] if len(opened) > 2 else None
            docid_map = opened[3] if len(opened) > 3 else None
            build_table(
                name, d["format"], opened[0], opened[1], texts, docid_map, d.get("encoding"), repair=False
            )

        what = f"dataset {name} {d['format']} {d.get('encoding')}"
        check_inputs([InputCheck(what, tuple(opened), read, tuple(shown))], self.workdir)

    def raw_inputs(self, name: str) -> dict[str, str]:
        """The raw files of the prepare rule that are its input files: the configured or downloaded
        ones; the bundled sample is its ``bundled`` param instead (:meth:`raw_bundled`)."""
        return self.inputs_of(self.raw_checked(name))

    def raw_bundled(self, name: str) -> str:
        """The bundled raw files of a dataset as the prepare rule's ``bundled`` param."""
        return self.bundled_of(self.raw_checked(name))

    def source_inputs(self, name: str) -> dict[str, str]:
        """The raw qrels and topics of a dataset that are input files (:meth:`raw_inputs`): the
        import rules read them to tell a pair outside the selection (skipped, counted) from one
        the dataset does not have (an error)."""
        return self.inputs_of(self._source(name))

    def source_bundled(self, name: str) -> str:
        """:meth:`source_inputs` of the bundled sample, as the import rules' ``bundled`` param."""
        return self.bundled_of(self._source(name))

    def _source(self, name: str) -> dict[str, str]:
        files = self.raw_checked(name)
        return {"qrels": files["qrels"], "topics": files["topics"]}

    # -- bundled files ------------------------------------------------------------------------

    def is_bundled(self, path: str | Path) -> bool:
        """Whether a file the project gives ships with this workflow (under its ``resources/``)."""
        return self.local(path).resolve().is_relative_to(self.resources.resolve())

    def inputs_of(self, files: Mapping[str, str]) -> dict[str, str]:
        """The files of ``files`` that are rule inputs: all but the bundled ones."""
        return {k: f for k, f in files.items() if not self.is_bundled(f)}

    def bundled_of(self, files: Mapping[str, str]) -> str:
        """The bundled files of ``files`` as a rule's ``bundled`` param: their names inside this
        workflow folder and their digests, never their paths from the run folder, so a run
        folder moved relative to its workflow has nothing to do (:mod:`judgelab.project.bundled`;
        the job resolves them and gets each under its name, like an input)."""
        chosen = {k: self.local(f) for k, f in files.items() if self.is_bundled(f)}
        return bundled_param(chosen, self.root)

    def selection(self, name: str) -> dict:
        """What the prepare job does with the raw files (format, subset keys), as plain values.
        ``exclude_queries`` and ``match_counts`` appear only when set, so the param of a dataset
        that uses neither stays as it was (its prepare job does not rerun)."""
        d = self.dataset(name)
        keys = ("format", "encoding", "queries", "max_queries", "per_grade", "seed", "docid_map")
        out = {k: d.get(k) for k in keys}
        if out["docid_map"]:
            out["docid_map"] = self.run_path(out["docid_map"])
        out.update({k: d[k] for k in ("exclude_queries", "match_counts", "reference") if d.get(k)})
        return out

    def reference_files(self, name: str) -> list[str]:
        """The annotators' qrels files whose labels replace dataset ``name``'s grades
        (``datasets.<name>.reference``; empty: none), as the prepare rule's input; one that does not
        exist is an error naming its key."""
        files = list(self.dataset(name).get("reference") or [])
        for i, f in enumerate(files):
            if not self.local(f).is_file():
                raise InputError(f"{f} does not exist", key=f"datasets.{name}.reference[{i}]")
        return [self.run_path(f) for f in files]

    def download_urls(self, name: str) -> dict[str, str]:
        """The URLs the download job of dataset ``name`` fetches (a tracked param): the texts'
        only where a study reads them (:meth:`needs_texts`)."""
        d = self.dataset(name)
        return source_urls(name, d.get("urls"), d.get("split"), texts=self.needs_texts(name))

    def downloads(self, texts: bool) -> list[str]:
        """The datasets of ``source: download`` whose download fetches the passage texts
        (``texts``: rule ``download_dataset``), or only the qrels and topics (rule
        ``download_qrels_topics``, which Snakemake takes first where both match)."""
        return [
            n
            for n in self.datasets
            if self.dataset(n)["source"] == "download" and self.needs_texts(n) == texts
        ]

    # -- personas -----------------------------------------------------------------------------

    @cached_property
    def personas(self) -> dict:
        """The persona conditions of the run, in order (persona file entries, then custom)."""
        return resolve_personas(self.config, self.resources)

    @property
    def generation(self) -> dict:
        return self.config["personas"]["generation"]

    def persona_generation(self, model: str, persona: str) -> PersonaGeneration:
        """The generation of ``persona``'s instruction by ``model`` (a tracked param)."""
        gen = self.generation
        return PersonaGeneration(
            model=model,
            spec=self.model_entry(model),
            personality_type=self.personas[persona].personality_type,
            keywords_template=self.load_template(gen["keywords_template"]),
            instruction_template=self.load_template(gen["instruction_template"]),
            max_tokens=int(gen["max_tokens"]),
        )

    @property
    def persona_source(self) -> str:
        return self.config["personas"]["source"]

    @property
    def placement(self) -> str:
        return self.config["personas"]["placement"]

    @property
    def generated_persona_ids(self) -> list[str]:
        """Personas the generation writes: those of the persona file but the empty default."""
        return [p for p, pers in self.personas.items() if pers.origin == "paper" and pers.instruction.strip()]

    @property
    def generates_personas(self) -> bool:
        return bool(self.generation["enabled"]) or self.persona_source == "generated"

    def generated_file(self, persona: str = "{persona}") -> str:
        return self.path("generated_persona", model=self.generation["model"], persona=persona)

    def generated_files(self) -> list[str]:
        return [self.generated_file(p) for p in self.generated_persona_ids] if self.generates_personas else []

    def uses_generated(self, persona: str) -> bool:
        return self.persona_source == "generated" and persona in self.generated_persona_ids

    def persona_param(self, persona: str) -> str:
        """The instruction as a plain string, or "" when it comes from a generated file (the job
        then reads :meth:`persona_input`)."""
        return "" if self.uses_generated(persona) else self.personas[persona].instruction

    def persona_input(self, persona: str) -> list[str]:
        return [self.generated_file(persona)] if self.uses_generated(persona) else []

    def persona_text(self, persona: str) -> str | None:
        """The instruction a job sends: the configured text, or the generated file's (None when
        that file does not exist yet)."""
        if not self.uses_generated(persona):
            return self.personas[persona].instruction
        f = self.local(self.generated_file(persona))
        return read_generated(f)["instruction"] if f.exists() else None

    # -- templates ----------------------------------------------------------------------------

    def template(self, ref: str, kind: str | None = None, key: str | None = None):
        """A checked prompt template (:class:`judgelab.llm.prompts.Template`): ``<study>/<name>``
        under this workflow's resources/prompts, or a path. ``kind``: the kind needed there;
        ``key``: the config key naming it (both named in errors)."""
        return load_template_spec(ref, self.resources, kind, key=key)

    def load_template(self, ref: str, kind: str | None = None, key: str | None = None) -> str:
        """A checked prompt template's text (see :meth:`template`)."""
        return self.template(ref, kind, key).text

    # -- imported judges ----------------------------------------------------------------------

    @cached_property
    def catalog(self):
        """The published judges (:class:`judgelab.data.published.Catalog`): the shipped catalog
        and the config's ``published_judges`` entries."""
        from judgelab.data.published import load_catalog

        return load_catalog(self.resources, self.config.get("published_judges"))

    def published_file(self, judge: str, dataset: str) -> str:
        """A published judge's file of a dataset: on the bundled sample, the slice shipped with it
        (``resources/sample/<dataset>/published/<judge>.txt``: the LLMJudge submissions, MIT) when
        there is one; else the download job's output (its digest checked there, its lines in the
        jobs that read it)."""
        if self.dataset(dataset)["source"] == "sample":
            bundled = self.resources / "sample" / dataset / "published" / f"{judge}.txt"
            if bundled.is_file():
                return self.run_path(bundled)
        return self.path("published", judge=judge, dataset=dataset)

    def published_download(self, judge: str, dataset: str) -> dict:
        """What the download job of a published judge's file needs (a tracked param): its URL,
        size, SHA-256, and its source and path there (where ``published_judges.mirror`` holds the
        copy; the mirror itself is not tracked: moving it fetches nothing again)."""
        entry = self.catalog.judges[judge]
        f = self.catalog.file(judge, dataset)
        return {
            "url": f.url,
            "bytes": f.bytes,
            "sha256": f.sha256,
            "source": entry.source.name,
            "file": f.file,
        }

    @cached_property
    def imported(self) -> dict:
        """The run's imported judges: ``imported_judges`` and the published judges the config
        names (:attr:`published_groups`), each one an :class:`ImportedJudge` whose file is the
        download job's output."""
        judges = resolve_imported(self.config)
        models = set(self.config.get("models") or {})
        catalog_datasets = self.catalog_datasets()
        for name in dict.fromkeys(n for names in self.published_groups.values() for n in names):
            entry = self.catalog.judges[name]
            if name in models:
                raise InputError(
                    f"published judge {name!r} shares its name with a model of `models`",
                    key=f"models.{name}",
                )
            datasets = tuple(d for d in entry.datasets if d in catalog_datasets)
            judges[name] = ImportedJudge(
                name,
                self.path("published", judge=name, dataset="{dataset}"),
                datasets,
                (DEFAULT_TEMPLATE,),
                ("default",),
                entry.values.scale,
                None,
                published=True,
                score_range=entry.values.score_range,
            )
        return judges

    # -- where each judge stands (results/judges) ----------------------------------------------

    @cached_property
    def standing(self) -> dict[str, list[dict]]:
        """dataset -> the judges compared on it with the human grades, in order: the live judges
        PERAS runs there (their first template, the reference persona), then the imported and
        published judges that labelled it. Empty (no stage) when the run has no imported or
        published judge: there is nothing to place a live judge among."""
        if not self.imported:
            return {}
        out: dict[str, list[dict]] = {}
        peras = self.plan("peras") if "peras" in self.studies else None
        if peras is not None and peras.judges and peras.templates:
            template, persona = peras.templates[0], peras.reference
            if persona in self.personas:
                for d in peras.datasets:
                    for m in peras.judges:
                        out.setdefault(d, []).append(
                            {
                                "name": m,
                                "kind": "live",
                                "file": self.path(
                                    "judgments", dataset=d, model=m, template=template, persona=persona
                                ),
                                "describe": f"live ({self.config['models'][m].get('backend', 'local')}), "
                                f"peras {template}/{persona}",
                                "scale": "graded",
                            }
                        )
        used = self._used_imports()
        for name, judge in self.imported.items():
            if name not in used:
                continue
            template = judge.templates[0]
            persona = "default" if "default" in judge.personas else judge.personas[0]
            entry = self.catalog.judges.get(name) if judge.published else None
            for d in judge.datasets:
                out.setdefault(d, []).append(
                    {
                        "name": name,
                        "kind": "published" if entry else "imported",
                        "file": (template, persona),  # resolved by standing_files, when the job is planned
                        "describe": (
                            f"{entry.source.name}: {entry.method}, {entry.judge_model or 'model not stated'}"
                            if entry
                            else f"imported ({judge.scale or 'graded'})"
                        ),
                        "reading": self.import_reading(name, d).to_json(),
                        "scale": judge.scale or "graded",
                    }
                )
        return {d: js for d, js in out.items() if any(j["kind"] != "live" for j in js)}

    def _used_imports(self) -> set[str]:
        """The imported judges some part of the run uses: the published ones (named to be used),
        every one when PERAS runs (it scores them all), and those a study names."""
        used = {n for n, j in self.imported.items() if j.published}
        if "peras" in self.studies:
            used |= set(self.imported)
        for s in self.studies:
            named = getattr(self.plan(s), "imported", None)
            if isinstance(named, Mapping):
                used |= set(named)
        return used

    def standing_params(self, dataset: str) -> list[dict]:
        """The agreement job's param: each judge of :attr:`standing` without its file (an input)."""
        return [{k: v for k, v in j.items() if k != "file"} for j in self.standing[dataset]]

    def standing_files(self, dataset: str) -> list[str]:
        """The agreement job's input files, in :attr:`standing` order: a live judge's PERAS judgment
        table, an imported judge's file (checked to exist, as the import rules check it) or a
        published judge's download or bundled slice."""
        return [
            j["file"] if j["kind"] == "live" else self.imported_file(j["name"], dataset, *j["file"])
            for j in self.standing[dataset]
        ]

    def standing_leaderboard_inputs(self) -> dict[str, list[str]]:
        """The leaderboard's inputs: each dataset's agreement table and, for the datasets the ranking
        study ranks, its correlations and (with ``ranking.ppi.enabled``) its PPI table."""
        ranking = self.plan("ranking") if "ranking" in self.studies else None
        ranked = [d for d in self.standing if ranking is not None and d in ranking.datasets]
        ppi = ranking is not None and bool(ranked) and ranking.ppi_enabled
        return {
            "agreement": [self.path("judges_agreement", dataset=d) for d in self.standing],
            "correlations": [self.path("ranking_correlations", dataset=d) for d in ranked],
            "ppi": [self.path("ranking_ppi", ext="tsv")] if ppi else [],
        }

    def standing_measures(self) -> list[str]:
        """The ranking study's measures (the leaderboard's tau and rho; the first one's PPI), none
        without it."""
        ranking = self.plan("ranking") if "ranking" in self.studies else None
        return list(ranking.measures) if ranking is not None else []

    def standing_targets(self) -> list[str]:
        if not self.standing:
            return []
        return [self.path("judges_leaderboard", ext=e) for e in ("tsv", "md", "html")] + [
            self.path("judges_figure", dataset=d, ext=e) for d in self.standing for e in ("png", "pdf")
        ]

    def catalog_datasets(self) -> list[str]:
        """The config's datasets a catalog judge can have labelled: a catalog dataset is the
        config's of the same key - but LLMJudge's submissions label its test qrels, not the
        development split (``split: dev``)."""
        return [
            d for d, spec in (self.config.get("datasets") or {}).items() if (spec or {}).get("split") != "dev"
        ]

    @cached_property
    def published_groups(self) -> dict[str, list[str]]:
        """Every name of the published catalog the config uses -> the judges it stands for (one,
        or a group's of the config's datasets): the entries of ``published_judges.use`` and the
        names in any study's ``imported_judges`` list that are not keys of ``imported_judges``.

        A judge that gives scores (``scores <low>-<high>``) is taken only where the name stands
        in a list that takes scores (a study whose plan's ``imported_scales`` has ``scores``: the
        ranking study, its scores as gains). Elsewhere - ``published_judges.use``, which adds
        judges for PERAS (graded labels), and the overrating study - a single judge that gives
        scores is an error naming its key, and a group leaves its score judges out, in the log."""
        own = set(self.config.get("imported_judges") or {})
        datasets = self.catalog_datasets()
        refs: list[tuple[str, str]] = [
            (str(r), f"published_judges.use[{i}]")
            for i, r in enumerate((self.config.get("published_judges") or {}).get("use") or [])
        ]
        for section, body in self.config.items():
            entries = body.get("imported_judges") if isinstance(body, dict) else None
            for i, e in enumerate(entries if isinstance(entries, list) else []):
                name = e if isinstance(e, str) else e.get("name") if isinstance(e, dict) else None
                if isinstance(name, str) and name not in own:
                    refs.append((name, f"{section}.imported_judges[{i}]"))
        out: dict[str, list[str]] = {}
        catalog = self.catalog if refs else None
        if catalog is None:
            return out
        names = set(catalog.judges) | set(catalog.groups)
        # a study's unknown name: the study's own error (not a key of ...)
        refs = [(r, k) for r, k in refs if r in names or k.startswith("published_judges.")]
        for ref, key in refs:
            chosen = catalog.resolve(ref, datasets, key)
            section = key.split(".", 1)[0]
            plan = self.plans.get(section)
            takes_scores = plan is not None and "scores" in plan.imported_scales
            where = {
                "published_judges": "`published_judges.use` (it adds judges for PERAS, which compares grades)",
                "overrating": "the overrating study",
            }.get(section, f"`{section}.imported_judges`")
            scores = [j.name for j in chosen if j.values.kind != "labels"]
            if scores and not takes_scores and ref in catalog.judges:
                raise InputError(
                    f"published judge {ref!r} gives scores ({chosen[0].values}), not labels: "
                    f"{where} takes labels; the ranking study takes scores as gains (name it in "
                    "ranking.imported_judges)",
                    key=key,
                )
            kept = [j.name for j in chosen if takes_scores or j.values.kind == "labels"]
            if not kept:
                raise InputError(
                    f"every judge of the group {ref!r} gives scores, not labels: {where} takes labels",
                    key=key,
                )
            if scores and not takes_scores:
                shown = ", ".join(scores[:3]) + (f" and {len(scores) - 3} more" if len(scores) > 3 else "")
                self.note(
                    f"published group {ref!r} in {key}: {len(scores)} judges that give scores "
                    f"left out ({where} takes labels; ranking.imported_judges takes scores as "
                    f"gains): {shown}"
                )
            out[ref] = list(dict.fromkeys([*out.get(ref, []), *kept]))
        return out

    def import_reading(self, name: str, dataset: str) -> ImportReading:
        """How the import jobs read imported judge ``name``'s file of ``dataset``: the scales it
        declares and the dataset's encoding (a tracked param)."""
        judge = self.imported[name]
        return ImportReading(
            judge.scale,
            judge.confidence_scale,
            self.dataset(dataset)["encoding"],
            judge.published,
            judge.score_range,
        )

    def imported_file(self, name: str, dataset: str, template: str, persona: str) -> str:
        """An imported judge's file (the import rule's input): an error naming the judge's key when
        it does not exist (relative to the working directory)."""
        if self.imported[name].published:
            return self.published_file(name, dataset)
        f = self.run_path(self.imported[name].file(dataset, template, persona))
        if not self.local(f).is_file():
            raise InputError(
                f"imported judge file {f} does not exist (dataset {dataset}, template "
                f"{template}, persona {persona})",
                key=f"imported_judges.{name}.path",
            )
        self._check_judge_file(name, dataset, f)
        return f

    def _check_judge_file(self, name: str, dataset: str, f: str) -> None:
        """Every line of an imported (or published) judge's file, read as its import job reads
        it (:func:`judgelab.data.imported.judge_lines`), against the dataset's source qrels and
        topics where they are at hand; once while the files are unchanged
        (:mod:`judgelab.project.inputs`)."""
        from judgelab.data.imported import SourcePairs, judge_lines
        from judgelab.project.inputs import InputCheck, check_inputs

        judge, encoding = self.imported[name], self.dataset(dataset).get("encoding")
        raw = self._raw_paths(dataset, ("qrels", "topics"))
        source = [raw["qrels"], raw["topics"]]
        if not all(self.local(s).is_file() for s in source):
            source = []  # a dataset not downloaded yet: the file's own lines only
        shown = [f, *source]
        opened = [self.local(p) for p in shown]

        def read() -> None:
            pairs = SourcePairs.read(opened[1], opened[2], encoding) if source else None
            judge_lines(opened[0], pairs, scale=judge.scale, confidence_scale=judge.confidence_scale)

        what = f"imported judge {judge.scale} {judge.confidence_scale} {encoding}"
        check_inputs([InputCheck(what, tuple(opened), read, tuple(shown))], self.workdir)

    # -- jobs and targets ---------------------------------------------------------------------

    def llm_jobs(self) -> list[LLMJob]:
        """Every job of the run that calls a model, as the workflow schedules them."""
        jobs = []
        if self.generates_personas:
            jobs += [
                LLMJob(
                    "generate_persona",
                    self.generation["model"],
                    (("model", self.generation["model"]), ("persona", p)),
                )
                for p in self.generated_persona_ids
            ]
        for s in self.studies:
            jobs += self.plans[s].llm_jobs()
        return jobs

    def targets(self, study: str) -> list[str]:
        """The files ``snakemake <study>`` makes (none when the study is off): the plan's targets
        and, when the study calls a model, its provenance table."""
        if not self.enabled(study):
            return []
        out = self.plans[study].targets()
        return out + [self.path("provenance", study=study)] if self.provenance_jobs(study) else out

    def provenance_jobs(self, study: str) -> list[LLMJob]:
        """The study's model-calling jobs (:meth:`StudyPlan.llm_jobs`), the rows of its provenance
        table (:mod:`judgelab.project.provenance`)."""
        return list(self.plans[study].llm_jobs()) if self.enabled(study) else []

    def provenance_settings(self, study: str) -> ProvenanceSettings:
        """The provenance job's param: the study's model-calling jobs, each with its model's
        backend and configured name."""
        jobs = []
        for job in self.provenance_jobs(study):
            entry = self.config["models"].get(job.model) or {}
            jobs.append(
                ProvenanceJob(
                    rule=job.rule,
                    job=",".join(f"{k}={v}" for k, v in job.wildcards),
                    model=job.model,
                    backend=entry.get("backend"),
                    configured_model=entry.get("model"),
                )
            )
        return ProvenanceSettings(study=study, jobs=tuple(jobs))

    def all_targets(self) -> list[str]:
        """`all`: the persona table, the targets of every enabled study and the run's manifest."""
        out = [self.path("persona_table")]
        for study in self.studies:
            out += self.targets(study)
        return out + self.standing_targets() + [self.path("manifest")]

    def manifest_settings(self) -> ManifestSettings:
        """The manifest job's param (:mod:`judgelab.project.manifest`): the resolved config's
        digest, its models, the studies that run, the package's version and the workflow's
        commit."""
        commit, dirty = workflow_commit(self.root)
        return ManifestSettings(
            config_digest=config_digest(self.config),
            models=manifest_models(self.config["models"]),
            studies=tuple(self.studies),
            version=package_version(),
            commit=commit,
            dirty=dirty,
        )

    def persona_rows(self) -> list[dict]:
        """The personas of the run with their resolved source (the persona table's input)."""
        return [{**vars(p), "uses_generated": self.uses_generated(pid)} for pid, p in self.personas.items()]

    # -- references ---------------------------------------------------------------------------

    def _check_references(self) -> None:
        """Every name the config uses for another entity exists, every file it names (persona
        file, templates, bundled samples, GGUF files) is there, and no key is set where it would
        be ignored; errors name the full key. Runs before any job (a dry run fails)."""
        models = self.config["models"]
        for section in ("datasets", "models"):
            for name in self.config[section]:
                check_name(name, f"{section}.{name}")
        for name in self.config["personas"]["custom"]:
            check_name(name, f"personas.custom.{name}")
        for i, m in enumerate(self.judges):
            if m not in models:
                raise InputError(
                    f"model {m!r} is not a key of `models` (known: {sorted(models)})", key=f"judges[{i}]"
                )
        for name in self.datasets:
            self._check_dataset(name)
        for name, spec in models.items():
            if spec.get("send_sampling") is False and temperature_of(spec) > 0:
                raise InputError(
                    "a temperature above 0 is not sent with send_sampling: false (the answers would "
                    "be the provider's default sampling, cached as if at this temperature)",
                    key=f"models.{name}.temperature",
                )
            for k, backends in BACKEND_KEYS.items():
                if spec.get(k) is not None and spec["backend"] not in backends:
                    raise InputError(
                        f"the {spec['backend']} backend does not read `{k}` (only {', '.join(backends)} do)",
                        key=f"models.{name}.{k}",
                    )
        gen_model = self.generation["model"]
        if self.generates_personas:
            if gen_model not in models:
                raise InputError(
                    f"model {gen_model!r} is not a key of `models` (the persona generation "
                    f"runs: personas.generation.enabled or personas.source generated)",
                    key="personas.generation.model",
                )
            for step in ("keywords", "instruction"):
                key = f"personas.generation.{step}_template"
                self.template(self.generation[f"{step}_template"], f"persona_{step}", key)
        self._check_imported()
        for study in self.studies:
            try:
                self.plans[study].check()
            except NothingToDo as exc:
                if self.asked_for(study):
                    raise
                # enabled by the shipped defaults only: this config gives it nothing to do
                self.config[study]["enabled"] = False
                self.skipped[study] = exc.message
        self._checked = True  # the studies that run are settled: which datasets need texts too
        for name in self.datasets:
            self._check_texts(name)
        for m in self.used_models:
            self._check_model_file(m)

    def _check_dataset(self, name: str) -> None:
        import codecs

        d, key = self.dataset(name), f"datasets.{name}"
        for k in ("qrels", "topics", "texts"):
            if d["source"] == "files" and not d.get(k) and k != "texts":  # texts: _check_texts
                raise InputError(f"source 'files' needs the {k} file", key=f"{key}.{k}")
            if d["source"] != "files" and d.get(k):
                raise InputError(
                    f"only read with source 'files' (this dataset's source is {d['source']!r})",
                    key=f"{key}.{k}",
                )
        for k in ("urls", "split"):
            if d.get(k) and d["source"] != "download":
                raise InputError(
                    f"only read with source 'download' (source is {d['source']!r})", key=f"{key}.{k}"
                )
        if d.get("docid_map") and d["format"] != "llmjudge":
            raise InputError(
                f"only read with format 'llmjudge' (format is {d['format']!r})", key=f"{key}.docid_map"
            )
        try:
            codecs.lookup(d.get("encoding") or "utf-8")
        except LookupError:
            raise InputError(f"unknown encoding {d.get('encoding')!r}", key=f"{key}.encoding") from None
        if d["source"] == "sample" and not (self.resources / "sample" / name).is_dir():
            bundled = sorted(p.name for p in (self.resources / "sample").iterdir() if p.is_dir())
            raise InputError(
                f"no bundled sample {name!r} in {self.resources / 'sample'} (bundled: "
                f"{bundled}); use source 'download' or 'files'",
                key=f"{key}.source",
            )

    def _check_texts(self, name: str) -> None:
        """Once the studies that run are known: a dataset some study reads the passages of has
        them (``source: files`` gives ``texts``; a download has the texts' URL). A dataset only
        imported judges label needs none."""
        d = self.dataset(name)
        if d["source"] == "files" and not d.get("texts"):
            readers = self.text_readers(name)
            if readers:
                what = "judged-text file (docid<TAB>passage, one line per qrels line)"
                if d["format"] == "llmjudge":
                    what = 'passage JSONL ({"docid", "doc"} per line)'
                why = [
                    f"{s} (live judges {', '.join(self.plans[s].models())})"
                    if self.plans[s].models()
                    # a study with no live judge that reads them: the ranking study's systems
                    else s
                    + (f" (its systems: ranking.runs.{name}.source: systems)" if s == "ranking" else "")
                    for s in readers
                ]
                raise InputError(
                    f"no passage texts, but {' and '.join(why)} read them: give the {what}, or "
                    "leave the dataset to imported judges only",
                    key=f"datasets.{name}.texts",
                )
        if d["source"] == "download":
            self.download_urls(name)

    def _check_model_file(self, name: str) -> None:
        """A local model's GGUF file exists (relative to the working directory, as the backend
        opens it); the default model's package is installed."""
        spec = self.config["models"][name]
        if not capabilities(spec["backend"]).runs_here:
            return
        if spec.get("model_path"):
            if not self.local(spec["model_path"]).is_file():
                raise InputError(
                    f"GGUF file {spec['model_path']} does not exist", key=f"models.{name}.model_path"
                )
            return
        from judgelab.llm.backends.local import default_model_path

        try:
            default_model_path()
        except InputError as exc:
            raise InputError(exc.message, key=f"models.{name}.model_path") from None

    @cached_property
    def known_persona_ids(self) -> list[str]:
        """Every persona id the config can name: the persona file's and the custom ones."""
        return list(load_persona_file(self.config["personas"]["file"], self.resources)) + [
            str(p) for p in self.config["personas"]["custom"]
        ]

    def _check_imported(self) -> None:
        for name, judge in self.imported.items():
            if judge.published:  # no persona condition: its one file is the persona `default`
                continue
            for i, p in enumerate(judge.personas):
                if p not in self.known_persona_ids:
                    raise InputError(
                        f"{p!r} is not a persona of the persona file or personas.custom "
                        f"(known: {self.known_persona_ids})",
                        key=f"imported_judges.{name}.personas[{i}]",
                    )
