"""Snakemake adapter - the sensitivity study: one live pairwise judge job (dataset x model x prompt),
every pair in both orders."""

from judgelab.project.runner import run
from judgelab.studies.sensitivity.jobs import pairwise_judge_job

run(snakemake, pairwise_judge_job)
