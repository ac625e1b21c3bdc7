"""Snakemake adapter - the judges' leaderboard (results/judges/leaderboard.*)."""

from judgelab.project.runner import run
from judgelab.project.standing import leaderboard_job

run(snakemake, leaderboard_job)
