"""Snakemake adapter: the transition and distribution tables of every dataset pooled."""

from judgelab.project.runner import script_logging
from judgelab.studies.perturbations.jobs import pooled_job

with script_logging(snakemake.log[0]):
    pooled_job(
        list(snakemake.input.transitions),
        list(snakemake.input.distributions),
        snakemake.output.transitions,
        snakemake.output.distributions,
    )
