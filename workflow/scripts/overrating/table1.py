"""Snakemake adapter - overrating: the paper's Table 1 from every pointwise run's metrics."""

from judgelab.project.runner import run
from judgelab.studies.overrating.jobs import table1_job

run(snakemake, table1_job)
