"""Snakemake adapter - simulation (PersonaJudge): one cell (evaluator set x model x demonstration
type x shots), the two-round cascade of its judge."""

from judgelab.project.runner import run
from judgelab.studies.simulation.jobs import predict_job

run(snakemake, predict_job)
