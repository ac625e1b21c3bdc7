"""Baselines, reference predictors and the cross-evaluator control (PersonaJudge sections 4.5, 14.5, 15).

Reference predictors, each predicting a label for every evaluator's validation items:

* ``random`` - uniform over A, N, B, seeded per evaluator and item: one draw, kept as the labels
  of a predictor; its expected accuracy is 1/3 exactly whatever the label shares (each label is
  guessed with probability 1/3), and the report shows that expectation with the distribution
  over many seeded draws (:func:`random_draws`), never one draw as the expectation. Per class
  the expectation is recall 1/3 and precision = the class's share of the gold labels
  (:func:`random_expected_prf`).
* ``oracle_consensus`` - the item's consensus label: the label of a strict majority of all its
  annotators (the target's own label included: an oracle using held-out human labels), on items
  with at least :data:`MIN_CONSENSUS_ANNOTATORS` annotators; none elsewhere (1-1-1 items and
  items with too few annotators are excluded).
* ``global_majority`` - the most frequent label over all records of the evaluator set.
* ``evaluator_majority`` - each evaluator's own most frequent label, over all its records
  (``majority_source="all"``, the paper's reference predictor) or over its demonstration pool
  only (``"pool"``, a predictor that never sees validation labels; none for an evaluator
  without pool items).

Ties between label counts are broken in the order A, N, B.

The Base Judge is a cascade cell with no demonstrations (:mod:`.cascade`).

Cross-evaluator control (section 14.5): for a PersonaJudge cell, target evaluator i and its
validation item x, the predictions that the *same cell* made for every other evaluator j on x
(with j's own demonstrations) are scored against i's gold label and averaged over j; the
control's accuracy for i is the mean over the matched items (items at least one other evaluator
has a prediction for). Every judgment counts, a missing prediction as wrong (the paper's
scoring); with ``answered_only`` only the items where i's own prediction and at least one other
evaluator's were answered, over the answered ones. No extra inference.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.studies.simulation.data import LABELS, Record
from judgelab.studies.simulation.splits import stable_seed

MIN_CONSENSUS_ANNOTATORS = 3
REFERENCE_METHODS = ("random", "oracle_consensus", "global_majority", "evaluator_majority")
BASELINE_COLUMNS = ["method", "evaluator", "item", "gold", "pred", "answered"]
CONTROL_COLUMNS = ["evaluator", "item", "gold", "own_correct", "control_accuracy", "n_others"]
DRAW_COLUMNS = ["draw", "items", "evaluator", "n", "correct", "accuracy"]


def majority(labels: Sequence[str]) -> str:
    """Most frequent label; ties broken in the order A, N, B."""
    counts = Counter(labels)
    return max(LABELS, key=lambda lab: (counts[lab], -LABELS.index(lab)))


def consensus(
    records: Sequence[Record], *, exclude: str | None = None, min_annotators: int = MIN_CONSENSUS_ANNOTATORS
) -> dict[str, str]:
    """item -> the label of a strict majority of its annotators (leaving out evaluator
    ``exclude``), for items with at least ``min_annotators`` of them and such a majority."""
    labels: dict[str, list[str]] = defaultdict(list)
    for r in records:
        if r.evaluator != exclude:
            labels[r.item].append(r.label)
    out = {}
    for item, labs in labels.items():
        if len(labs) < min_annotators:
            continue
        lab, n = Counter(labs).most_common(1)[0]
        if n * 2 > len(labs):
            out[item] = lab
    return out


def _validation(records: Sequence[Record], splits: pd.DataFrame) -> list[Record]:
    by_key = {(r.evaluator, r.item): r for r in records}
    val = splits[splits["role"] == "validation"].sort_values(["evaluator", "order"])
    return [by_key[(e, i)] for e, i in zip(val["evaluator"], val["item"])]


def reference_predictions(
    records: Sequence[Record], splits: pd.DataFrame, *, seed: int, majority_source: str
) -> pd.DataFrame:
    """The reference predictors' labels for every validation item (:data:`BASELINE_COLUMNS`)."""
    if majority_source not in ("all", "pool"):
        raise ValueError(f"majority_source must be 'all' or 'pool', not {majority_source!r}")
    val = _validation(records, splits)
    cons = consensus(records)
    global_label = majority([r.label for r in records])
    if majority_source == "all":
        own = {
            ev: majority([r.label for r in records if r.evaluator == ev])
            for ev in {r.evaluator for r in records}
        }
    else:
        by_key = {(r.evaluator, r.item): r.label for r in records}
        pool = splits[splits["role"] == "pool"]
        own = {
            ev: majority([by_key[(ev, i)] for i in part["item"]]) for ev, part in pool.groupby("evaluator")
        }
    rows = []
    for r in val:
        rng = random.Random(stable_seed("random-baseline", seed, r.evaluator, r.item))
        preds = {
            "random": rng.choice(LABELS),
            "oracle_consensus": cons.get(r.item),
            "global_majority": global_label,
            "evaluator_majority": own.get(r.evaluator),
        }
        for method in REFERENCE_METHODS:
            rows.append((method, r.evaluator, r.item, r.label, preds[method], preds[method] is not None))
    return pd.DataFrame(rows, columns=BASELINE_COLUMNS)


