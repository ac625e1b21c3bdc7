"""Snakemake adapter - ranking: one live judge labels a dataset's pool (dataset x model)."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import judge_pool_job

run(snakemake, judge_pool_job)
