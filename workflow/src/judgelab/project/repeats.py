"""A judge job asked k times (``peras.repeats``): the k labels of every pair, shared by the two
studies that repeat a judge - PERAS (its judge jobs' pairs) and the ranking study (its live
judges' pools, judged with PERAS's judges).

* a judge that reads its label from the logits makes no call: its k labels are drawn from each
  pair's label distribution (the judgment table's p0..p3) at the model's temperature, seeded by
  the sample index and the pair (:func:`judgelab.analysis.consistency.draw_label`), so the same
  pair draws the same labels in both studies;
* a judge that parses its answers asks samples 1..k-1 of every request (each cached on its own:
  a rerun, or a larger k, asks only the new samples; the same pair's sample is one cache entry in
  both studies); sample 0 is its judgment table's label.

The result is a repeats table (:data:`REPEAT_COLUMNS`), one row per pair x sample; its majority
is :func:`judgelab.analysis.consistency.majority` (the committee rule ``majority``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgelab.data.tables import ANSWER_COLUMNS, read_judgments
from judgelab.errors import InputError
from judgelab.llm.judge import Judge, JudgeSection
from judgelab.llm.session import JobContext

#: A repeats table: one row per pair x sample (0..k-1), with the answer columns of a judgment table
#: (who answered, how it was read and sent: the provenance table reads them); a label drawn from
#: the label distribution has ``parse_rule`` ``draw`` and no answer.
REPEAT_COLUMNS = [
    "dataset",
    "qid",
    "docid",
    "sample",
    "label",
    "parsed",
    "answer",
    "cache_hit",
    *ANSWER_COLUMNS,
]


def check_draws(section: JudgeSection, models: list[str], template: str, key: str) -> None:
    """A judge of ``section`` read from the logits draws its repeats at its model's temperature:
    with the section's repeats above 1 and a temperature of 0 (greedy) it would draw k copies of
    one label, an error naming the repeats' config ``key`` and the temperature's."""
    k = section.repeats or 1
    if k < 2:
        return
    for m in models:
        judge = section.judge(m, template)
        if judge.answer == "logits" and judge.temperature <= 0:
            raise InputError(
                f"judge {m!r} reads its label from the logits (peras.answer), so its {k} repeats "
                f"are draws from the label distribution at models.{m}.temperature, which is 0 "
                f"(every draw would be the top label); set models.{m}.temperature above 0, "
                f"peras.answer: parse, or {key}: 1",
                key=key,
            )


def drawn(judged: pd.DataFrame, judge: Judge, samples: int) -> pd.DataFrame:
    """A logits judge's k labels per pair, each drawn from the pair's label distribution (the
    judgment table's p0..p3) at the model's temperature, seeded by the sample index and the pair."""
    from judgelab.analysis.consistency import draw_label, pair_seed

    rows = []
    for r in judged.itertuples(index=False):
        probs = [r.p0, r.p1, r.p2, r.p3]
        seed = pair_seed(str(r.qid), str(r.docid))
        for s in range(samples):
            label = draw_label(probs, [int(x) for x in judge.labels], judge.temperature, s, seed)
            rows.append(
                {
                    "dataset": r.dataset,
                    "qid": r.qid,
                    "docid": r.docid,
                    "sample": s,
                    "label": label,
                    "parsed": label is not None,
                    "truncated": False,
                    "parse_rule": "draw" if label is not None else None,
                    "decoding": f"temperature={judge.temperature:g}",
                }
            )
    return pd.DataFrame(rows, columns=REPEAT_COLUMNS)


def asked(
    table: pd.DataFrame, judged: pd.DataFrame, judge: Judge, samples: int, context: JobContext
) -> pd.DataFrame:
    """A text judge's k labels per pair of ``table``: sample 0 the judge job's own (``judged``, its
    judgment table of the same pairs), samples 1..k-1 asked as requests of their own (cached: a
    rerun, or a larger k, asks only new samples)."""
    from judgelab.llm.judging import run_judgment_samples

    more = list(range(1, samples))
    with judge.session(context) as client:
        got = run_judgment_samples(table, judge, client, more, desc=context.desc)
    parts = [judged.assign(sample=0)] + [t.assign(sample=s) for s, t in zip(more, got)]
    return pd.concat([p.reindex(columns=REPEAT_COLUMNS) for p in parts], ignore_index=True)


def repeat_labels(
    table: pd.DataFrame,
    judged: pd.DataFrame,
    judge: Judge,
    samples: int,
    context: JobContext | None = None,
) -> pd.DataFrame:
    """The repeats table of ``judge`` (persona resolved) asked ``samples`` (k) times about the
    pairs of ``table`` whose judgment table is ``judged`` (one row per pair, the same pairs): drawn
    from the label distributions (a judge read from the logits: no call, no ``context``) or asked
    (one that parses: samples 1..k-1 through ``context``); by sample, labels Int64."""
    if len(judged) != len(table):
        raise ValueError(f"a judgment table of {len(judged)} pairs for {len(table)} pairs")
    if judge.answer == "logits":
        result = drawn(judged, judge, samples)
    elif context is None:
        raise ValueError("a judge that parses its answers asks its samples: the job needs a context")
    else:
        result = asked(table, judged, judge, samples, context)
    result["label"] = result["label"].astype("Int64")
    return result.sort_values(["sample"], kind="stable").reset_index(drop=True)


def sampling_note(judge: Judge, samples: int) -> str:
    """How a repeat job got its k labels, for its log line: ``k samples (drawn from the label
    distribution | asked, temperature t)``."""
    how = "drawn from the label distribution" if judge.answer == "logits" else "asked"
    return f"{samples} samples ({how}, temperature {judge.temperature:g})"


def read_repeats(path: str | Path) -> pd.DataFrame:
    """A repeats table (:data:`REPEAT_COLUMNS`) as a repeats job wrote it."""
    df = read_judgments(path)
    df["sample"] = df["sample"].astype(int)
    return df
