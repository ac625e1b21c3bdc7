"""Snakemake adapter - overrating: one pointwise judgment job (dataset x model x scale)."""

from judgelab.project.runner import run
from judgelab.studies.overrating.jobs import pointwise_judge_job

run(snakemake, pointwise_judge_job)
