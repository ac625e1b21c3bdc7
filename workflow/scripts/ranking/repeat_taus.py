"""Snakemake adapter - ranking: each repeat's tau, their spread and the majority's tau, per dataset."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import repeat_taus_job

run(snakemake, repeat_taus_job)
