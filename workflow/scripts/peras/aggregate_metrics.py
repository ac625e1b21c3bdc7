"""Snakemake adapter - PERAS: every group's metrics in one table."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import aggregate_metrics_job

run(snakemake, aggregate_metrics_job)
