"""Snakemake adapter - simulation (PersonaJudge): the statistics of an evaluator set."""

from judgelab.project.runner import run
from judgelab.studies.simulation.jobs import stats_job

run(snakemake, stats_job)
