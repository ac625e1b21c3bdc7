"""Snakemake adapter - PERAS: Table 5 from the classifier groups."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import classifier_table_job

run(snakemake, classifier_table_job)
