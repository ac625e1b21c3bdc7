"""Snakemake adapter - PERAS: the metrics of one dataset x model x template (one row per persona)."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import group_metrics_job

run(snakemake, group_metrics_job)
