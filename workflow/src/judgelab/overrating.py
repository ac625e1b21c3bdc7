"""Overrating in LLM relevance judges (seed 004, section 2): pointwise and pairwise diagnostics.

Pointwise (binary 0/1 or graded 0-3 judging, one run per scale):

* ``overrate_pct`` / ``underrate_pct``: 100 x the share of pairs whose LLM label is above / below
  the human label on the run's scale; ``mean_bias``: the mean of LLM - human; ``kappa``: Cohen's
  kappa over the scale's labels. On the binary scale the human grade is binarised by the TREC rule
  (grade >= 2 is relevant); a graded run is ALSO binarised by that rule on both sides (``bin_*``
  columns; for a binary run they equal the native ones), so it can be reported beside the native
  binary run (seed 004 Table 1).
* token confidence by TP / FP / TN / FN: on the binarised labels (positive = relevant), the mean
  token confidence (:func:`label_reading`) of each class, with its count.
* the human -> LLM transition matrix: human grade 0-3 (rows) x LLM label (columns), counts and
  row shares; the missing answers per human grade beside it.
* Missing answers (unparsable, or not labelled by an imported judge) are counted (``coverage``)
  and left out of every metric; they never become a label.

Pairwise (section 2.1; groups after Arabzadeh and Clarke 2025, as the seed describes them):

* Groups per query: **Best** = the passages at the highest grade present, if that grade is
  relevant; **Acceptable** = the relevant passages below it; **Unacceptable** = the non-relevant
  ones. Relevant means grade >= ``relevant_min`` (default 1: the seed's graded scale names only 0
  "Non-relevant", 1 is "Related"; 2 applies the TREC binarisation instead, so grade-1 passages are
  Unacceptable). A query whose highest grade is not relevant has neither Best nor Acceptable.
* Settings B-A, A-U, B-U: every cross pair of the two groups of a query (never two passages of
  one group, never two queries), of which at most ``per_setting`` are drawn without replacement
  by a generator seeded with (seed, query id, setting) - the draw of a query does not depend on
  the other queries. The passage of the higher group is the ground-truth winner.
* Each pair is judged in both orders (``hi_first``: the winner is Passage 1; ``lo_first``: it is
  Passage 2) with a forced choice. Both orders prefer the winner: **correct**; both prefer the
  loser: **wrong win**; contradictory orders: **tie**; an order whose answer did not parse:
  **missing** (counted, left out).
* Per setting and overall (pooled pairs): accuracy = correct / judged pairs (ties count as
  wrong), accuracy without ties = correct / (correct + wrong wins), tie rate, wrong-wins rate
  (all in %), the mean token confidence of the judgments of correct pairs and of wrong-win pairs
  (both orders pooled; ties excluded, as seed Table 2), and the share of ties whose two judgments
  both have confidence > 0.95 (among ties with both confidences known).

Token confidence = the probability of the chosen label at the decoding step that generated it,
renormalised over the label tokens (see :func:`label_reading`).
"""

from __future__ import annotations

import logging
import math
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .backends.base import CachedClient, Completion, Request, label_step_at
from .errors import InputError
from .imported import confidence_as_probability, read_judge_file
from .prompts import build_messages, fill, load_template_spec, locate_label, register_kind

SCALES: dict[str, tuple[str, ...]] = {"binary": ("0", "1"), "graded": ("0", "1", "2", "3")}
GRADES = (0, 1, 2, 3)
#: TREC binarisation of graded labels: relevant iff grade >= 2
TREC_RELEVANT = 2
OUTCOMES = ("TP", "FP", "TN", "FN")
SETTINGS = ("B-A", "A-U", "B-U")
GROUP_NAMES = {"B": "Best", "A": "Acceptable", "U": "Unacceptable"}
ORDERS = ("hi_first", "lo_first")
log = logging.getLogger(__name__)

#: the formats every table of the study is written in
TABLE_FORMATS = ("tsv", "md", "tex", "html")

#: the pairwise confidence threshold of seed 004 section 2.3 ("exceeded 0.95 on both orderings")
HIGH_CONFIDENCE = 0.95


# --------------------------------------------------------------------------------------------
# Prompts


#: The template kind of the forced-choice pairwise prompt: Passage 1 and Passage 2 of a query,
#: answered with an option number (default labels 1 = Passage 1, 2 = Passage 2). The pointwise
#: prompts are ``judgment`` templates ({query}, {document}) whose ``labels:`` give the scale.
PAIRWISE_KIND = "overrating_pairwise"
register_kind(PAIRWISE_KIND, ["query", "passage_a", "passage_b"], labels=["1", "2"])


