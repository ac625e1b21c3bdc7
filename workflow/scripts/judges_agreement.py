"""Snakemake adapter - one dataset's judges against the human grades and each other."""

from judgelab.project.runner import run
from judgelab.project.standing import agreement_job

run(snakemake, agreement_job)
