"""Pairwise judging ("When LLM Judges Inflate Scores", section 2.1): Best / Acceptable /
Unacceptable groups per query, the sampled pairs of each setting, both orders judged with a forced
choice, and their outcomes. The pairs in both orders, their requests and the orders combined per
pair are the core's (:mod:`judgelab.llm.pairwise`, which the prompt-sensitivity study judges its
pairwise prompts with too); here the sampling, the confidence readings and the metrics.
"""

from __future__ import annotations

import logging
import math
import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.data.tables import truthy
from judgelab.errors import InputError
from judgelab.llm.backends.base import Request
from judgelab.llm.client import CachedClient
from judgelab.llm.judge import Judge
from judgelab.llm.pairwise import (
    CHOICE_COLUMNS,
    ORDER_COLUMNS,
    choice_requests,
    pairwise_jobs,
    position_counts,
    preferred,
)
from judgelab.llm.readings import READING_COLUMNS, Prompt, prob_columns, reading_cells, typed_readings
from judgelab.studies.overrating.prompts import PAIRWISE_KIND

log = logging.getLogger(__name__)


SETTINGS = ("B-A", "A-U", "B-U")


GROUP_NAMES = {"B": "Best", "A": "Acceptable", "U": "Unacceptable"}


#: the pairwise confidence threshold of When LLM Judges Inflate Scores, section 2.3 ("exceeded 0.95
#: on both orderings")
HIGH_CONFIDENCE = 0.95


PAIRWISE_COLUMNS = [*CHOICE_COLUMNS, "label_pos"]


def pairwise_columns(labels: Sequence[str]) -> list[str]:
    return PAIRWISE_COLUMNS + prob_columns(labels) + READING_COLUMNS


def pairwise_requests(items: Sequence[dict], prompt: Prompt, *, max_tokens: int) -> list[Request]:
    """One request per judgment of :func:`pairwise_jobs` (a pair in one order): the template
    filled with the query, Passage 1 and Passage 2 (no persona), asking for the label steps of
    the prompt's two labels."""
    if len(prompt.labels) != 2:
        raise InputError(
            f"a pairwise prompt needs two labels (Passage 1, Passage 2), got {list(prompt.labels)}",
            key="overrating.pairwise.template",
        )
    return choice_requests(
        items, prompt.template, prompt.labels, max_tokens=max_tokens, names=("passage_a", "passage_b")
    )


def run_pairwise(
    pairs: pd.DataFrame,
    sampled: pd.DataFrame,
    prompt: Prompt,
    client: CachedClient,
    *,
    max_tokens: int,
    progress: bool = True,
    desc: str = "pairwise",
) -> pd.DataFrame:
    """Judge every sampled pair in both orders (forced choice: label ``labels[0]`` = Passage 1,
    ``labels[1]`` = Passage 2); ``preferred`` says whether the choice is the higher-group passage
    (``hi``) or the lower (``lo``), missing when the answer did not parse."""
    items = pairwise_jobs(pairs, sampled)
    requests = pairwise_requests(items, prompt, max_tokens=max_tokens)
    answers = client.run(requests, desc=desc, progress=progress)
    rows = []
    for x, req, (comp, hit) in zip(items, requests, answers):
        cells = reading_cells(
            comp, prompt.labels, pairwise=True, max_tokens=max_tokens, decoding=client.decoding(req)
        )
        side = preferred(x, cells["label"], cells["parsed"], prompt.labels)
        rows.append({k: x[k] for k in ORDER_COLUMNS} | cells | {"preferred": side, "cache_hit": hit})
    out = typed_readings(pd.DataFrame(rows, columns=pairwise_columns(prompt.labels)), prompt.labels)
    log.info(
        "%s: %d pairs x 2 orders, %d judgments parsed, %d missing",
        desc,
        len(sampled),
        int(out["parsed"].sum()),
        int((~out["parsed"]).sum()),
    )
    return out


def pairwise_judge_requests(items: Sequence[dict], judge: Judge) -> list[Request]:
    """:func:`pairwise_requests` of the pairwise judge (its forced-choice template, two labels and
    answer bound): the requests its job sends."""
    return pairwise_requests(items, Prompt.of(judge, PAIRWISE_KIND), max_tokens=judge.max_tokens)


def run_pairwise_judge(
    pairs: pd.DataFrame,
    sampled: pd.DataFrame,
    judge: Judge,
    client: CachedClient,
    *,
    progress: bool = True,
    desc: str = "pairwise",
) -> pd.DataFrame:
    """:func:`run_pairwise` of the pairwise judge (its template, labels and answer bound)."""
    return run_pairwise(
        pairs,
        sampled,
        Prompt.of(judge, PAIRWISE_KIND),
        client,
        max_tokens=judge.max_tokens,
        progress=progress,
        desc=desc,
    )


def pairwise_groups(table: pd.DataFrame, relevant_min: int = 1) -> pd.DataFrame:
    """The Best / Acceptable / Unacceptable group (``B``, ``A``, ``U``) of every judged passage,
    per query (see the module docstring). ``table``: columns qid, docid, grade."""
    out = table[["qid", "docid", "grade"]].copy()
    out["grade"] = out["grade"].astype(int)
    top = out.groupby("qid")["grade"].transform("max")
    relevant = out["grade"] >= relevant_min
    out["group"] = np.where(~relevant, "U", np.where(out["grade"] == top, "B", "A"))
    return out.reset_index(drop=True)


def _setting_rng(seed: int, qid: str, setting: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(str(qid).encode("utf-8")), SETTINGS.index(setting)])


