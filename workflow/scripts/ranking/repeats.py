"""Snakemake adapter - ranking: a live judge's pool labelled k times (peras.repeats), asked or drawn."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import repeats_pool_job

run(snakemake, repeats_pool_job)
