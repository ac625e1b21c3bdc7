"""Snakemake adapter - the sensitivity study: fetch the published files (verified)."""

from judgelab.project.runner import run
from judgelab.studies.sensitivity.jobs import download_job

# the mirror is read here, not tracked as a param: moving it fetches nothing again
run(snakemake, download_job, mirror=snakemake.config["sensitivity"]["published"].get("mirror"))
