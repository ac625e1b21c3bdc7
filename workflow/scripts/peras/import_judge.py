"""Snakemake adapter: an imported judge's file -> judgment and confidence tables."""

from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import import_job

with script_logging(snakemake.log[0]):
    import_job(
        snakemake.input.pairs,
        snakemake.input.judge,
        snakemake.output.judgments,
        snakemake.output.confidence,
        scale=snakemake.params.scale or None,
        confidence_scale=snakemake.params.confidence_scale or None,
        source={"qrels": snakemake.input.qrels, "topics": snakemake.input.topics},
        encoding=snakemake.params.encoding,
        out_summary=snakemake.output.summary,
        ids={k: snakemake.wildcards[k] for k in ("dataset", "model", "template", "persona")},
    )
