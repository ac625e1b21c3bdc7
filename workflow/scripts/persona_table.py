"""Snakemake adapter - the table of persona texts a run uses."""

from judgelab.project.runner import run
from judgelab.project.stages import persona_table_job

run(snakemake, persona_table_job)