@dataclass(frozen=True)
class Prompt:
    """An overrating prompt: its template text and its label set (single tokens, e.g. "0", "1")."""

    template: str
    labels: tuple[str, ...]
    kind: str


def load_prompt(ref: str, resources: str | Path | None = None, kind: str | None = None, *,
                key: str | None = None) -> Prompt:
    """A checked prompt template (:func:`judgelab.prompts.load_template_spec`): ``ref`` is a path
    or ``<study>/<name>`` under ``resources``/prompts (e.g. ``overrating/graded``); ``kind`` the
    kind needed (``judgment`` or :data:`PAIRWISE_KIND`); ``key`` the config key naming it."""
    spec = load_template_spec(ref, resources, kind, key=key)
    return Prompt(spec.text, tuple(spec.labels or ()), spec.kind)


def effective_scale(scale: str | None) -> str:
    """The scale of an imported judge: as declared, graded when not declared."""
    if scale is None:
        return "graded"
    if scale not in SCALES:
        raise InputError(f"unknown scale {scale!r} (binary or graded)", key="imported_judges.<name>.scale")
    return scale


def check_labels(labels: Sequence[str], scale: str) -> tuple[str, ...]:
    """The labels of a pointwise run, checked against its scale."""
    if scale not in SCALES:
        raise InputError(f"unknown scale {scale!r} (binary or graded)", key="overrating.pointwise.scales")
    if tuple(labels) != SCALES[scale]:
        raise InputError(f"the {scale} scale needs labels {list(SCALES[scale])}, the prompt declares "
                         f"{list(labels)}", key=f"overrating.pointwise.templates.{scale}")
    return tuple(labels)


# --------------------------------------------------------------------------------------------
# Answer parsing: the label and WHERE in the answer it is


def parse_answer(text: str, labels: Sequence[str], *, pairwise: bool = False
                 ) -> tuple[str | None, int | None]:
    """The label of an answer (one of ``labels``) and the character offset of the label in it, or
    ``(None, None)`` (missing): :func:`judgelab.prompts.locate_label`, the rules of
    :func:`judgelab.prompts.parse_label` (only the template's labels parse; ``-1``, ``2.5``,
    ``1st`` or a number outside the labels do not), with the offset. ``pairwise``: an explicit
    ``Answer: 1`` also counts as the final answer (the forced choice names an option)."""
    return locate_label(text, labels, answer_keys=pairwise)


def label_reading(completion: Completion, labels: Sequence[str], label: str | None,
                  start: int | None) -> dict:
    """The label distribution where the parsed label was generated.

    The label step is the decoding step whose token spells the character the parser took the
    label from (:func:`judgelab.backends.base.label_step_at`): after ``"##final score: "`` it is
    the step of the ``"2"``, and for an answer that is only the label it is the first step, whose
    reading is the first-position one. Returns ``label_pos`` (the token index), ``probs`` (one per
    label, renormalised over the label tokens), ``label_mass`` and ``confidence`` = the
    probability of the parsed label; all None when the answer is missing or no step matches
    (no logprobs, or the label merged into a longer token)."""
    out = {"label_pos": None, "probs": [None] * len(labels), "label_mass": None, "confidence": None}
    if label is None or start is None:
        return out
    step = label_step_at(completion, start)
    if step is None or step["probs"] is None:
        return out
    return {"label_pos": int(step["pos"]), "probs": list(step["probs"]), "label_mass": step["mass"],
            "confidence": float(step["probs"][list(labels).index(label)])}


# --------------------------------------------------------------------------------------------
# Judging


def prob_columns(labels: Sequence[str]) -> list[str]:
    return [f"p{x}" for x in labels]


def pointwise_columns(labels: Sequence[str]) -> list[str]:
    return (["dataset", "qid", "docid", "label", "parsed", "answer", "label_pos"] + prob_columns(labels)
            + ["label_mass", "confidence", "prompt_tokens", "completion_tokens", "latency_s", "cache_hit"])


