"""Snakemake adapter - PERAS: one judgment job (dataset x model x template x persona)."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import judge_job

run(snakemake, judge_job)
