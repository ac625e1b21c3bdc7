"""Snakemake adapter - the sensitivity study: each published judgment file against the human labels."""

from judgelab.project.runner import run
from judgelab.studies.sensitivity.jobs import agreement_job

run(snakemake, agreement_job)
