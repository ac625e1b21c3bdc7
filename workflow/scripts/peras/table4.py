"""Snakemake adapter - PERAS: Table 4 of the datasets it judges."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import table4_job

run(snakemake, table4_job)
