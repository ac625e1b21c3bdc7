"""Snakemake adapter: one judge re-judging one variant (dataset x variant x judge)."""

from judgelab.cache.store import CacheConfig
from judgelab.project.runner import script_logging
from judgelab.studies.perturbations.jobs import rejudge_job

p = snakemake.params
with script_logging(snakemake.log[0]):
    rejudge_job(
        snakemake.input.sample,
        snakemake.input.variants,
        snakemake.output.rejudged,
        variant=snakemake.wildcards.variant,
        original=p.original,
        persona=p.persona,
        persona_file=snakemake.input.persona or None,
        template=p.template,
        labels=p.labels,
        model=p.model,
        max_tokens=p.max_tokens,
        answer=p.answer,
        placement=p.placement,
        cache=CacheConfig.of(snakemake.config),
        threads=snakemake.threads,
        coverage=p.coverage,
        rewrites=list(snakemake.input.rewrites),
        rewrite_filter=p.rewrite_filter,
        model_name=snakemake.wildcards.model,
    )
