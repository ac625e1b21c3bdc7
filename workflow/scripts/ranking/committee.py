"""Snakemake adapter - ranking: a committee judge's labels from its members' label files."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import committee_job

run(snakemake, committee_job)
