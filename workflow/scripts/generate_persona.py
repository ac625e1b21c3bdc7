"""Snakemake adapter - the two-step persona generation (PERAS section 4.1)."""

from judgelab.project.runner import run
from judgelab.project.stages import generate_persona_job

run(snakemake, generate_persona_job)
