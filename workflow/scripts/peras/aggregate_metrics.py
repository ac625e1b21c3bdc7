"""Snakemake adapter: one tidy metrics table over all jobs."""

from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import aggregate_metrics_job

with script_logging(snakemake.log[0]):
    aggregate_metrics_job(list(snakemake.input), snakemake.output.table)
