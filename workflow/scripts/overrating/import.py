"""Snakemake adapter - overrating: an imported judge's qrels file -> the pointwise table (no LLM call)."""

from judgelab.project.runner import run
from judgelab.studies.overrating.jobs import imported_pointwise_job

run(snakemake, imported_pointwise_job)
