"""Snakemake adapter - simulation (PersonaJudge): Figure 3, the evaluators who judged two tasks."""

from judgelab.project.runner import run
from judgelab.studies.simulation.jobs import cross_task_figure_job

run(snakemake, cross_task_figure_job)
