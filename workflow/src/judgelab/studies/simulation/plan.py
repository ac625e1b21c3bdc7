"""Evaluator simulation (seed 001, PersonaJudge): predicting one evaluator's three-way preference
judgments from that evaluator's own past judgments through a two-round cascade.

Config section ``simulation``; target ``simulation``; rules ``workflow/rules/simulation.smk`` and
``workflow/rules/simulation/``; jobs :mod:`judgelab.jobs.simulation`; library
:mod:`judgelab.simulation`; prompt ``resources/prompts/simulation/personajudge.yaml``.

The study's data are *evaluator sets* (``simulation.datasets``: per-evaluator preference
judgments, not the relevance datasets of the top-level ``datasets``); each is the ``dataset``
wildcard of its paths. A *cell* is evaluator set x model x demonstration type x shot count, one
prediction job each; the Base Judge is the cell of type ``base`` with 0 shots (one per model).
The demonstration types an evaluator set cannot support (J+IT needs telemetry on every record,
J+RR reasoning) are left out of the design with the reason, known before any job runs: the
``pandalm`` format carries judgments only; a ``jsonl`` file is read when the workflow starts.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterator
from dataclasses import asdict
from functools import cached_property
from pathlib import Path

from ...backends.base import Request
from ...errors import InputError
from .. import LLMJob, StudyPlan

log = logging.getLogger("judgelab")

#: Where a ``sample`` evaluator set's file lies under resources/sample/<name>/, by format.
SAMPLE_FILES = {"pandalm": "testset-v1.json", "jsonl": "records.jsonl"}
#: Extension of a downloaded file, by format.
RAW_EXT = {"pandalm": "json", "jsonl": "jsonl"}
#: PandaLM's ``testset-v1.json`` measured on the full file: items, annotators, mean characters
#: of the context (instruction + input), response 1 and response 2, and the label shares
#: A / N / B over the three annotators. It stands in, flagged approximate, when the file is not
#: downloaded yet.
PANDALM_SIZE = {
    "items": 999,
    "annotators": 3,
    "context": 260.4,
    "response_a": 196.9,
    "response_b": 186.8,
    "labels": {"A": 0.417, "N": 0.109, "B": 0.474},
}


class Plan(StudyPlan):
    name = "simulation"
    paths = {
        "simulation_raw": "{results}/simulation/{dataset}/download.{ext}",
        "simulation_records": "{results}/simulation/{dataset}/records.jsonl",
        "simulation_splits": "{results}/simulation/{dataset}/splits.tsv",
        "simulation_evaluators": "{results}/simulation/{dataset}/evaluators.tsv",
        "simulation_predictions": "{results}/simulation/{dataset}/predictions/{model}/{demo_type}/{shots}.tsv",
        "simulation_demos": "{results}/simulation/{dataset}/demos/{model}/{demo_type}/{shots}.tsv",
        "simulation_baselines": "{results}/simulation/{dataset}/baselines.tsv",
        "simulation_metrics": "{results}/simulation/{dataset}/metrics/{name}.tsv",
        "simulation_stats": "{results}/simulation/{dataset}/stats/{name}.tsv",
        "simulation_figure": "{results}/simulation/figures/{dataset}/{name}.{ext}",
        "simulation_table": "{results}/simulation/tables/{name}.{ext}",
    }

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

    def raw_file(self, d: str) -> str:
        """The downloaded file of a ``download`` evaluator set."""
        return self.project.path("simulation_raw", dataset=d, ext=RAW_EXT[self.sets[d]["format"]])

    def source_file(self, d: str) -> str:
        """The file the prepare job reads: the bundled sample, the configured path or the download."""
        s = self.sets[d]
        if s["source"] == "sample":
            return str(self.project.resources / "sample" / d / SAMPLE_FILES[s["format"]])
        if s["source"] == "files":
            return s["path"]
        return self.raw_file(d)

    def download_url(self, d: str) -> str:
        from .data import PANDALM_URL

        return self.sets[d].get("url") or PANDALM_URL

    def selection(self, d: str) -> dict:
        """What the prepare job does with the file (a tracked param): format, evaluators, split."""
        s = self.sets[d]
        return {
            "format": s["format"],
            "evaluators": list(s["evaluators"] or []),
            "pool": int(s["pool"]),
            "validation": int(s["validation"]),
            "split": s["split"],
            "seed": int(s["seed"]),
            "min_neutral": int(self.section["min_neutral"]),
        }

    # -- the design ---------------------------------------------------------------------------

    @property
    def demo_types(self) -> list[str]:
        return list(self.section["demo_types"])

    @property
    def shots(self) -> list[int]:
        return [int(k) for k in self.section["shots"]]

    @cached_property
    def _types(self) -> dict[str, tuple[list[str], dict[str, str]]]:
        from .data import DEMO_TYPES, load_records, plan_types

        out = {}
        for d, s in self.sets.items():
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
            else:
                path = self.source_file(d)
                if not Path(path).exists() and s["source"] == "download":
                    raise InputError(
                        f"the demonstration types it supports depend on the file's telemetry "
                        f"and reasoning, and {path} is not downloaded yet: run "
                        f"`snakemake {path}` first",
                        key=f"simulation.datasets.{d}.source",
                    )
                if not Path(path).exists():
                    raise InputError(
                        f"file {path} does not exist (a relative path is relative to the "
                        "working directory of the run)",
                        key=f"simulation.datasets.{d}.path",
                    )
                records = load_records(path, "jsonl")
                keep = set(s["evaluators"] or [])
                if keep:
                    records = [r for r in records if r.evaluator in keep]
                types, skipped = plan_types(wanted, records)
            out[d] = (types, skipped)
        return out

    def types(self, d: str) -> list[str]:
        """The demonstration types the evaluator set supports, in config order."""
        return self._types[d][0]

    def skipped(self, d: str) -> dict[str, str]:
        """The demonstration types left out, with the reason."""
        return self._types[d][1]

    def cells(self, d: str) -> list[dict]:
        """The cells of an evaluator set: a Base Judge per model, then model x type x shots."""
        from .cascade import BASE

        cells = [{"model": m, "demo_type": BASE, "shots": 0} for m in self.judges]
        cells += [
            {"model": m, "demo_type": t, "shots": k}
            for m in self.judges
            for t in self.types(d)
            for k in self.shots
        ]
        return cells

    def all_demo_types(self) -> list[str]:
        """Every value the ``demo_type`` wildcard takes (for its constraint)."""
        from .cascade import BASE
        from .data import DEMO_TYPES

        return [BASE, *DEMO_TYPES]

    # -- prompts and settings -----------------------------------------------------------------

    @cached_property
    def prompt(self):
        from .prompt import SimulationPrompt

        return SimulationPrompt.load(self.section["prompt"], self.project.resources)

    def prompt_param(self, d: str, demo_type: str) -> str:
        """The texts a cell's prompts use, as a deterministic string (a tracked param)."""
        return json.dumps(self.prompt.texts_for(self.sets[d]["task"], demo_type), sort_keys=True)

    def settings(self, d: str, model: str) -> dict:
        """The cascade settings of a cell, ``answer: auto`` resolved for the model (logits for the
        embedded model, parse for API models)."""
        from .cascade import CascadeSettings

        values = {
            "task": self.sets[d]["task"],
            "answer": self.section["answer"],
            "max_tokens": int(self.section["max_tokens"]),
            "seed": int(self.section["seed"]),
            "min_neutral": int(self.section["min_neutral"]),
        }
        return asdict(CascadeSettings.resolve(values, self.project.config["models"][model]))

    def settings_param(self, d: str, model: str) -> str:
        return json.dumps(self.settings(d, model), sort_keys=True)

    def coverage(self):
        """The coverage check of the predict jobs (:class:`judgelab.judging.Coverage`, a tracked
        param): the share of validation items with an answered (composed) label."""
        from ...judging import Coverage

        return Coverage(
            float(self.project.config["min_coverage"]),
            f"{self.section['prompt']} (simulation.prompt)",
            "simulation.max_tokens",
            "simulation.answer",
        )

    # -- the study's contract -----------------------------------------------------------------

    def check(self) -> None:
        models = self.project.config["models"]
        for i, m in enumerate(self.section.get("judges") or []):
            if m not in models:
                raise InputError(
                    f"{m!r} is not a key of `models` (known: {sorted(models)})", key=f"simulation.judges[{i}]"
                )
        for d, s in self.sets.items():
            key = f"simulation.datasets.{d}"
            if s["source"] == "sample" and not Path(self.source_file(d)).exists():
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
            for c in self.cells(d)
        ]

    def targets(self) -> list[str]:
        from .jobs import REPORT_FIGURES, REPORT_TABLES

        path = self.project.path
        out = [path("simulation_table", name=t, ext=e) for t in REPORT_TABLES for e in ("tsv", "md")]
        out += [
            path("simulation_figure", dataset=d, name=f, ext=e)
            for d in self.datasets
            for f in REPORT_FIGURES
            for e in ("png", "pdf")
        ]
        return out

    # -- the estimate -------------------------------------------------------------------------

    def estimate_data(self, d: str, ctx) -> tuple[list, object, bool]:
        """(records, splits, exact) of an evaluator set for ``judgelab estimate``: from a file
        given with ``--table NAME=PATH`` (in the set's format), the prepared records, the source
        file, or - PandaLM not downloaded yet - records of its known size (approximate)."""
        memo = ctx.memo.setdefault("simulation", {})
        if d in memo:
            return memo[d]
        from .data import load_records
        from .splits import make_splits

        s = self.sets[d]
        given = ctx.tables.get(d)
        prepared = ctx.directory / self.project.path("simulation_records", dataset=d)
        source = Path(self.source_file(d))
        source = source if source.is_absolute() else ctx.directory / source
        exact = True
        if given is not None:
            records, how = load_records(given, s["format"]), f"file {given}"
        elif prepared.exists():
            records, how = load_records(prepared, "jsonl"), f"prepared records {prepared}"
        elif source.exists():
            records, how = load_records(source, s["format"]), f"{s['source']} file {source}"
        elif s["format"] == "pandalm":
            records, exact = pandalm_stand_in(), False
            how = (
                f"not downloaded yet: PandaLM's known size ({PANDALM_SIZE['items']} items x "
                f"{PANDALM_SIZE['annotators']} annotators, typical lengths and label shares)"
            )
        else:
            raise InputError(
                f"{source} is not downloaded yet; download it or pass --table {d}=PATH",
                key=f"simulation.datasets.{d}",
            )
        keep = set(s["evaluators"] or [])
        if keep:
            records = [r for r in records if r.evaluator in keep]
        splits = make_splits(
            records,
            pool=int(s["pool"]),
            validation=int(s["validation"]),
            seed=int(s["seed"]),
            mode=s["split"],
        )
        if exact:
            ctx.notes.append(f"simulation {d}: {len(records):,} records from {how}")
        else:
            ctx.approximate(d, f"simulation {d}: {len(records):,} records, {how}")
        memo[d] = (records, splits, exact)
        return memo[d]

    def requests(self, job, ctx) -> Iterator[tuple[str, Request, bool]]:
        """Round 1 of every evaluator that is not direction-only; round 2 where round 1 says
        preference - known where the round-1 answer is cached, elsewhere counted as asked (an
        upper bound) - and for every item of a direction-only evaluator. A request the job sends
        twice (the Base Judge's prompt does not depend on the evaluator) is answered once: the
        repeat counts as cached."""
        from ...backends.base import Completion
        from .cascade import CascadeSettings, build_requests, plan_evaluators, read_rating
        from .cascade import __name__ as cascade_name
        from .prompt import SimulationPrompt

        w = job.wc
        d, model, demo_type, shots = w["dataset"], job.model, w["demo_type"], int(w["shots"])
        records, splits, exact = self.estimate_data(d, ctx)
        settings = CascadeSettings(**self.settings(d, model))
        prompt = SimulationPrompt.from_mapping(json.loads(self.prompt_param(d, demo_type)), "<prompt>")
        quiet = logging.getLogger(cascade_name)  # draw imbalances go to the job's log, not here
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            plans, _ = plan_evaluators(records, splits, shots=shots, demo_type=demo_type, settings=settings)
        finally:
            quiet.setLevel(level)
        seen: dict[tuple, str | None] = {}  # request -> its round-1 rating ("?" unknown)
        second: set[tuple[str, str]] = set()
        unknown: set[tuple[str, str]] = set()
        for key, req in build_requests(plans, prompt, 1, demo_type, settings):
            rkey = (req.messages, req.max_tokens, req.label_tokens)
            if rkey in seen:
                rating, cached = seen[rkey], True
            else:
                hit = ctx.cached(model, req) if exact else None
                cached = hit is not None
                rating = read_rating(Completion.from_json(hit), settings.answer)[0] if hit else "?"
                seen[rkey] = rating
            yield "simulation", req, cached
            if rating == "?":
                unknown.add(key)
            elif rating == "2":
                second.add(key)
        second |= {(p.evaluator, r.item) for p in plans if p.direction_only for r in p.validation}
        sent: set[tuple] = set()
        for key, req in build_requests(plans, prompt, 2, demo_type, settings, second | unknown):
            rkey = (req.messages, req.max_tokens, req.label_tokens)
            cached = rkey in sent or (key not in unknown and exact and ctx.cached(model, req) is not None)
            sent.add(rkey)
            yield "simulation", req, cached


def pandalm_stand_in() -> list:
    """Records shaped like PandaLM's full test set (:data:`PANDALM_SIZE`): distinct items of the
    typical lengths, each annotator's labels drawn with the measured shares (seeded)."""
    from .data import Record

    size = PANDALM_SIZE
    rng = random.Random(0)
    labels, weights = list(size["labels"]), list(size["labels"].values())
    out = []
    for i in range(size["items"]):
        context = f"{i} " + "x" * round(size["context"])
        for k in range(1, size["annotators"] + 1):
            out.append(
                Record(
                    f"annotator{k}",
                    str(i),
                    context,
                    "x" * round(size["response_a"]),
                    "x" * round(size["response_b"]),
                    rng.choices(labels, weights)[0],
                )
            )
    return out
