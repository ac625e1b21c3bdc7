"""Snakemake adapter - ranking: the score scatter and the rank-rank plot of a dataset x judge x measure."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import figures_job

run(snakemake, figures_job)
