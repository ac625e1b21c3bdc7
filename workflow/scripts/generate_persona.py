"""Snakemake adapter: two-step persona generation (seed 000 section 4.1)."""

from judgelab.cache.store import CacheConfig
from judgelab.project.runner import script_logging
from judgelab.project.stages import generate_persona_job

with script_logging(snakemake.log[0]):
    generate_persona_job(
        snakemake.output.persona,
        personality_type=snakemake.params.personality_type,
        keywords_template=snakemake.params.keywords_template,
        instruction_template=snakemake.params.instruction_template,
        model=snakemake.params.model,
        max_tokens=snakemake.params.max_tokens,
        cache=CacheConfig.of(snakemake.config),
        threads=snakemake.threads,
        model_name=snakemake.wildcards.model,
    )
