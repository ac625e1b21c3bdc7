"""Snakemake adapter - perturbations: one variant's rewrites and their meaning check (dataset x variant)."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import rewrite_job

run(snakemake, rewrite_job)
