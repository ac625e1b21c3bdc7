"""Snakemake adapter: the sampled Best/Acceptable/Unacceptable pairs of a dataset."""

from judgelab.project.runner import as_value, script_logging
from judgelab.studies.overrating.jobs import pair_sampling_job

with script_logging(snakemake.log[0]):
    pair_sampling_job(snakemake.input.pairs, snakemake.output.pairs, **as_value(snakemake.params.sampling))
