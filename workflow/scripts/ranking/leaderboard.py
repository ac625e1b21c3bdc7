"""Snakemake adapter - ranking: the leaderboard (LLMJudge Table 3) over every dataset's correlations."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import leaderboard_job

run(snakemake, leaderboard_job)
