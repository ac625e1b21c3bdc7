"""Snakemake adapter - overrating: the metrics and transition matrix of one pointwise run."""

from judgelab.project.runner import run
from judgelab.studies.overrating.jobs import pointwise_metrics_job

run(snakemake, pointwise_metrics_job)
