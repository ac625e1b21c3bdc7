"""Snakemake adapter: classifiers on persona features of one model x template (seed 000 RQ3)."""

from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import classifier_job

with script_logging(snakemake.log[0]):
    classifier_job(
        snakemake.input.pairs,
        list(snakemake.input.judgments),
        list(snakemake.input.confidence),
        list(snakemake.params.personas),
        snakemake.params.settings,
        out_features=snakemake.output.features,
        out_trials=snakemake.output.trials,
        out_summary=snakemake.output.summary,
        out_missing=snakemake.output.missing,
    )
