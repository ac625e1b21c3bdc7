"""Snakemake adapter - PERAS: the confidence follow-up of one judgment job."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import confidence_job

run(snakemake, confidence_job)
