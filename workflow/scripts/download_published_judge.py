"""Snakemake adapter - fetch a published judge's file (verified)."""

from judgelab.project.runner import run
from judgelab.project.stages import download_published_job

# the mirror is read here, not tracked as a param: moving it fetches nothing again
run(snakemake, download_published_job, mirror=(snakemake.config.get("published_judges") or {}).get("mirror"))
