"""Snakemake adapter - ranking: the mean-difference (Bland-Altman) figure of a dataset x judge."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import bland_altman_figure_job

run(snakemake, bland_altman_figure_job)
