"""Snakemake adapter: one confidence job (seed 000 Appendix A)."""

from judgelab.cache.store import CacheConfig
from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import confidence_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    confidence_job(
        snakemake.input.pairs,
        snakemake.input.judgments,
        snakemake.output.confidence,
        persona=snakemake.params.persona,
        persona_file=snakemake.input.persona or None,
        template=snakemake.params.template,
        model=snakemake.params.model,
        max_tokens=snakemake.params.max_tokens,
        placement=snakemake.params.placement,
        cache=CacheConfig.of(snakemake.config),
        threads=snakemake.threads,
        desc=f"confidence {w.dataset}/{w.model}/{w.template}/{w.persona}",
        model_name=w.model,
    )
