"""Snakemake adapter - PERAS: the RQ3 classifiers of one group."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import classifier_job

run(snakemake, classifier_job)
