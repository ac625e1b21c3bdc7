"""Snakemake adapter - the sensitivity study: one live judge job (dataset x model x prompt x type)."""

from judgelab.project.runner import run
from judgelab.studies.sensitivity.jobs import judge_job

run(snakemake, judge_job)
