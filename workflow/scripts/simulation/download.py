"""Snakemake adapter - simulation (PersonaJudge): download an evaluator set's file."""

from judgelab.project.runner import run
from judgelab.studies.simulation.jobs import download_job

run(snakemake, download_job)