def sample_pairs(table: pd.DataFrame, per_setting: int, seed: int, relevant_min: int = 1) -> pd.DataFrame:
    """At most ``per_setting`` pairs per setting (B-A, A-U, B-U) per query, each a passage of the
    higher group (``hi``, the ground-truth winner) and one of the lower (``lo``); drawn without
    replacement from all cross pairs (in docid order) with a generator seeded by (``seed``, query,
    setting). Columns: dataset (if present), qid, setting, hi_docid, lo_docid, hi_grade, lo_grade."""
    groups = pairwise_groups(table, relevant_min)
    dataset = str(table["dataset"].iloc[0]) if "dataset" in table and len(table) else None
    rows = []
    for qid, g in groups.groupby("qid", sort=True):
        members = {k: g[g["group"] == k].sort_values("docid") for k in ("B", "A", "U")}
        for setting in SETTINGS:
            hi, lo = members[setting[0]], members[setting[2]]
            cands = [
                (h.docid, h.grade, lo_.docid, lo_.grade) for h in hi.itertuples() for lo_ in lo.itertuples()
            ]
            if len(cands) > per_setting:
                pick = _setting_rng(seed, qid, setting).choice(
                    len(cands), size=int(per_setting), replace=False
                )
                cands = [cands[i] for i in sorted(pick)]
            for hd, hg, ld, lg in cands:
                rows.append(
                    {
                        "dataset": dataset,
                        "qid": qid,
                        "setting": setting,
                        "hi_docid": hd,
                        "lo_docid": ld,
                        "hi_grade": int(hg),
                        "lo_grade": int(lg),
                    }
                )
    cols = ["dataset", "qid", "setting", "hi_docid", "lo_docid", "hi_grade", "lo_grade"]
    return pd.DataFrame(rows, columns=cols)


def _mean_conf(o: pd.DataFrame, outcome: str, hi: str, lo: str) -> tuple[float, int]:
    """The mean confidence of both orders' judgments of the pairs with ``outcome``, and how many."""
    sel = o[o["outcome"] == outcome]
    v = pd.concat([sel[hi], sel[lo]]).astype(float)
    v = v[np.isfinite(v)]
    return (float(v.mean()) if len(v) else math.nan), len(v)


def _pairwise_row(o: pd.DataFrame) -> dict[str, float]:
    n = len(o)
    counts = {k: int((o["outcome"] == k).sum()) for k in ("correct", "wrong_win", "tie", "missing")}
    judged = n - counts["missing"]
    cut = (o["outcome"] == "missing") & (truthy(o["truncated"]) if "truncated" in o else False)
    decided = counts["correct"] + counts["wrong_win"]
    # a tie is decided by the position alone: Passage 1 (or 2) wins in both orders
    n_first, n_second = position_counts(o)

    def pct(k: int, d: int) -> float:
        return 100.0 * k / d if d else math.nan

    out = {
        "n_pairs": n,
        "n_judged": judged,
        "coverage": judged / n if n else math.nan,
        "n_correct": counts["correct"],
        "n_tie": counts["tie"],
        "n_wrong_win": counts["wrong_win"],
        "n_missing": counts["missing"],
        # the missing pairs split: an order's answer cut by the answer bound, or not readable
        "n_truncated": int(cut.sum()),
        "n_unparsable": counts["missing"] - int(cut.sum()),
        "accuracy_pct": pct(counts["correct"], judged),
        "accuracy_no_ties_pct": pct(counts["correct"], decided),
        "tie_rate_pct": pct(counts["tie"], judged),
        "wrong_win_pct": pct(counts["wrong_win"], judged),
        # the pairs decided by position alone, of the judged pairs (they split the ties)
        "n_first_both": n_first,
        "n_second_both": n_second,
        "first_both_pct": pct(n_first, judged),
        "second_both_pct": pct(n_second, judged),
    }
    # the confidence metrics, of the full-distribution confidence (conf_*) and of the
    # renormalised one (conf_renorm_*; suffix _renorm)
    for name, suffix in (("conf", ""), ("conf_renorm", "_renorm")):
        hi, lo = f"{name}_hi_first", f"{name}_lo_first"
        if hi not in o:
            o = o.assign(**{hi: math.nan, lo: math.nan})
        conf_c, n_c = _mean_conf(o, "correct", hi, lo)
        conf_w, n_w = _mean_conf(o, "wrong_win", hi, lo)
        ties = o[o["outcome"] == "tie"]
        both = ties[np.isfinite(ties[hi].astype(float)) & np.isfinite(ties[lo].astype(float))]
        high = int(((both[hi] > HIGH_CONFIDENCE) & (both[lo] > HIGH_CONFIDENCE)).sum())
        out |= {
            f"conf_correct{suffix}": conf_c,
            f"n_conf_correct{suffix}": n_c,
            f"conf_incorrect{suffix}": conf_w,
            f"n_conf_incorrect{suffix}": n_w,
            f"n_ties_conf_known{suffix}": len(both),
            f"ties_confident{suffix}_pct": pct(high, len(both)),
        }
    return out


def pairwise_metrics(outcomes: pd.DataFrame) -> pd.DataFrame:
    """One row per setting (B-A, A-U, B-U, in that order, those present) and ``overall`` (all
    pairs pooled)."""
    rows = [
        {"setting": s, **_pairwise_row(outcomes[outcomes["setting"] == s])}
        for s in SETTINGS
        if (outcomes["setting"] == s).any()
    ]
    rows.append({"setting": "overall", **_pairwise_row(outcomes)})
    return pd.DataFrame(rows)
