"""Snakemake adapter - normalise a dataset into one table and apply the configured subset."""

from judgelab.project.runner import run
from judgelab.project.stages import prepare_dataset_job

run(snakemake, prepare_dataset_job)
