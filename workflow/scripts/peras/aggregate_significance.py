"""Snakemake adapter: one significance table, and the metrics table joined with it."""

from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import aggregate_significance_job

with script_logging(snakemake.log[0]):
    aggregate_significance_job(
        list(snakemake.input.tables),
        snakemake.input.metrics,
        snakemake.output.table,
        snakemake.output.joined,
        snakemake.output.html,
    )
