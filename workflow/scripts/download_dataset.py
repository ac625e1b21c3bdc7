"""Snakemake adapter: download a dataset's raw files."""
import json

from judgelab.datasets import download_dataset
from judgelab.jobs import script_logging

with script_logging(snakemake.log[0]):
    download_dataset(json.loads(snakemake.params.urls), dict(snakemake.output.items()))
