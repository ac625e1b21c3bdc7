"""``results/provenance/{study}.tsv``: who answered every model-calling job of a study.

One row per job that calls a model (:meth:`StudyPlan.llm_jobs`, in the plan's order), read from
the answer table the job wrote (its first output: the judgments, labels, confidences, rewrites or
predictions): how many answers it holds, the model names the responses gave (``served_models``)
and whether every one is the configured model (``same_model``: the configured name, or that name
with a date or version stamp; :func:`judgelab.llm.judging.same_model`; the embedded model's file
name is recorded, not compared), the system fingerprints, the finish reasons with their counts,
how many answers were cut by the bound, the rules that read the labels, and the decoding
parameters the requests were sent with. A column the job's table does not keep (a table of a kind
that records no such field, or an answer cached before it was kept) reads ``not recorded``.

The job's param is :class:`ProvenanceSettings` (the jobs and their models: configured name and
backend), so the table is written again when a job's answers or the model entries change.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from judgelab.data.tables import read_tsv, truthy, write_tsv
from judgelab.llm.backends import capabilities
from judgelab.llm.judging import same_model
from judgelab.params import Settings

log = logging.getLogger(__name__)

#: What a column reads when the job's table does not keep the field.
NOT_RECORDED = "not recorded"

PROVENANCE_COLUMNS = [
    "study",
    "rule",
    "job",
    "model",
    "backend",
    "configured_model",
    "answers",
    "served_models",
    "same_model",
    "system_fingerprints",
    "finish_reasons",
    "truncated",
    "parse_rules",
    "decoding",
    "file",
]


@dataclass(frozen=True)
class ProvenanceJob(Settings):
    """One model-calling job: its rule, its wildcards (``dataset=...,model=...``, the job's name in
    the table), the model's key, its backend and the model name the entry configures (None for a
    local model: its file is in the manifest)."""

    rule: str
    job: str
    model: str
    backend: str | None = None
    configured_model: str | None = None


@dataclass(frozen=True)
class ProvenanceSettings(Settings):
    """The provenance job's param: the study and its model-calling jobs, in the order of the
    job's input files."""

    study: str
    jobs: tuple[ProvenanceJob, ...] = ()

    def __post_init__(self):
        # from a param, the jobs arrive as dicts
        jobs = tuple(j if isinstance(j, ProvenanceJob) else ProvenanceJob(**j) for j in self.jobs)
        object.__setattr__(self, "jobs", jobs)


def _answers(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``table`` that hold an answer (a confidence table lists the pairs not asked)."""
    if "asked" in table.columns:
        return table[truthy(table["asked"])]
    if "answer" in table.columns:
        return table[table["answer"].notna()]
    return table


def _distinct(table: pd.DataFrame, column: str) -> str:
    if column not in table.columns:
        return NOT_RECORDED
    values = sorted({str(v) for v in table[column].dropna()})
    return "; ".join(values) if values else NOT_RECORDED


def _counts(table: pd.DataFrame, column: str) -> str:
    if column not in table.columns:
        return NOT_RECORDED
    counts = table[column].dropna().astype(str).value_counts()
    return "; ".join(f"{k} {n}" for k, n in sorted(counts.items())) or NOT_RECORDED


def job_row(study: str, job: ProvenanceJob, table: pd.DataFrame, file: str) -> dict:
    """The provenance row of one job's answer table."""
    answers = _answers(table)
    served = _distinct(answers, "served_model")
    if served == NOT_RECORDED or capabilities(job.backend).runs_here or not job.configured_model:
        same: bool | None = None
    else:
        same = all(same_model(job.configured_model, name) for name in served.split("; "))
    return {
        "study": study,
        "rule": job.rule,
        "job": job.job,
        "model": job.model,
        "backend": job.backend,
        "configured_model": job.configured_model,
        "answers": len(answers),
        "served_models": served,
        "same_model": same,
        "system_fingerprints": _distinct(answers, "system_fingerprint"),
        "finish_reasons": _counts(answers, "finish_reason"),
        "truncated": int(truthy(answers["truncated"]).sum()) if "truncated" in answers.columns else None,
        "parse_rules": _counts(answers, "parse_rule"),
        "decoding": _distinct(answers, "decoding"),
        "file": file,
    }


def provenance_table(settings: ProvenanceSettings, files: Sequence[str]) -> pd.DataFrame:
    """One row per job of ``settings`` (:func:`job_row`), reading ``files`` (the jobs' answer
    tables, in the same order)."""
    if len(files) != len(settings.jobs):
        raise ValueError(f"{len(settings.jobs)} jobs but {len(files)} answer tables")
    rows = [job_row(settings.study, job, read_tsv(f, str), f) for job, f in zip(settings.jobs, files)]
    return pd.DataFrame(rows, columns=PROVENANCE_COLUMNS)


def provenance_job(settings: ProvenanceSettings, tables: Sequence[str], provenance: str) -> pd.DataFrame:
    """Write the study's provenance table (:func:`provenance_table`) and log the jobs answered
    by another model than the configured one (each job's own log said so already)."""
    out = provenance_table(settings, tables)
    write_tsv(out, provenance)
    other = out[out["same_model"].map(lambda v: v is False)]
    for row in other.itertuples(index=False):
        log.warning(
            "%s %s: answered by %s, not the configured %r",
            row.rule,
            row.job,
            row.served_models,
            row.configured_model,
        )
    log.info(
        "%s: %d model-calling jobs, %d answers; %d answered by another model than the configured one",
        settings.study,
        len(out),
        int(out["answers"].sum()),
        len(other),
    )
    return out
