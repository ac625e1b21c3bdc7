"""Snakemake adapter - the sensitivity study: the pairs a dataset's live judges compare pairwise."""

from judgelab.project.runner import run
from judgelab.studies.sensitivity.jobs import pairs_job

run(snakemake, pairs_job)
