"""Snakemake adapter - perturbations: every dataset's transition and distribution tables pooled."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import pooled_job

run(snakemake, pooled_job)
