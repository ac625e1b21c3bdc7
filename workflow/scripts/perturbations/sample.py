"""Snakemake adapter: one judge's perturbation sample (dataset x judge)."""

from judgelab.project.runner import script_logging
from judgelab.studies.perturbations.jobs import sample_job

with script_logging(snakemake.log[0]):
    sample_job(
        snakemake.input.pairs,
        snakemake.input.judgments,
        snakemake.output.sample,
        judge=snakemake.wildcards.model,
        per_label=snakemake.params.per_label,
        seed=snakemake.params.seed,
    )
