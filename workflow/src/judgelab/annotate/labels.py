"""Using the labels ``judgelab annotate serve`` collected: one or several annotators' TREC qrels
files read as one set of human labels, and the pairs file ``judgelab annotate choose`` wrote with
its inclusion probabilities.

**Merging annotators** (:func:`read_annotated`): the files are read in the order given and a pair's
label is the *first* file's that labels it (the first annotator's label; the others fill the pairs
it left). Listing the files is choosing the order: put the annotator you trust most first. Each
file is a graded TREC qrels file (``qid 0 docid label``, labels 0-3, what ``serve`` writes with its
default UMBRELA scale); a malformed line, a label outside 0-3 or a pair one file labels twice
differently is an error naming the file and line. A file with no label yet is allowed (an
annotator who has not started), but not all of them.

**The chosen pairs** (:func:`read_chosen`): the file of :data:`judgelab.annotate.choose.CHOSEN_COLUMNS`,
one row per pair; per topic its ``topic_inclusion`` (the probability that the topic was chosen).
With equal probabilities (``random``) the topics an annotator finished are a uniform sample and the
plain prediction-powered estimate applies; with unequal ones (``stratified``) an estimate must
weight by them (:func:`uniform_inclusion` says which).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgelab.annotate.choose import CHOSEN_COLUMNS
from judgelab.data.readers import read_qrels, unique_pairs
from judgelab.data.tables import read_tsv
from judgelab.errors import InputError

#: Columns of :func:`read_annotated`: the pair, its label and the file (annotator) it came from.
ANNOTATED_COLUMNS = ["qid", "docid", "relevance", "annotator"]

#: How :func:`read_annotated` merges several files, as the tables and logs name it.
MERGE_RULE = "first file listed that labels the pair"


def annotator_name(path: str | Path) -> str:
    """An annotator's name from their qrels file (``labels/ana.qrels`` -> ``ana``)."""
    name = Path(path).name
    return name[: -len(".qrels")] if name.endswith(".qrels") else name


def read_annotated(paths: Sequence[str | Path], key: str) -> pd.DataFrame:
    """The labels of the annotators' qrels ``paths`` merged by :data:`MERGE_RULE`
    (:data:`ANNOTATED_COLUMNS`, in the order the pairs were first read). ``key``: the config key
    listing the files, named when none of them holds a label."""
    if not paths:
        raise InputError("no annotated qrels file listed", key=key)
    parts = []
    for path in paths:
        lines, _ = unique_pairs(read_qrels(path), path)
        parts.append(
            pd.DataFrame(
                {
                    "qid": [x.qid for x in lines],
                    "docid": [x.docid for x in lines],
                    "relevance": [int(x.grade) for x in lines],
                    "annotator": annotator_name(path),
                },
                columns=ANNOTATED_COLUMNS,
            )
        )
    merged = pd.concat(parts, ignore_index=True).drop_duplicates(["qid", "docid"], keep="first")
    if merged.empty:
        raise InputError(
            f"none of the annotated qrels files ({', '.join(str(p) for p in paths)}) holds a label yet",
            key=key,
        )
    return merged.astype({"qid": str, "docid": str, "relevance": int}).reset_index(drop=True)


def covered_topics(annotated: pd.DataFrame, topics: Sequence[str], key: str, dataset: str) -> list[str]:
    """The topics of ``topics`` (a dataset's) that ``annotated`` labels, in the dataset's order; none
    is an error naming ``key`` (a file of another dataset, or of no topic of this one)."""
    labelled = set(annotated["qid"])
    covered = [str(t) for t in topics if str(t) in labelled]
    if not covered:
        shown = ", ".join(sorted(labelled)[:5]) + (", ..." if len(labelled) > 5 else "")
        raise InputError(
            f"the annotated labels cover no topic of dataset {dataset} (they label the topics {shown}; "
            f"the dataset has {len(topics)}): a file of another dataset?",
            key=key,
        )
    return covered


def read_chosen(path: str | Path) -> pd.DataFrame:
    """The pairs file of ``judgelab annotate choose`` (:data:`CHOSEN_COLUMNS`; ids as strings, the
    inclusion probabilities as floats); a missing column is an error naming the file."""
    table = read_tsv(path, {"qid": str, "docid": str, "query": str, "passage": str, "strategy": str})
    missing = [c for c in CHOSEN_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(
            f"not a pairs file of `judgelab annotate choose`: no column {', '.join(missing)}",
            path=str(path),
        )
    for c in ("topic_inclusion", "pair_inclusion"):
        values = pd.to_numeric(table[c], errors="coerce")
        bad = values.isna() | (values <= 0) | (values > 1)
        if bad.any():
            raise InputError(
                f"{c} {table[c].iloc[int(bad.to_numpy().argmax())]!r} is not a probability in (0, 1]",
                path=str(path),
                line=int(bad.to_numpy().argmax()) + 2,
            )
        table[c] = values.astype(float)
    return table[CHOSEN_COLUMNS]


def uniform_inclusion(chosen: pd.DataFrame, topics: Sequence[str]) -> bool:
    """Whether ``topics`` were chosen with equal probabilities (their ``topic_inclusion`` in
    ``chosen``, to 1e-12)."""
    p = chosen.drop_duplicates("qid").set_index("qid")["topic_inclusion"].reindex(list(topics))
    return bool(p.notna().all() and (p.max() - p.min()) <= 1e-12)
