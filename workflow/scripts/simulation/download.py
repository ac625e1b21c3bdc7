"""Snakemake adapter: download an evaluator set's file (simulation, seed 001)."""

from judgelab.project.runner import script_logging
from judgelab.studies.simulation.jobs import download_job

with script_logging(snakemake.log[0]):
    download_job(snakemake.params.url, snakemake.output.raw, snakemake.params.format)
