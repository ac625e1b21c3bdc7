"""Snakemake adapter - perturbations: transitions, shifts and kept fractions of a dataset's rewrites."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import transitions_job

run(snakemake, transitions_job)
