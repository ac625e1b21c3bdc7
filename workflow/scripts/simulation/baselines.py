"""Snakemake adapter - simulation (PersonaJudge): the reference predictors of an evaluator set."""

from judgelab.project.runner import run
from judgelab.studies.simulation.jobs import baselines_job

run(snakemake, baselines_job)
