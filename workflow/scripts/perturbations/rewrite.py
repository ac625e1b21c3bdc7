"""Snakemake adapter: the rewrites of one variant with their meaning check (dataset x variant)."""

from judgelab.cache.store import CacheConfig
from judgelab.project.runner import script_logging
from judgelab.studies.perturbations.jobs import rewrite_job

p = snakemake.params
with script_logging(snakemake.log[0]):
    rewrite_job(
        list(snakemake.input.samples),
        snakemake.output.rewrites,
        variant=snakemake.wildcards.variant,
        template=p.template,
        check_template=p.check_template,
        rewriter=p.rewriter,
        checker=p.checker,
        max_tokens=p.max_tokens,
        check_max_tokens=p.check_max_tokens,
        cache=CacheConfig.of(snakemake.config),
        threads=snakemake.threads,
    )
