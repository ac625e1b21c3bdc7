"""What an evaluator set can support: the agreement of its human annotators and how many pairs the
deviation metrics rest on (``results/simulation/{set}/annotators.tsv``, shown first in the report).

A simulation of *individual* evaluators only has something to find where the evaluators differ.
The PersonaJudge paper's annotators deviate from their item's consensus on 20-23% of their judgments
(section 15.2); PandaLM removed divergent items when it built its test set, so its three
annotators agree far more (Cohen's kappa 0.85-0.88, a deviation rate of about 4%), and the
deviation metrics of a PandaLM run rest on a handful of validation pairs. This table says so
before any accuracy is read.

One row per measure (:data:`COLUMNS`), ``scope``:

* ``pair`` - per evaluator pair, over the items both judged: n, raw agreement and Cohen's kappa
  (:func:`judgelab.analysis.agreement.cohen_kappa` over the labels coded as the paper codes them, 1 =
  prefer A, 2 = no preference, 3 = prefer B - unweighted, so the coding does not matter);
* ``set`` - over the evaluator set: Fleiss' kappa (statsmodels, over the items judged by the
  most common number of annotators, which it needs to be the same for every item),
  Krippendorff's alpha, nominal (:func:`judgelab.analysis.agreement.krippendorff_alpha_raters`, every
  item judged by at least two; a missing judgment is missing data), and the human deviation
  rate of section 15.2 (the judgments that differ from their item's consensus, over the items
  that have one);
* ``evaluator`` - per evaluator, over all its judgments: the neutral rate and the deviation rate
  (its label differs from the strict majority of the other annotators of the item, the paper's
  footnote 2; over the items that have one);
* ``validation`` - per evaluator and over the set, on the validation pairs the metrics score:
  the consensus-eligible pairs (the item has a strict majority of all its annotators) and among
  them the deviating pairs (the evaluator's label differs from it) - the pairs deviation accuracy
  rests on - and the conforming ones (the other half of alignment lift). Captured direction rests
  on the deviating pairs where the model deviates too, a count of each cell's predictions (the
  deviation table's ``n_model_deviates_on_deviation``).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analysis.agreement import cohen_kappa, krippendorff_alpha_raters
from judgelab.studies.simulation.baselines import consensus
from judgelab.studies.simulation.data import LABELS, Record
from judgelab.studies.simulation.metrics import evaluator_traits

#: the paper's coding of a three-class judgment (section 14)
CODES: dict[str | None, int] = {"A": 1, "N": 2, "B": 3}  # looked up with None too: no label
COLUMNS = ["scope", "evaluator_x", "evaluator_y", "measure", "value", "n", "note"]


def fleiss(records: Sequence[Record]) -> tuple[float, int, int]:
    """Fleiss' kappa (statsmodels ``fleiss_kappa``) over the items judged by the most common
    number of annotators (at least 2): (kappa, items, annotators per item); NaN when undefined."""
    from statsmodels.stats.inter_rater import fleiss_kappa

    by_item: dict[str, list[str]] = defaultdict(list)
    for r in records:
        by_item[r.item].append(r.label)
    sizes = Counter(len(v) for v in by_item.values() if len(v) >= 2)
    if not sizes:
        return math.nan, 0, 0
    m = max(sizes, key=lambda k: (sizes[k], k))
    table = np.array([[labs.count(lab) for lab in LABELS] for labs in by_item.values() if len(labs) == m])
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = float(fleiss_kappa(table, method="fleiss"))
    return (kappa if math.isfinite(kappa) else math.nan), len(table), m


def annotator_table(records: Sequence[Record], splits: pd.DataFrame) -> pd.DataFrame:
    """The table described in the module docstring (:data:`COLUMNS`)."""
    label = {(r.evaluator, r.item): r.label for r in records}
    evaluators = sorted({r.evaluator for r in records})
    items = sorted({r.item for r in records})
    rows = []
    for a, b in itertools.combinations(evaluators, 2):
        shared = [i for i in items if (a, i) in label and (b, i) in label]
        x = [CODES[label[(a, i)]] for i in shared]
        y = [CODES[label[(b, i)]] for i in shared]
        agree = sum(u == v for u, v in zip(x, y))
        rows.append(
            ("pair", a, b, "raw agreement", agree / len(shared) if shared else math.nan, len(shared), "")
        )
        kappa = cohen_kappa(x, y, labels=(1, 2, 3)) if shared else math.nan
        rows.append(("pair", a, b, "Cohen's kappa", kappa, len(shared), ""))
    kappa, n_items, m = fleiss(records)
    rows.append(
        (
            "set",
            "all",
            "-",
            "Fleiss' kappa",
            kappa,
            n_items,
            f"items judged by {m} annotators" if n_items else "no item judged by two or more annotators",
        )
    )
    raters = [[CODES.get(label.get((ev, i)), math.nan) for i in items] for ev in evaluators]
    alpha = krippendorff_alpha_raters(raters, level="nominal") if len(evaluators) >= 2 else math.nan
    n_pairable = sum(sum((ev, i) in label for ev in evaluators) >= 2 for i in items)
    rows.append(
        ("set", "all", "-", "Krippendorff's alpha (nominal)", alpha, n_pairable, "items judged by 2 or more")
    )
    cons = consensus(records)
    eligible = [r for r in records if r.item in cons]
    deviating = sum(r.label != cons[r.item] for r in eligible)
    rows.append(
        (
            "set",
            "all",
            "-",
            "human deviation rate",
            deviating / len(eligible) if eligible else math.nan,
            len(eligible),
            "judgments that differ from their item's consensus (PersonaJudge section 15.2: 20.2% / 23.3%)",
        )
    )
    traits = evaluator_traits(records).set_index("evaluator")
    for ev in evaluators:
        t = traits.loc[ev]
        rows.append(
            ("evaluator", ev, "-", "neutral rate", float(t["neutral_rate"]), int(t["n"]), "all its judgments")
        )
        rows.append(
            (
                "evaluator",
                ev,
                "-",
                "deviation rate",
                float(t["deviation_rate"]),
                int(t["n_with_others_majority"]),
                "label differs from the other annotators' strict majority",
            )
        )
    val = splits[splits["role"] == "validation"]
    totals: Counter[str] = Counter()
    for ev, part in val.groupby("evaluator", sort=True):
        eligible_items = [i for i in part["item"] if i in cons]
        deviating = sum(label[(ev, i)] != cons[i] for i in eligible_items)
        counts = {
            "validation pairs": (len(part), ""),
            "consensus-eligible validation pairs": (
                len(eligible_items),
                "the item has a strict majority label",
            ),
            "deviating validation pairs": (deviating, "deviation accuracy rests on these"),
            "conforming validation pairs": (
                len(eligible_items) - deviating,
                "the other half of alignment lift",
            ),
        }
        for measure, (value, note) in counts.items():
            rows.append(("validation", ev, "-", measure, value, len(part), note))
            totals[measure] += value
    n_val = totals["validation pairs"]
    for measure in (
        "validation pairs",
        "consensus-eligible validation pairs",
        "deviating validation pairs",
        "conforming validation pairs",
    ):
        note = ""
        if measure == "deviating validation pairs":
            elig = totals["consensus-eligible validation pairs"]
            rate = totals[measure] / elig if elig else math.nan
            note = f"deviation accuracy of every cell rests on these ({rate:.1%} of the eligible pairs)"
        rows.append(("validation", "all", "-", measure, totals[measure], n_val, note))
    return pd.DataFrame(rows, columns=COLUMNS)
