"""Snakemake adapter - perturbations: the LEX or QRY insertions of one dataset (no model)."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import insertion_job

run(snakemake, insertion_job)
