"""Snakemake adapter: one tidy metrics table over all jobs."""
from judgelab.jobs import aggregate_job, script_logging

with script_logging(snakemake.log[0]):
    aggregate_job(list(snakemake.input), snakemake.output.table)
