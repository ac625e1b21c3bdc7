"""Snakemake adapter: load, check and split an evaluator set (simulation, seed 001)."""

from judgelab.project.runner import as_value, script_logging
from judgelab.studies.simulation.jobs import prepare_job

sel = as_value(snakemake.params.selection)
with script_logging(snakemake.log[0]):
    prepare_job(
        snakemake.input.source,
        sel["format"],
        snakemake.output.records,
        snakemake.output.splits,
        snakemake.output.evaluators,
        snakemake.output.report,
        pool=sel["pool"],
        validation=sel["validation"],
        seed=sel["seed"],
        split=sel["split"],
        group_by=sel["group_by"],
        balance_neutral=sel["balance_neutral"],
        min_neutral=sel["min_neutral"],
        evaluators=sel["evaluators"],
        task=sel["task"],
        name=snakemake.wildcards.dataset,
    )
