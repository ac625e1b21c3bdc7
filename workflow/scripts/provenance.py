"""Snakemake adapter - a study's provenance table (results/provenance/{study}.tsv)."""

from judgelab.project.provenance import provenance_job
from judgelab.project.runner import run

run(snakemake, provenance_job)
