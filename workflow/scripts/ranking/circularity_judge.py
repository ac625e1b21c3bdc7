"""Snakemake adapter - ranking: a live judge labels the base run below the pool (circularity depth > pool_depth)."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import circularity_judge_job

run(snakemake, circularity_judge_job)
