"""Snakemake adapter - ranking: the score scatter of a dataset x judge x measure with the judge-built run marked."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import circularity_figure_job

run(snakemake, circularity_figure_job)
