"""Forced-choice pairwise judging in both orders, shared by the studies that judge pairs so (the
overrating study's pairwise run, "When LLM Judges Inflate Scores" section 2.1; the prompt-
sensitivity study's pairwise prompts, Arabzadeh and Clarke, SIGIR 2025).

A pair is a passage of the higher human group or grade (``hi``, the ground-truth winner) and one
of a lower (``lo``) of one query; it is asked in both orders (:data:`ORDERS`: ``hi_first`` puts
``hi`` in the first position, ``lo_first`` puts it second), each order one request, and the two
answers are combined per pair (:func:`pair_outcomes`): both prefer ``hi`` - ``correct``; both
prefer ``lo`` - ``wrong_win``; they contradict each other - ``tie``, decided by the position alone
(``first``: the first passage wins in both orders, ``second``: the second); an order that did
not parse - ``missing``.

* :func:`pairwise_jobs` - every pair in both orders with its query and two texts, sorted so
  consecutive prompts share the longest prefix;
* :func:`choice_requests` - one request per pair and order: a template filled with the query and
  the two passages under the template's placeholder names, one pass (:func:`judgelab.llm.prompts.fill`);
* :func:`read_choice`, :func:`choice_cells` - the option an answer names, read from its text or
  from the label-token distribution at the first answer position;
* :func:`pair_outcomes`, :func:`position_counts` - the orders combined, and the pairs decided by
  position alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import pandas as pd

from judgelab.data.tables import truthy
from judgelab.errors import InputError
from judgelab.llm.answers import Reading, read_label
from judgelab.llm.backends.base import Completion, Request
from judgelab.llm.judging import answer_cells, cut_by_bound
from judgelab.llm.prompts import build_messages, fill

#: the two orders a pair is asked in: its higher passage first, then second
ORDERS = ("hi_first", "lo_first")

#: the columns that name a pair (one row of the pairs judged)
PAIR_KEYS = ["qid", "setting", "hi_docid", "lo_docid"]

#: a pair in one order as :func:`pairwise_jobs` gives it, the part a judged row keeps
ORDER_COLUMNS = ["dataset", *PAIR_KEYS, "order", "passage_1", "passage_2"]

#: the first columns of a judged row (one per pair and order), every study's: the pair in its
#: order, the option read (``label``, ``parsed``), the passage it prefers (:func:`preferred`)
CHOICE_COLUMNS = [*ORDER_COLUMNS, "label", "parsed", "preferred", "answer"]


def pairwise_jobs(pairs: pd.DataFrame, sampled: pd.DataFrame) -> list[dict]:
    """Every pair of ``sampled`` (dataset, qid, setting, hi_docid, lo_docid) in both orders, as
    (ids, passage_1, passage_2, query and texts from the dataset table ``pairs``), sorted by
    query, Passage 1 and Passage 2 so consecutive prompts share the longest prefix (the local
    backend evaluates a shared prefix once). A passage not in the table is an error."""
    text = {(r.qid, r.docid): r.passage for r in pairs.itertuples(index=False)}
    query = dict(zip(pairs["qid"], pairs["query"]))
    items = []
    for r in sampled.itertuples(index=False):
        for order in ORDERS:
            first, second = (r.hi_docid, r.lo_docid) if order == "hi_first" else (r.lo_docid, r.hi_docid)
            for d in (first, second):
                if (r.qid, d) not in text:
                    raise InputError(f"pair passage {d} of query {r.qid} is not in the dataset table")
            items.append(
                {
                    "dataset": r.dataset,
                    "qid": r.qid,
                    "setting": r.setting,
                    "hi_docid": r.hi_docid,
                    "lo_docid": r.lo_docid,
                    "order": order,
                    "passage_1": first,
                    "passage_2": second,
                    "query": query[r.qid],
                    "text_1": text[(r.qid, first)],
                    "text_2": text[(r.qid, second)],
                }
            )
    return sorted(items, key=lambda x: (x["qid"], x["passage_1"], x["passage_2"]))


def preferred(item: dict, label: object, parsed: bool, labels: Sequence[str]) -> str | None:
    """``hi`` or ``lo``: the passage of the pair in one order ``item`` (:func:`pairwise_jobs`) that
    the option ``label`` names (``labels[0]``: Passage 1, else Passage 2); None when the answer
    did not parse."""
    if not parsed:
        return None
    chosen = item["passage_1"] if str(label) == str(labels[0]) else item["passage_2"]
    return "hi" if chosen == item["hi_docid"] else "lo"


def choice_requests(
    items: Sequence[dict],
    template: str,
    labels: Sequence[str],
    *,
    max_tokens: int,
    names: tuple[str, str],
    persona: str = "",
    placement: str = "user",
    label_steps: bool = True,
) -> list[Request]:
    """One request per item of :func:`pairwise_jobs` (a pair in one order): ``template`` filled
    with ``{query}`` and the first and second passage under the placeholder ``names`` (e.g.
    ``passage_a``, ``passage_b``), ``persona`` placed by ``placement`` (empty: none), asking for
    the distribution of the two ``labels`` (``labels[0]`` names the first passage) at the first
    answer position and, with ``label_steps``, wherever a label token is generated."""
    first, second = names
    return [
        Request.from_messages(
            build_messages(
                persona,
                fill(template, **{"query": x["query"], first: x["text_1"], second: x["text_2"]}),
                placement,
            ),
            max_tokens,
            tuple(labels),
            label_steps=label_steps,
        )
        for x in items
    ]


#: an answer that names one option and nothing else: optional quotes or brackets, an optional
#: "Passage" / "Document" / "Doc" (any case), the label, optional closing quotes and a full stop
_OPTION = r"""\s*["'‘’“”(\[]*\s*(?:(?i:passage|document|doc)[\s_]*)?({labels})\s*["'‘’“”)\].!]*\s*"""


def read_choice(text: str, labels: Sequence[str]) -> Reading:
    """The option (one of the two ``labels``) an answer names: the answer rules of
    :func:`judgelab.llm.answers.read_label` (an explicit ``Answer: A`` counts), else the rule
    ``option-name``: the answer is the option's name and nothing else (``Passage A``,
    ``'Document 2'.``, ``[B]``), as the published pairwise prompts ask for it."""
    labels = tuple(str(x) for x in labels)
    got = read_label(text, labels, answer_keys=True)
    if got.value is not None:
        return got
    pattern = _OPTION.format(labels="|".join(re.escape(x) for x in sorted(labels, key=len, reverse=True)))
    m = re.fullmatch(pattern, text or "")
    return Reading(m.group(1), m.start(1), "option-name") if m else got


def choice_cells(
    comp: Completion,
    labels: Sequence[str],
    *,
    answer: str,
    max_tokens: int,
    decoding: str | None = None,
) -> dict:
    """One judgment's cells: the option chosen (``label``, one of ``labels``; None when missing),
    ``parsed``, the answer text and token counts, and the answer cells (truncated, the rule,
    who answered, decoding). ``answer``: ``parse`` - read from the text (:func:`read_choice`);
    ``logits`` - the label with the larger probability at the first answer position (a tie or no
    distribution: missing; rule ``logits``)."""
    labels = tuple(str(x) for x in labels)
    if answer == "logits":
        probs = comp.label_probs
        label = None
        if probs and len(probs) == len(labels) and probs[0] != probs[1]:
            label = labels[0] if probs[0] > probs[1] else labels[1]
        rule = "logits" if label is not None else None
        cut = False
    else:
        got = read_choice(comp.text, labels)
        label, rule = (None if got.value is None else str(got.value)), got.rule
        cut = cut_by_bound(comp, max_tokens)
    return {
        "label": label,
        "parsed": label is not None,
        "answer": comp.text,
        "prompt_tokens": comp.prompt_tokens,
        "completion_tokens": comp.completion_tokens,
        **answer_cells(comp, cut, rule, decoding),
    }


def pair_outcomes(judged: pd.DataFrame) -> pd.DataFrame:
    """One row per pair from its two judgments. ``judged``: one row per pair and order with
    qid, setting, hi_docid, lo_docid, order (``hi_first`` / ``lo_first``), ``preferred``
    (``hi``, ``lo``, or missing), optionally ``confidence`` (the full-distribution token
    confidence, nullable), ``confidence_renorm`` (the renormalised one) and ``truncated``.

    ``outcome``: ``correct`` (both orders prefer hi), ``wrong_win`` (both prefer lo), ``tie``
    (the orders contradict each other), ``missing`` (an order did not parse); ``truncated``: a
    missing order's answer was cut by the answer bound; ``position``: what decided a tie - the
    position alone: ``first`` (Passage 1 wins in both orders: hi when hi is first, lo when lo
    is), ``second`` (Passage 2 wins in both), empty for the other outcomes. Columns: the keys,
    ``pref_<order>``, ``conf_<order>``, ``conf_renorm_<order>`` (NaN without the confidences),
    ``outcome``, ``truncated``, ``position``."""
    keys = PAIR_KEYS
    wide = {}
    for order in ORDERS:
        part = judged[judged["order"] == order].set_index(keys)
        if part.index.duplicated().any():
            raise ValueError(f"a pair is judged twice in the order {order}")
        if "truncated" in part.columns:
            part = part.assign(truncated=truthy(part["truncated"]))  # as read from a table
        wide[order] = part
    idx = wide["hi_first"].index.union(wide["lo_first"].index, sort=False)
    rows = []
    for key in idx:
        row = dict(zip(keys, key))
        prefs, cut = [], False
        for order in ORDERS:
            part = wide[order]
            has = key in part.index
            pref = part.at[key, "preferred"] if has else None
            pref = None if pref is None or pd.isna(pref) else str(pref)
            row[f"pref_{order}"] = pref
            if pref is None and has and "truncated" in part.columns:
                cut = cut or bool(part.at[key, "truncated"])
            for column, name in (("confidence", "conf"), ("confidence_renorm", "conf_renorm")):
                conf = part.at[key, column] if has and column in part.columns else None
                row[f"{name}_{order}"] = math.nan if conf is None or pd.isna(conf) else float(conf)
            prefs.append(pref)
        row["position"] = ""
        if None in prefs:
            row["outcome"] = "missing"
        elif prefs == ["hi", "hi"]:
            row["outcome"] = "correct"
        elif prefs == ["lo", "lo"]:
            row["outcome"] = "wrong_win"
        else:
            row["outcome"] = "tie"
            # ORDERS = (hi_first, lo_first): hi then lo is Passage 1 winning both times
            row["position"] = "first" if prefs == ["hi", "lo"] else "second"
        row["truncated"] = cut
        rows.append(row)
    cols = (
        keys
        + [f"{w}_{o}" for o in ORDERS for w in ("pref", "conf", "conf_renorm")]
        + ["outcome", "truncated", "position"]
    )
    return pd.DataFrame(rows, columns=cols)


def position_counts(outcomes: pd.DataFrame) -> tuple[int, int]:
    """How many pairs of :func:`pair_outcomes` were decided by position alone: (the first
    passage won in both orders, the second won in both); together they are the ties."""
    position = outcomes["position"] if "position" in outcomes else pd.Series("", index=outcomes.index)
    return int((position == "first").sum()), int((position == "second").sum())