def _typed(df: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    df["label"] = df["label"].astype("Int64")
    df["label_pos"] = df["label_pos"].astype("Int64")
    for col in prob_columns(labels) + ["label_mass", "confidence"]:
        df[col] = df[col].astype("Float64")
    return df


def _reading_cells(comp: Completion, labels: Sequence[str], *, pairwise: bool = False) -> dict:
    label, start = parse_answer(comp.text, labels, pairwise=pairwise)
    r = label_reading(comp, labels, label, start)
    return {"label": None if label is None else int(label), "parsed": label is not None,
            "answer": comp.text, "label_pos": r["label_pos"],
            **dict(zip(prob_columns(labels), r["probs"])), "label_mass": r["label_mass"],
            "confidence": r["confidence"], "prompt_tokens": comp.prompt_tokens,
            "completion_tokens": comp.completion_tokens, "latency_s": comp.latency_s}


def pointwise_requests(pairs: pd.DataFrame, prompt: Prompt, *, max_tokens: int) -> list[Request]:
    """One request per pair: the template filled with the query and passage (no persona), asking
    for the label steps of the prompt's labels."""
    return [Request.from_messages(build_messages("", fill(prompt.template, query=r.query, document=r.passage)),
                                  max_tokens, prompt.labels, label_steps=True)
            for r in pairs.itertuples(index=False)]


def run_pointwise(pairs: pd.DataFrame, prompt: Prompt, client: CachedClient, *, max_tokens: int,
                  progress: bool = True, desc: str = "pointwise") -> pd.DataFrame:
    """Judge every pair; one row per input row, in input order (:func:`pointwise_columns`)."""
    answers = client.run(pointwise_requests(pairs, prompt, max_tokens=max_tokens), desc=desc,
                         progress=progress)
    rows = [{"dataset": r.dataset, "qid": r.qid, "docid": r.docid,
             **_reading_cells(comp, prompt.labels), "cache_hit": hit}
            for r, (comp, hit) in zip(pairs.itertuples(index=False), answers)]
    out = _typed(pd.DataFrame(rows, columns=pointwise_columns(prompt.labels)), prompt.labels)
    log.info("%s: %d pairs, %d parsed, %d missing, %d with a label-token confidence", desc, len(out),
             int(out["parsed"].sum()), int((~out["parsed"]).sum()), int(out["confidence"].notna().sum()))
    return out


def imported_pointwise(pairs: pd.DataFrame, path: str | Path, scale: str | None,
                       confidence_scale: str | None = None) -> pd.DataFrame:
    """The pointwise judgments table of an imported judge file (no LLM call): labels on the
    judge's declared ``scale`` (None: not declared, read as graded unless every label is 0/1,
    which fails; see :mod:`judgelab.imported`), the file's confidences as probabilities 0-1, no
    label distribution. Pairs the file does not label are missing."""
    labels = SCALES[effective_scale(scale)]
    read = read_judge_file(path, pairs, scale=scale, confidence_scale=confidence_scale)
    merged = pairs[["dataset", "qid", "docid"]].merge(read, on=["qid", "docid"], how="left",
                                                      validate="one_to_one")
    out = pd.DataFrame({"dataset": merged["dataset"], "qid": merged["qid"], "docid": merged["docid"],
                        "label": merged["label"], "parsed": merged["label"].notna(),
                        "answer": merged["label"].astype("string"),
                        "confidence": confidence_as_probability(merged["confidence"], confidence_scale)},
                       columns=pointwise_columns(labels))
    return _typed(out, labels)


PAIRWISE_COLUMNS = ["dataset", "qid", "setting", "hi_docid", "lo_docid", "order", "passage_1",
                    "passage_2", "label", "parsed", "preferred", "answer", "label_pos"]


def pairwise_columns(labels: Sequence[str]) -> list[str]:
    return (PAIRWISE_COLUMNS + prob_columns(labels)
            + ["label_mass", "confidence", "prompt_tokens", "completion_tokens", "latency_s", "cache_hit"])


def pairwise_jobs(pairs: pd.DataFrame, sampled: pd.DataFrame) -> list[dict]:
    """Every sampled pair in both orders, as (ids, passage_1, passage_2, query and texts), sorted
    by query, Passage 1 and Passage 2 so consecutive prompts share the longest prefix (the local
    backend evaluates a shared prefix once)."""
    text = {(r.qid, r.docid): r.passage for r in pairs.itertuples(index=False)}
    query = dict(zip(pairs["qid"], pairs["query"]))
    items = []
    for r in sampled.itertuples(index=False):
        for order in ORDERS:
            first, second = (r.hi_docid, r.lo_docid) if order == "hi_first" else (r.lo_docid, r.hi_docid)
            for d in (first, second):
                if (r.qid, d) not in text:
                    raise InputError(f"pair passage {d} of query {r.qid} is not in the dataset table")
            items.append({"dataset": r.dataset, "qid": r.qid, "setting": r.setting,
                          "hi_docid": r.hi_docid, "lo_docid": r.lo_docid, "order": order,
                          "passage_1": first, "passage_2": second, "query": query[r.qid],
                          "text_1": text[(r.qid, first)], "text_2": text[(r.qid, second)]})
    return sorted(items, key=lambda x: (x["qid"], x["passage_1"], x["passage_2"]))


def pairwise_requests(items: Sequence[dict], prompt: Prompt, *, max_tokens: int) -> list[Request]:
    """One request per judgment of :func:`pairwise_jobs` (a pair in one order): the template
    filled with the query, Passage 1 and Passage 2 (no persona), asking for the label steps of
    the prompt's two labels."""
    if len(prompt.labels) != 2:
        raise InputError(f"a pairwise prompt needs two labels (Passage 1, Passage 2), got {list(prompt.labels)}",
                         key="overrating.pairwise.template")
    return [Request.from_messages(
        build_messages("", fill(prompt.template, query=x["query"], passage_a=x["text_1"],
                                passage_b=x["text_2"])), max_tokens, prompt.labels, label_steps=True)
        for x in items]


def run_pairwise(pairs: pd.DataFrame, sampled: pd.DataFrame, prompt: Prompt, client: CachedClient, *,
                 max_tokens: int, progress: bool = True, desc: str = "pairwise") -> pd.DataFrame:
    """Judge every sampled pair in both orders (forced choice: label ``labels[0]`` = Passage 1,
    ``labels[1]`` = Passage 2); ``preferred`` says whether the choice is the higher-group passage
    (``hi``) or the lower (``lo``), missing when the answer did not parse."""
    items = pairwise_jobs(pairs, sampled)
    answers = client.run(pairwise_requests(items, prompt, max_tokens=max_tokens), desc=desc,
                         progress=progress)
    rows = []
    for x, (comp, hit) in zip(items, answers):
        cells = _reading_cells(comp, prompt.labels, pairwise=True)
        chosen = None
        if cells["parsed"]:
            chosen = x["passage_1"] if str(cells["label"]) == prompt.labels[0] else x["passage_2"]
        preferred = None if chosen is None else ("hi" if chosen == x["hi_docid"] else "lo")
        rows.append({k: x[k] for k in PAIRWISE_COLUMNS[:8]} | cells
                    | {"preferred": preferred, "cache_hit": hit})
    out = _typed(pd.DataFrame(rows, columns=pairwise_columns(prompt.labels)), prompt.labels)
    log.info("%s: %d pairs x 2 orders, %d judgments parsed, %d missing", desc, len(sampled),
             int(out["parsed"].sum()), int((~out["parsed"]).sum()))
    return out


# --------------------------------------------------------------------------------------------
# Pointwise metrics


def _kappa(y: Sequence[int], yhat: Sequence[int], labels: Sequence[int]) -> float:
    from sklearn.exceptions import UndefinedMetricWarning
    from sklearn.metrics import cohen_kappa_score

    if not len(y):
        return math.nan
    with warnings.catch_warnings():
        # one single label on both sides: kappa is 0/0; sklearn warns and returns nan (reported)
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return float(cohen_kappa_score(list(y), list(yhat), labels=list(labels)))


def _rates(human: np.ndarray, llm: np.ndarray, labels: Sequence[int]) -> dict[str, float]:
    n = len(human)
    if not n:
        return {"overrate_pct": math.nan, "underrate_pct": math.nan, "mean_bias": math.nan,
                "kappa": math.nan}
    return {"overrate_pct": 100.0 * float((llm > human).mean()),
            "underrate_pct": 100.0 * float((llm < human).mean()),
            "mean_bias": float((llm - human).mean()),
            "kappa": _kappa(human, llm, labels)}


def binarise(grades) -> np.ndarray:
    """TREC rule: 1 (relevant) for grade >= 2, else 0."""
    return (np.asarray(grades, dtype=int) >= TREC_RELEVANT).astype(int)


def confusion_outcome(human_bin: np.ndarray, llm_bin: np.ndarray) -> np.ndarray:
    """TP / FP / TN / FN of binarised labels (positive = relevant)."""
    return np.where(llm_bin == 1, np.where(human_bin == 1, "TP", "FP"),
                    np.where(human_bin == 1, "FN", "TN"))


def pointwise_metrics(pairs: pd.DataFrame, scale: str) -> dict[str, float]:
    """Metrics of one pointwise run. ``pairs``: one row per judged pair with ``grade`` (human
    0-3), ``label`` (LLM label on ``scale``, nullable: missing) and ``confidence`` (token
    confidence 0-1, nullable)."""
    if scale not in SCALES:
        raise InputError(f"unknown scale {scale!r} (binary or graded)", key="overrating.pointwise.scales")
    n = len(pairs)
    parsed = pairs[pairs["label"].notna()]
    human = parsed["grade"].astype(int).to_numpy()
    llm = parsed["label"].astype(int).to_numpy()
    if scale == "binary" and len(llm) and llm.max() > 1:
        raise ValueError("binary run with labels above 1")
    out: dict[str, float] = {"n_pairs": n, "n_parsed": len(parsed),
                             "coverage": len(parsed) / n if n else math.nan}
    human_native = binarise(human) if scale == "binary" else human
    out.update(_rates(human_native, llm, [int(x) for x in SCALES[scale]]))
    hb, lb = binarise(human), (llm if scale == "binary" else binarise(llm))
    out.update({f"bin_{k}": v for k, v in _rates(hb, lb, [0, 1]).items()})
    conf = parsed["confidence"].astype(float).to_numpy() if "confidence" in parsed else np.full(len(parsed), np.nan)
    outcome = confusion_outcome(hb, lb)
    known = np.isfinite(conf)
    out["n_confidence"] = int(known.sum())
    out["mean_confidence"] = float(conf[known].mean()) if known.any() else math.nan
    for o in OUTCOMES:
        sel = outcome == o
        out[f"n_{o}"] = int(sel.sum())
        out[f"conf_{o}"] = float(conf[sel & known].mean()) if (sel & known).any() else math.nan
    return out


def transition_matrix(pairs: pd.DataFrame, scale: str) -> pd.DataFrame:
    """Tidy human -> LLM transition matrix: one row per human grade 0-3 and LLM label of the
    scale, with ``n`` and ``share`` (of the human grade's parsed pairs; NaN without any), and
    ``n_missing`` (that grade's pairs whose answer is missing)."""
    labels = [int(x) for x in SCALES[scale]]
    rows = []
    for g in GRADES:
        at = pairs[pairs["grade"].astype(int) == g]
        parsed = at[at["label"].notna()]
        n_missing = len(at) - len(parsed)
        for lab in labels:
            k = int((parsed["label"].astype(int) == lab).sum())
            rows.append({"human": g, "llm": lab, "n": k,
                         "share": k / len(parsed) if len(parsed) else math.nan,
                         "n_missing": n_missing})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Pairwise: groups, pair sampling, outcomes, metrics


def pairwise_groups(table: pd.DataFrame, relevant_min: int = 1) -> pd.DataFrame:
    """The Best / Acceptable / Unacceptable group (``B``, ``A``, ``U``) of every judged passage,
    per query (see the module docstring). ``table``: columns qid, docid, grade."""
    if relevant_min not in (1, 2, 3):
        raise InputError(f"relevant_min must be 1, 2 or 3, got {relevant_min!r}",
                         key="overrating.pairwise.relevant_min")
    out = table[["qid", "docid", "grade"]].copy()
    out["grade"] = out["grade"].astype(int)
    top = out.groupby("qid")["grade"].transform("max")
    relevant = out["grade"] >= relevant_min
    out["group"] = np.where(~relevant, "U", np.where(out["grade"] == top, "B", "A"))
    return out.reset_index(drop=True)


def _setting_rng(seed: int, qid: str, setting: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(str(qid).encode("utf-8")),
                                  SETTINGS.index(setting)])


