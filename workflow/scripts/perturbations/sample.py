"""Snakemake adapter - perturbations: one judge's sample (dataset x judge)."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import sample_job

run(snakemake, sample_job)
