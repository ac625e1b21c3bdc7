"""Snakemake adapter: the SEM sentences and insertions of one dataset."""

from judgelab.cache.store import CacheConfig
from judgelab.project.runner import script_logging
from judgelab.studies.perturbations.jobs import insertion_job

p = snakemake.params
with script_logging(snakemake.log[0]):
    insertion_job(
        list(snakemake.input.samples),
        snakemake.output.insertions,
        snakemake.output.sentences,
        variant="SEM",
        stopwords=p.stopwords,
        template=p.template,
        rewriter=p.rewriter or None,
        max_tokens=p.max_tokens,
        max_attempts=p.max_attempts,
        cache=CacheConfig.of(snakemake.config),
        threads=snakemake.threads,
        reviewed=snakemake.input.reviewed or None,
    )
