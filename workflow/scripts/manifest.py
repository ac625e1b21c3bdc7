"""Snakemake adapter - the run's manifest (results/manifest.json)."""

from judgelab.project.manifest import manifest_job
from judgelab.project.runner import run

run(snakemake, manifest_job)
