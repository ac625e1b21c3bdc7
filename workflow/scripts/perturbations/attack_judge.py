"""Snakemake adapter - perturbations: one judge judging one attack (clean: none) with one template."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import attack_judge_job

run(snakemake, attack_judge_job)
