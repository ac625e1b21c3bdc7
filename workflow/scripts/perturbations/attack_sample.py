"""Snakemake adapter - perturbations: the attacked passages of one dataset (no model)."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import attack_sample_job

run(snakemake, attack_sample_job)
