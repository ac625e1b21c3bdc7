"""Snakemake adapter: label distributions and counts of one dataset's insertions."""

from judgelab.project.runner import script_logging
from judgelab.studies.perturbations.jobs import distributions_job

with script_logging(snakemake.log[0]):
    distributions_job(
        list(snakemake.input.rejudged),
        list(snakemake.input.insertions),
        snakemake.output.distributions,
        snakemake.output.counts,
    )
