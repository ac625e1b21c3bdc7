"""Snakemake adapter: one judge re-judging one variant (dataset x variant x judge)."""

from judgelab.jobs import CacheConfig, script_logging
from judgelab.studies.perturbations.jobs import rejudge_job

p = snakemake.params
with script_logging(snakemake.log[0]):
    rejudge_job(
        snakemake.input.sample,
        snakemake.input.variants,
        snakemake.output.rejudged,
        variant=snakemake.wildcards.variant,
        persona=p.persona,
        persona_file=snakemake.input.persona or None,
        template=p.template,
        model=p.model,
        max_tokens=p.max_tokens,
        placement=p.placement,
        cache=CacheConfig.of(snakemake.config),
        threads=snakemake.threads,
    )
