"""Simulation metrics (PersonaJudge sections 4.5, 5.1.3, 15).

Prediction tables are long: one row per method cell, evaluator and validation item with the
columns of :data:`CELL` plus ``evaluator``, ``item``, ``gold`` (A/N/B) and ``pred`` (A/N/B or
missing). A missing prediction (an unparsable answer) is counted in ``coverage`` (answered / all).

* **Accuracy**: three-class accuracy against the evaluator's own gold labels over every judgment,
  a missing prediction counting as wrong, as the paper scores (section 4.5: "comparing each
  simulated judgment ... with the corresponding evaluator's original human judgment"), so that
  cells with different parse failures are scored on the same items; ``accuracy_answered`` is the
  share right among the answered items (``simulation.metric: accuracy_answered``).
* **Deviation metrics** (section 15.2), over validation pairs whose item has a consensus (the
  label of a strict majority of all its annotators, :func:`.baselines.consensus`); a pair is a
  *deviation* when the evaluator's label differs from the consensus:

  - deviation accuracy = P(pred = gold | deviation), over every deviation pair (missing = wrong;
    ``deviation_accuracy_answered`` over the answered ones);
  - alignment lift = P(pred != consensus | deviation) - P(pred != consensus | conform), over the
    answered pairs (a missing prediction neither deviates nor conforms);
  - captured direction = P(pred = gold | deviation, pred != consensus) (chance 0.5).
* **Confusion matrices** (section 15.3): rows gold, columns prediction, order A, N, B; the
  row-normalised form has the recall on the diagonal. Per-class precision, recall and F1 (0
  where undefined, scikit-learn's ``zero_division=0``).
* **Evaluator traits** (section 5.1.3), over all of an evaluator's records: neutral rate, and
  deviation rate = the share of its items whose other annotators have a strict majority label
  that differs from the evaluator's (footnote 2: "the majority of the other annotators").
* **Correlations**: Pearson r (and p) of per-evaluator accuracy with neutral rate and with
  deviation rate, and the partial correlation of accuracy and deviation rate controlling for
  neutral rate (p from a t distribution with n - 3 degrees of freedom). No p-value over fewer
  than :data:`MIN_POINTS` points (a mock run on PandaLM's three annotators gave r = -0.9998,
  p = 0.011: a "significant" line through three points); r is still given.
* **Cross-task** (section 5.1.3, Figure 3): for evaluators who judged two tasks (two evaluator
  sets with different tasks and shared evaluator ids), the correlation across the tasks of their
  neutral rates and of their simulation accuracies.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgelab.analysis.agreement import transitions
from judgelab.studies.simulation.baselines import consensus
from judgelab.studies.simulation.data import LABELS, Record

CELL = ["method", "model", "demo_type", "shots"]
#: the fewest points a correlation's p-value is given for
MIN_POINTS = 4
ACCURACY_COLUMNS = CELL + ["evaluator", "n", "n_answered", "coverage", "accuracy", "accuracy_answered"]
#: the metrics a config may choose (``simulation.metric``)
METRICS = ("accuracy", "accuracy_answered")
PJ = "personajudge"
BASE_JUDGE = "base_judge"


def cell_method(shots: int) -> str:
    return BASE_JUDGE if int(shots) == 0 else PJ


def with_consensus(preds: pd.DataFrame, records: Sequence[Record]) -> pd.DataFrame:
    """``preds`` with ``consensus`` (the item's strict-majority label, or missing) and
    ``deviation`` (gold differs from it; missing without a consensus)."""
    cons = consensus(records)
    out = preds.copy()
    out["consensus"] = out["item"].map(cons)
    out["deviation"] = pd.Series(pd.NA, index=out.index, dtype="boolean")
    has = out["consensus"].notna()
    out.loc[has, "deviation"] = (out.loc[has, "gold"] != out.loc[has, "consensus"]).to_numpy()
    return out


def accuracy_row(df: pd.DataFrame) -> dict:
    n = len(df)
    ans = df[df["pred"].notna()]
    correct = int((ans["pred"] == ans["gold"]).sum())
    return {
        "n": n,
        "n_answered": len(ans),
        "coverage": len(ans) / n if n else math.nan,
        "accuracy": correct / n if n else math.nan,
        "accuracy_answered": correct / len(ans) if len(ans) else math.nan,
    }


def accuracy_table(preds: pd.DataFrame) -> pd.DataFrame:
    """One row per cell and evaluator: n, n_answered, coverage, accuracy (every judgment),
    accuracy_answered."""
    rows = [
        {**dict(zip(CELL + ["evaluator"], key)), **accuracy_row(g)}
        for key, g in preds.groupby(CELL + ["evaluator"], sort=True)
    ]
    return pd.DataFrame(rows, columns=ACCURACY_COLUMNS)


def deviation_metrics(df: pd.DataFrame) -> dict:
    """Section 15.2 metrics of a prediction table that has ``consensus`` and ``deviation``."""
    elig = df[df["consensus"].notna()]
    n_dev_all = int(elig["deviation"].sum())
    dev_all = elig[elig["deviation"].astype(bool)]
    ans = elig[elig["pred"].notna()]
    dev = ans[ans["deviation"].astype(bool)]
    conf = ans[~ans["deviation"].astype(bool)]
    model_dev_d = dev["pred"] != dev["consensus"]
    model_dev_c = conf["pred"] != conf["consensus"]

    def rate(mask) -> float:
        return float(mask.mean()) if len(mask) else math.nan

    moved = dev[model_dev_d]
    p_d, p_c = rate(model_dev_d), rate(model_dev_c)
    return {
        "n_eligible": len(elig),
        "n_deviation": n_dev_all,
        "human_deviation_rate": n_dev_all / len(elig) if len(elig) else math.nan,
        "n_deviation_answered": len(dev),
        "n_conform_answered": len(conf),
        "deviation_accuracy": rate(dev_all["pred"].notna() & (dev_all["pred"] == dev_all["gold"])),
        "deviation_accuracy_answered": rate(dev["pred"] == dev["gold"]),
        "p_model_deviates_given_deviation": p_d,
        "p_model_deviates_given_conform": p_c,
        "alignment_lift": p_d - p_c,
        "n_model_deviates_on_deviation": len(moved),
        "captured_direction": rate(moved["pred"] == moved["gold"]),
    }


def deviation_table(preds: pd.DataFrame, by: Sequence[str] = CELL) -> pd.DataFrame:
    rows = [
        {**dict(zip(by, key if isinstance(key, tuple) else (key,))), **deviation_metrics(g)}
        for key, g in preds.groupby(list(by), sort=True)
    ]
    return pd.DataFrame(rows)


def confusion(df: pd.DataFrame) -> np.ndarray:
    """3x3 counts, rows gold, columns prediction, order A, N, B (answered predictions only)."""
    return transitions(df["gold"], df["pred"], LABELS)[0]


def row_normalise(cm: np.ndarray) -> np.ndarray:
    cm = np.asarray(cm, dtype=float)
    rows = cm.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(rows > 0, cm / np.where(rows > 0, rows, 1), np.nan)


def per_class_prf(cm: np.ndarray) -> pd.DataFrame:
    """Precision, recall, F1 and support per label (0 where undefined)."""
    cm = np.asarray(cm, dtype=float)
    tp = np.diag(cm)
    pred_n, gold_n = cm.sum(axis=0), cm.sum(axis=1)
    precision = np.divide(tp, pred_n, out=np.zeros(3), where=pred_n > 0)
    recall = np.divide(tp, gold_n, out=np.zeros(3), where=gold_n > 0)
    s = precision + recall
    f1 = np.divide(2 * precision * recall, s, out=np.zeros(3), where=s > 0)
    return pd.DataFrame(
        {
            "label": list(LABELS),
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "support": gold_n.astype(int),
        }
    )


def confusion_table(preds: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Long confusion table: per group, gold, predicted: count and row share."""
    rows = []
    for key, g in preds.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        cm = confusion(g)
        norm = row_normalise(cm)
        for i, gold in enumerate(LABELS):
            for j, pred in enumerate(LABELS):
                rows.append(
                    {
                        **dict(zip(by, key)),
                        "gold": gold,
                        "pred": pred,
                        "count": int(cm[i, j]),
                        "row_share": norm[i, j],
                    }
                )
    return pd.DataFrame(rows)


def prf_table(preds: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    parts = []
    for key, g in preds.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        t = per_class_prf(confusion(g)).assign(**dict(zip(by, key)))
        parts.append(t[list(by) + ["label", "precision", "recall", "f1", "support"]])
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def label_distribution(preds: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Per group the share of A, N, B among the answered predictions (``source`` prediction)
    and among the gold labels of the same rows (``source`` human)."""
    rows = []
    for key, g in preds.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        for source, labels in (("prediction", g["pred"].dropna()), ("human", g["gold"])):
            counts = Counter(labels)
            rows.append(
                {
                    **dict(zip(by, key)),
                    "source": source,
                    "n": len(labels),
                    **{lab: counts[lab] / len(labels) if len(labels) else math.nan for lab in LABELS},
                }
            )
    return pd.DataFrame(rows)


def evaluator_traits(records: Sequence[Record]) -> pd.DataFrame:
    """Per evaluator: n, neutral rate, deviation rate against the other annotators' strict
    majority (over items that have one), and the label rates."""
    by_ev: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by_ev[r.evaluator].append(r)
    rows = []
    for ev in sorted(by_ev):
        recs = by_ev[ev]
        others = consensus(records, exclude=ev, min_annotators=2)
        judged = [r for r in recs if r.item in others]
        counts = Counter(r.label for r in recs)
        rows.append(
            {
                "evaluator": ev,
                "n": len(recs),
                **{f"rate_{lab}": counts[lab] / len(recs) for lab in LABELS},
                "neutral_rate": counts["N"] / len(recs),
                "n_with_others_majority": len(judged),
                "deviation_rate": (
                    sum(r.label != others[r.item] for r in judged) / len(judged) if judged else math.nan
                ),
            }
        )
    return pd.DataFrame(rows)


def pearson(x: Sequence[float], y: Sequence[float]) -> tuple[float, float, int]:
    """Pearson r and two-sided p over the pairs where both are finite; NaN r when undefined
    (fewer than 3 pairs or a constant variable), NaN p with fewer than :data:`MIN_POINTS` pairs."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(xa) & np.isfinite(ya)
    xa, ya = xa[ok], ya[ok]
    n = len(xa)
    if n < 3 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return math.nan, math.nan, n
    res = sps.pearsonr(xa, ya)
    return float(res.statistic), float(res.pvalue) if n >= MIN_POINTS else math.nan, n


def partial_correlation(
    x: Sequence[float], y: Sequence[float], z: Sequence[float]
) -> tuple[float, float, int]:
    """Partial correlation of x and y controlling for z, p from t with n - 3 degrees of freedom;
    NaN when undefined (fewer than 4 complete triples or a degenerate correlation)."""
    xa, ya, za = (np.asarray(a, dtype=float) for a in (x, y, z))
    ok = np.isfinite(xa) & np.isfinite(ya) & np.isfinite(za)
    xa, ya, za = xa[ok], ya[ok], za[ok]
    n = len(xa)
    if n < max(4, MIN_POINTS) or min(np.ptp(xa), np.ptp(ya), np.ptp(za)) == 0:
        return math.nan, math.nan, n
    rxy, rxz, ryz = (float(np.corrcoef(a, b)[0, 1]) for a, b in ((xa, ya), (xa, za), (ya, za)))
    den = math.sqrt((1 - rxz**2) * (1 - ryz**2))
    if den == 0:
        return math.nan, math.nan, n
    r = (rxy - rxz * ryz) / den
    df = n - 3
    if abs(r) >= 1:
        return float(np.sign(r)), 0.0, n
    t = r * math.sqrt(df / (1 - r**2))
    return r, float(2 * sps.t.sf(abs(t), df)), n


def _min_p(p: float) -> float:
    """The smallest p a correlation test can give: 0 (|r| = 1) where it gives one at all."""
    return 0.0 if math.isfinite(p) else math.nan


def _note(r: float, p: float, n: int) -> str:
    if n < 3:
        return f"{n} points: no correlation"
    if math.isnan(r):
        return "undefined (a constant variable)"
    if n < MIN_POINTS:
        return f"{n} points: no p-value (fewer than {MIN_POINTS})"
    return ""


def correlation_table(accuracy: pd.Series, traits: pd.DataFrame) -> pd.DataFrame:
    """Correlations of per-evaluator accuracy (indexed by evaluator) with its traits."""
    t = traits.set_index("evaluator").reindex(accuracy.index)
    acc = accuracy.to_numpy(dtype=float)
    rows = []
    for trait in ("neutral_rate", "deviation_rate"):
        r, p, n = pearson(acc, t[trait])
        rows.append(
            {
                "x": "accuracy",
                "y": trait,
                "control": "-",
                "r": r,
                "p": p,
                "min_p": _min_p(p),
                "n": n,
                "note": _note(r, p, n),
            }
        )
    r, p, n = partial_correlation(acc, t["deviation_rate"], t["neutral_rate"])
    note = _note(r, p, n) if n >= 4 or n < 3 else f"{n} points: no partial correlation (fewer than 4)"
    rows.append(
        {
            "x": "accuracy",
            "y": "deviation_rate",
            "control": "neutral_rate",
            "r": r,
            "p": p,
            "min_p": _min_p(p),
            "n": n,
            "note": note,
        }
    )
    return pd.DataFrame(rows)


def cross_task(sets: dict[str, tuple[str, pd.DataFrame, pd.Series]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The cross-task analysis of section 5.1.3 (Figure 3). ``sets``: evaluator set -> (its task,
    its evaluator traits, its per-evaluator PersonaJudge accuracy). For every pair of sets with
    different tasks and shared evaluators: per shared evaluator its neutral rate and accuracy in
    both (the points of Figure 3), and the Pearson r across the tasks of the neutral rates and of
    the accuracies (p from :data:`MIN_POINTS` evaluators). Returns (points, correlations)."""
    points, corr = [], []
    for (a, (task_a, tr_a, acc_a)), (b, (task_b, tr_b, acc_b)) in itertools.combinations(sets.items(), 2):
        if task_a == task_b:
            continue
        shared = sorted(set(tr_a["evaluator"]) & set(tr_b["evaluator"]))
        if not shared:
            continue
        na = tr_a.set_index("evaluator")["neutral_rate"].reindex(shared)
        nb = tr_b.set_index("evaluator")["neutral_rate"].reindex(shared)
        xa, xb = acc_a.reindex(shared), acc_b.reindex(shared)
        for ev in shared:
            points.append(
                {
                    "set_x": a,
                    "task_x": task_a,
                    "set_y": b,
                    "task_y": task_b,
                    "evaluator": ev,
                    "neutral_rate_x": na[ev],
                    "neutral_rate_y": nb[ev],
                    "accuracy_x": xa[ev],
                    "accuracy_y": xb[ev],
                }
            )
        for what, x, y in (("neutral_rate", na, nb), ("accuracy", xa, xb)):
            r, p, n = pearson(x.to_numpy(), y.to_numpy())
            corr.append(
                {
                    "set_x": a,
                    "task_x": task_a,
                    "set_y": b,
                    "task_y": task_b,
                    "measure": what,
                    "evaluators": len(shared),
                    "r": r,
                    "p": p,
                    "min_p": _min_p(p),
                    "n": n,
                    "note": _note(r, p, n),
                }
            )
    return pd.DataFrame(points), pd.DataFrame(corr)
