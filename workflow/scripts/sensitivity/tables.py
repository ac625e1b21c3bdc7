"""Snakemake adapter - the sensitivity study: spread over prompts, human vs LLM prompts, figure."""

from judgelab.project.runner import run
from judgelab.studies.sensitivity.jobs import tables_job

run(snakemake, tables_job)
