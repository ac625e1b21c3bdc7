"""Snakemake adapter - overrating: the paper's Table 2 (pooled and per setting)."""

from judgelab.project.runner import run
from judgelab.studies.overrating.jobs import table2_job

run(snakemake, table2_job)
