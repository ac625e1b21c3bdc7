"""Snakemake adapter - ranking: Kendall's tau against the dollars per 1,000 judgments of each judge."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import cost_figure_job

run(snakemake, cost_figure_job)
