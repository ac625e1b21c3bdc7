"""Snakemake adapter - perturbations: the attack table of one dataset."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import attacks_job

run(snakemake, attacks_job)