def sample_pairs(table: pd.DataFrame, per_setting: int = 20, seed: int = 0,
                 relevant_min: int = 1) -> pd.DataFrame:
    """At most ``per_setting`` pairs per setting (B-A, A-U, B-U) per query, each a passage of the
    higher group (``hi``, the ground-truth winner) and one of the lower (``lo``); drawn without
    replacement from all cross pairs (in docid order) with a generator seeded by (``seed``, query,
    setting). Columns: dataset (if present), qid, setting, hi_docid, lo_docid, hi_grade, lo_grade."""
    if int(per_setting) < 1:
        raise InputError(f"per_setting must be >= 1, got {per_setting!r}",
                         key="overrating.pairwise.per_setting")
    groups = pairwise_groups(table, relevant_min)
    dataset = str(table["dataset"].iloc[0]) if "dataset" in table and len(table) else None
    rows = []
    for qid, g in groups.groupby("qid", sort=True):
        members = {k: g[g["group"] == k].sort_values("docid") for k in ("B", "A", "U")}
        for setting in SETTINGS:
            hi, lo = members[setting[0]], members[setting[2]]
            cands = [(h.docid, h.grade, lo_.docid, lo_.grade)
                     for h in hi.itertuples() for lo_ in lo.itertuples()]
            if len(cands) > per_setting:
                pick = _setting_rng(seed, qid, setting).choice(len(cands), size=int(per_setting),
                                                               replace=False)
                cands = [cands[i] for i in sorted(pick)]
            for hd, hg, ld, lg in cands:
                rows.append({"dataset": dataset, "qid": qid, "setting": setting, "hi_docid": hd,
                             "lo_docid": ld, "hi_grade": int(hg), "lo_grade": int(lg)})
    cols = ["dataset", "qid", "setting", "hi_docid", "lo_docid", "hi_grade", "lo_grade"]
    return pd.DataFrame(rows, columns=cols)


