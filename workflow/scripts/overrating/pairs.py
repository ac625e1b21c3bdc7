"""Snakemake adapter - overrating: the sampled Best/Acceptable/Unacceptable pairs of a dataset."""

from judgelab.project.runner import run
from judgelab.studies.overrating.jobs import pair_sampling_job

run(snakemake, pair_sampling_job)
