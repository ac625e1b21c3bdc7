"""Snakemake adapter - simulation (PersonaJudge): the tables over all evaluator sets."""

from judgelab.project.runner import run
from judgelab.studies.simulation.jobs import tables_job

run(snakemake, tables_job)
