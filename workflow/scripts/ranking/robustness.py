"""Snakemake adapter - ranking: the robustness table per judge (agreement, attacks, circularity)."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import robustness_job

run(snakemake, robustness_job)