def pair_outcomes(judged: pd.DataFrame) -> pd.DataFrame:
    """One row per pair from its two judgments. ``judged``: one row per pair and order with
    qid, setting, hi_docid, lo_docid, order (``hi_first`` / ``lo_first``), ``preferred``
    (``hi``, ``lo``, or missing) and ``confidence`` (nullable).

    ``outcome``: ``correct`` (both orders prefer hi), ``wrong_win`` (both prefer lo), ``tie``
    (the orders contradict each other), ``missing`` (an order did not parse)."""
    keys = ["qid", "setting", "hi_docid", "lo_docid"]
    wide = {}
    for order in ORDERS:
        part = judged[judged["order"] == order].set_index(keys)
        if part.index.duplicated().any():
            raise ValueError(f"a pair is judged twice in the order {order}")
        wide[order] = part
    idx = wide["hi_first"].index.union(wide["lo_first"].index, sort=False)
    rows = []
    for key in idx:
        row = dict(zip(keys, key))
        prefs = []
        for order in ORDERS:
            part = wide[order]
            has = key in part.index
            pref = part.at[key, "preferred"] if has else None
            conf = part.at[key, "confidence"] if has else None
            pref = None if pref is None or pd.isna(pref) else str(pref)
            row[f"pref_{order}"] = pref
            row[f"conf_{order}"] = math.nan if conf is None or pd.isna(conf) else float(conf)
            prefs.append(pref)
        if None in prefs:
            row["outcome"] = "missing"
        elif prefs == ["hi", "hi"]:
            row["outcome"] = "correct"
        elif prefs == ["lo", "lo"]:
            row["outcome"] = "wrong_win"
        else:
            row["outcome"] = "tie"
        rows.append(row)
    cols = keys + [f"{w}_{o}" for o in ORDERS for w in ("pref", "conf")] + ["outcome"]
    return pd.DataFrame(rows, columns=cols)


