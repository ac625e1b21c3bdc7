"""Snakemake adapter - perturbations: the SEM sentences and insertions of one dataset."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import insertion_job

run(snakemake, insertion_job)
