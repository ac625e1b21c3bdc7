"""Snakemake adapter - PERAS: one judge job asked peras.repeats times (self-consistency)."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import repeats_job

run(snakemake, repeats_job)
