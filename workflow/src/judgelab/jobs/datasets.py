"""Dataset jobs: download the raw files of a public dataset; prepare one normalised table."""

from __future__ import annotations

import logging

import pandas as pd

from .. import datasets as ds
from ..tables import write_dataset
from . import as_value

log = logging.getLogger("judgelab")


def download_job(urls: str | dict, out: dict[str, str]) -> None:
    """Fetch the qrels, topics and texts of ``urls`` to the paths of ``out``."""
    ds.download_dataset(as_value(urls), out)


def prepare_dataset_job(name: str, qrels: str, topics: str, texts: str, selection: str | dict,
                        out: str) -> pd.DataFrame:
    full, table = ds.prepare_table(name, as_value(selection), qrels, topics, texts)
    log.info("%s: %d judged pairs, %d queries", name, len(full), full["qid"].nunique())
    log.info("%s after selection: %d pairs, %d queries, grades %s", name, len(table),
             table["qid"].nunique(), table["grade"].value_counts().sort_index().to_dict())
    write_dataset(table, out)
    return table