def _pairwise_row(o: pd.DataFrame) -> dict[str, float]:
    n = len(o)
    counts = {k: int((o["outcome"] == k).sum()) for k in ("correct", "wrong_win", "tie", "missing")}
    judged = n - counts["missing"]
    decided = counts["correct"] + counts["wrong_win"]

    def pct(k: int, d: int) -> float:
        return 100.0 * k / d if d else math.nan

    def mean_conf(outcome: str) -> tuple[float, int]:
        sel = o[o["outcome"] == outcome]
        v = pd.concat([sel["conf_hi_first"], sel["conf_lo_first"]]).astype(float)
        v = v[np.isfinite(v)]
        return (float(v.mean()) if len(v) else math.nan), len(v)

    conf_c, n_c = mean_conf("correct")
    conf_w, n_w = mean_conf("wrong_win")
    ties = o[o["outcome"] == "tie"]
    both = ties[np.isfinite(ties["conf_hi_first"].astype(float))
                & np.isfinite(ties["conf_lo_first"].astype(float))]
    high = int(((both["conf_hi_first"] > HIGH_CONFIDENCE) & (both["conf_lo_first"] > HIGH_CONFIDENCE)).sum())
    return {"n_pairs": n, "n_judged": judged, "coverage": judged / n if n else math.nan,
            "n_correct": counts["correct"], "n_tie": counts["tie"], "n_wrong_win": counts["wrong_win"],
            "n_missing": counts["missing"],
            "accuracy_pct": pct(counts["correct"], judged),
            "accuracy_no_ties_pct": pct(counts["correct"], decided),
            "tie_rate_pct": pct(counts["tie"], judged),
            "wrong_win_pct": pct(counts["wrong_win"], judged),
            "conf_correct": conf_c, "n_conf_correct": n_c,
            "conf_incorrect": conf_w, "n_conf_incorrect": n_w,
            "n_ties_conf_known": len(both),
            "ties_confident_pct": pct(high, len(both))}


