"""Snakemake adapter - ranking: the calibration table and reliability diagrams of every dataset x
judge's pool labels."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import calibration_job

run(snakemake, calibration_job)
