"""Snakemake adapter - PERAS: the self-consistency table of every repeated judge job."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import consistency_job

run(snakemake, consistency_job)
