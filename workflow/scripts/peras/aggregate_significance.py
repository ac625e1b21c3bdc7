"""Snakemake adapter - PERAS: every group's comparisons, joined to the metrics."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import aggregate_significance_job

run(snakemake, aggregate_significance_job)
