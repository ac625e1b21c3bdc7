"""Snakemake adapter: the leaderboard (LLMJudge Table 3) over every dataset's correlations."""

from judgelab.project.runner import script_logging
from judgelab.studies.ranking.jobs import leaderboard_job

with script_logging(snakemake.log[0]):
    leaderboard_job(list(snakemake.input.correlations), dict(snakemake.output.items()))