def pairwise_metrics(outcomes: pd.DataFrame) -> pd.DataFrame:
    """One row per setting (B-A, A-U, B-U, in that order, those present) and ``overall`` (all
    pairs pooled)."""
    rows = [{"setting": s, **_pairwise_row(outcomes[outcomes["setting"] == s])}
            for s in SETTINGS if (outcomes["setting"] == s).any()]
    rows.append({"setting": "overall", **_pairwise_row(outcomes)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Tables shaped like seed 004 Tables 1 and 2


def _fmt(v, digits: int) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)) or pd.isna(v):
        return "n/a"
    return f"{float(v):.{digits}f}"


#: (group title, column title, source scale, metric, digits) of Table 1
TABLE1_COLUMNS = [
    ("Overrated (%)", "Bin.", "binary", "overrate_pct", 2),
    ("Overrated (%)", "Grad.", "graded", "overrate_pct", 2),
    ("Overrated (%)", "Grad.→Bin.", "graded", "bin_overrate_pct", 2),
    ("Underrated (%)", "Bin.", "binary", "underrate_pct", 2),
    ("Underrated (%)", "Grad.", "graded", "underrate_pct", 2),
    ("Underrated (%)", "Grad.→Bin.", "graded", "bin_underrate_pct", 2),
    ("Mean Bias", "Bin.", "binary", "mean_bias", 3),
    ("Mean Bias", "Grad.", "graded", "mean_bias", 3),
    ("Mean Bias", "Grad.→Bin.", "graded", "bin_mean_bias", 3),
    ("Cohen's κ", "Bin.", "binary", "kappa", 3),
    ("Cohen's κ", "Grad.", "graded", "kappa", 3),
    ("Cohen's κ", "Grad.→Bin.", "graded", "bin_kappa", 3),
    ("Avg Confidence", "TP", "confidence", "conf_TP", 3),
    ("Avg Confidence", "FP", "confidence", "conf_FP", 3),
    ("Avg Confidence", "TN", "confidence", "conf_TN", 3),
    ("Avg Confidence", "FN", "confidence", "conf_FN", 3),
    ("Coverage", "Bin.", "binary", "coverage", 3),
    ("Coverage", "Grad.", "graded", "coverage", 3),
]

#: (column title, metric, digits) of Table 2
TABLE2_COLUMNS = [
    ("Acc.", "accuracy_pct", 2), ("Acc. (No Ties)", "accuracy_no_ties_pct", 2),
    ("Tie Rate", "tie_rate_pct", 2), ("Wrong Wins", "wrong_win_pct", 2),
    ("Corr.", "conf_correct", 3), ("Incorr.", "conf_incorrect", 3),
    ("Ties conf. > 0.95 (%)", "ties_confident_pct", 2), ("Pairs judged", "n_judged", 0),
    ("Coverage", "coverage", 3),
]


def table1(pointwise: pd.DataFrame) -> pd.DataFrame:
    """Seed 004 Table 1 from the pointwise metrics (rows dataset, model, scale, metrics): one row
    per dataset x model; ``Bin.`` from the binary run, ``Grad.`` from the graded run,
    ``Grad.→Bin.`` the graded run binarised; the confidence columns from the graded run (as the
    seed), or from the binary run when there is no graded one (``confidence_scale`` says which).
    Columns are (group, column) tuples, plus dataset, model, confidence_scale."""
    rows = []
    for (d, m), g in pointwise.groupby(["dataset", "model"], sort=False):
        by = {r["scale"]: r for _, r in g.iterrows()}
        conf_scale = "graded" if "graded" in by else "binary"
        row = {"dataset": d, "model": m, "confidence_scale": conf_scale}
        for group, col, src, metric, _ in TABLE1_COLUMNS:
            src = conf_scale if src == "confidence" else src
            row[(group, col)] = by[src][metric] if src in by else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def table2(pairwise: pd.DataFrame, setting: str = "overall") -> pd.DataFrame:
    """Seed 004 Table 2 from the pairwise metrics (rows dataset, model, setting, metrics): one row
    per dataset x model, for ``setting`` (``overall`` = all pairs pooled)."""
    sel = pairwise[pairwise["setting"] == setting]
    return sel[["dataset", "model", "setting"] + [m for _, m, _ in TABLE2_COLUMNS]].reset_index(drop=True)


