"""Snakemake adapter - ranking: the run each judge builds from the base run, ranked among a dataset's runs."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import circularity_job

run(snakemake, circularity_job)
