"""Snakemake adapter - PERAS: a committee's judgment and confidence tables from its members'."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import committee_job

run(snakemake, committee_job)
