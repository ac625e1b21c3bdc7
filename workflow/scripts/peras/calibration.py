"""Snakemake adapter - PERAS: the calibration table and reliability diagrams of every judge job."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import calibration_job

run(snakemake, calibration_job)
