"""Snakemake adapter - overrating: the calibration table and reliability diagrams of every
pointwise run."""

from judgelab.project.runner import run
from judgelab.studies.overrating.jobs import calibration_job

run(snakemake, calibration_job)
