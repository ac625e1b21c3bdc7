"""Snakemake adapter - PERAS: an imported judge's file as judgment and confidence tables."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import import_job

run(snakemake, import_job)
