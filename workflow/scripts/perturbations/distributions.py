"""Snakemake adapter - perturbations: label distributions and counts of one dataset's insertions."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import distributions_job

run(snakemake, distributions_job)
