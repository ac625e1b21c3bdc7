"""Snakemake adapter - overrating: the outcomes and rates of one pairwise run."""

from judgelab.project.runner import run
from judgelab.studies.overrating.jobs import pairwise_metrics_job

run(snakemake, pairwise_metrics_job)
