"""Snakemake adapter - sensitivity: each prompt's labels as qrels for the runs, tau against the human order."""

from judgelab.project.runner import run
from judgelab.studies.sensitivity.jobs import rankings_job

run(snakemake, rankings_job)