def _rows_with_ids(df: pd.DataFrame, ids: Sequence[str]):
    """The id cells, each shown only where it or an id before it changes (like the seed's
    tables), and the row."""
    prev: list[str] | None = None
    for _, r in df.iterrows():
        key = [str(r[k]) for k in ids]
        shown, changed = [], prev is None
        for i, k in enumerate(key):
            changed = changed or k != prev[i]
            shown.append(k if changed else "")
        yield shown, r
        prev = key


def _tex(s: str) -> str:
    return (str(s).replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("&", r"\&")
            .replace("%", r"\%").replace("#", r"\#").replace("κ", r"$\kappa$")
            .replace("→", r"$\to$").replace(">", r"$>$"))


def render_table1(wide: pd.DataFrame, fmt: str) -> str:
    """Table 1 as ``md``, ``tex`` or ``html``."""
    cols = [(g, c, digits) for g, c, _, _, digits in TABLE1_COLUMNS]
    return _render(wide, ["dataset", "model"], ["Dataset", "Model"], cols, fmt,
                   lambda r, g, c: r[(g, c)])


def render_table2(wide: pd.DataFrame, fmt: str, ids: Sequence[str] = ("dataset", "model")) -> str:
    """Table 2 (or its per-setting variant, ``ids`` with ``setting``) as ``md``, ``tex`` or
    ``html``."""
    cols = [("Pairwise Metrics (%)", t, d) for t, m, d in TABLE2_COLUMNS[:4]] \
        + [("Avg Confidence", t, d) for t, m, d in TABLE2_COLUMNS[4:6]] \
        + [("", t, d) for t, m, d in TABLE2_COLUMNS[6:]]
    metric = {t: m for t, m, _ in TABLE2_COLUMNS}
    return _render(wide, list(ids), [i.capitalize() for i in ids], cols, fmt,
                   lambda r, g, c: r[metric[c]])


def _render(wide: pd.DataFrame, ids: list[str], id_titles: list[str], cols: list[tuple[str, str, int]],
            fmt: str, value) -> str:
    groups = list(dict.fromkeys(g for g, _, _ in cols))
    if fmt == "md":
        head = id_titles + [f"{g} {c}".strip() for g, c, _ in cols]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(ids) + "---:|" * len(cols)]
        for shown, r in _rows_with_ids(wide, ids):
            lines.append("| " + " | ".join(shown + [_fmt(value(r, g, c), d) for g, c, d in cols]) + " |")
        return "\n".join(lines) + "\n"
    if fmt == "tex":
        spans = [(g, sum(1 for gg, _, _ in cols if gg == g)) for g in groups]
        out = [r"\begin{tabular}{" + "l" * len(ids) + "r" * len(cols) + "}", r"\toprule",
               " & ".join([""] * len(ids) + [rf"\multicolumn{{{n}}}{{c}}{{{_tex(g)}}}" for g, n in spans])
               + r" \\",
               " & ".join([_tex(t) for t in id_titles] + [_tex(c) for _, c, _ in cols]) + r" \\",
               r"\midrule"]
        for shown, r in _rows_with_ids(wide, ids):
            out.append(" & ".join([_tex(s) for s in shown] + [_fmt(value(r, g, c), d) for g, c, d in cols])
                       + r" \\")
        out += [r"\bottomrule", r"\end{tabular}"]
        return "\n".join(out) + "\n"
    if fmt == "html":
        body = [shown + [_fmt(value(r, g, c), d) for g, c, d in cols] for shown, r in _rows_with_ids(wide, ids)]
        frame = pd.DataFrame(body, columns=id_titles + [f"{g} {c}".strip() for g, c, _ in cols])
        return frame.to_html(index=False, border=0)
    raise ValueError(f"unknown table format {fmt!r} (md, tex or html)")


def flat_table1(wide: pd.DataFrame) -> pd.DataFrame:
    """Table 1 with flat column names (``Overrated (%) Bin.``), for the tsv file."""
    return wide.rename(columns={k: f"{k[0]} {k[1]}" for k in wide.columns if isinstance(k, tuple)})
