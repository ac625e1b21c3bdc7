"""Snakemake adapter - perturbations: one judge re-judging one variant (dataset x variant x judge)."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import rejudge_job

run(snakemake, rejudge_job)
