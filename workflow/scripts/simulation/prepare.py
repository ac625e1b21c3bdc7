"""Snakemake adapter - simulation (PersonaJudge): load, check and split an evaluator set."""

from judgelab.project.runner import run
from judgelab.studies.simulation.jobs import prepare_job

run(snakemake, prepare_job)
