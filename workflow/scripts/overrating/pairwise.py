"""Snakemake adapter - overrating: one pairwise judgment job (dataset x model), both orders."""

from judgelab.project.runner import run
from judgelab.studies.overrating.jobs import pairwise_judge_job

run(snakemake, pairwise_judge_job)