def cross_evaluator_control(predictions: pd.DataFrame, *, answered_only: bool = False) -> pd.DataFrame:
    """The control of section 14.5 for one cell's prediction table (evaluator, item, gold, pred):
    one row per target evaluator and matched item: whether the target's own prediction is right,
    and the mean correctness of the other evaluators' predictions against the target's gold (a
    missing prediction wrong; ``answered_only``: answered predictions only)."""
    rows_in = predictions[predictions["pred"].notna()] if answered_only else predictions
    by_item: dict[str, list[tuple[str, object]]] = defaultdict(list)
    for ev, item, pred in zip(rows_in["evaluator"], rows_in["item"], rows_in["pred"]):
        by_item[item].append((ev, pred))
    rows = []
    for ev, item, gold, pred in zip(rows_in["evaluator"], rows_in["item"], rows_in["gold"], rows_in["pred"]):
        others = [p for e, p in by_item[item] if e != ev]
        if not others:
            continue
        rows.append(
            (ev, item, gold, float(pred == gold), sum(p == gold for p in others) / len(others), len(others))
        )
    return pd.DataFrame(rows, columns=CONTROL_COLUMNS)


def random_draws(pairs: pd.DataFrame, *, draws: int, seed: int) -> pd.DataFrame:
    """Random Selection drawn ``draws`` times (seeded) over the validation pairs (evaluator, item,
    gold, consensus): per draw and evaluator the right guesses over all validation items and over
    the consensus-eligible ones (:data:`DRAW_COLUMNS`)."""
    pairs = pairs.sort_values(["evaluator", "item"]).reset_index(drop=True)
    rng = np.random.default_rng(stable_seed("random-draws", seed))
    gold = pairs["gold"].map({lab: i for i, lab in enumerate(LABELS)}).to_numpy()
    right = rng.integers(0, len(LABELS), size=(int(draws), len(pairs))) == gold
    eligible = pairs["consensus"].notna().to_numpy() if "consensus" in pairs.columns else None
    rows = []
    for items, mask in (("validation", np.ones(len(pairs), bool)), ("consensus-eligible", eligible)):
        if mask is None:
            continue
        for ev, idx in pairs[mask].groupby("evaluator", sort=True).groups.items():
            hits = right[:, np.asarray(idx)].sum(axis=1)
            n = len(idx)
            rows += [(d, items, ev, n, int(h), h / n) for d, h in enumerate(hits)]
    return pd.DataFrame(rows, columns=DRAW_COLUMNS)


def random_expected_prf(gold: Sequence[str]) -> pd.DataFrame:
    """Per label the expectation of uniform Random Selection over ``gold``: recall 1/3, precision
    = the label's share p of the gold labels, F1 = 2 p (1/3) / (p + 1/3); accuracy 1/3 whatever
    the shares."""
    counts = Counter(gold)
    n = sum(counts.values())
    rows = []
    for lab in LABELS:
        share = counts[lab] / n if n else float("nan")
        rows.append(
            {
                "label": lab,
                "precision": share,
                "recall": 1 / 3,
                "f1": 2 * share / 3 / (share + 1 / 3) if n else float("nan"),
                "support": counts[lab],
            }
        )
    return pd.DataFrame(rows)
