"""Prediction-powered estimates of systems' scores from a few human-judged topics and a judge on the
rest (``ranking.ppi``; :mod:`judgelab.analysis.ppi` holds the estimator).

Per dataset x judge (against its reference qrels) x measure and per n of ``ranking.ppi.n``: the
systems' mean metric and every system pair's difference, estimated over ``draws`` seeded draws of
n human-judged topics three ways - human-only (the reference's values on the n topics, the
classical normal interval), judge-only (the judge's values on all topics; no valid interval) and
PPI++ (the reference on the n topics, the judge on them and on the others). Against the target, the
mean over the dataset's topics under the reference (a finite population: the topics both qrels
score), each row reports coverage of the 1 - alpha intervals, mean width, bias and RMSE; pair rows
also the share of the pairs the reference separates on all topics (its paired test at
``ranking.correlation.sig_alpha``) that a method separates alike (its interval excludes 0 on the
same side; judge-only: the same paired test on the judge's values over all topics).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analysis.ppi import METHODS, pair_contrasts, separation, simulate, summarise
from judgelab.errors import InputError
from judgelab.studies.ranking.settings import PPISettings

log = logging.getLogger(__name__)

#: The columns of ppi.tsv, in order.
PPI_COLUMNS = [
    "dataset",
    "judge",
    "reference",
    "measure",
    "n",
    "n_topics",
    "population",
    "target",
    "n_targets",
    "method",
    "draws",
    "alpha",
    "coverage",
    "width",
    "bias",
    "rmse",
    "mean_lambda",
    "n_separated",
    "separated_alike",
]

POPULATION = "mean over the dataset's {n} topics under the reference (finite; drawn without replacement)"


def check_n(n: Sequence[int], n_topics: int, dataset: str) -> None:
    """An n the dataset cannot take (below 2, or not below its topics: the judge labels the rest)
    is one error naming ``ranking.ppi.n``."""
    bad = [x for x in n if not 2 <= x < n_topics]
    if bad:
        raise InputError(
            f"n = {bad[0]} human-judged topics on dataset {dataset}: it must be at least 2 and below "
            f"the dataset's {n_topics} topics (the judge labels the rest)",
            key="ranking.ppi.n",
        )


def _rows(
    human: pd.DataFrame, judge: pd.DataFrame, ids: dict[str, Any], settings: PPISettings
) -> list[dict[str, Any]]:
    from judgelab.studies.ranking.correlation import _pair_decisions

    n_topics, n_systems = human.shape
    check_n(settings.n, n_topics, ids["dataset"])
    contrasts, pairs = pair_contrasts(n_systems)
    h, j = human.to_numpy(float), judge.to_numpy(float)
    targets_h = np.hstack([h, h @ contrasts])
    targets_j = np.hstack([j, j @ contrasts])
    systems, pair_cols = np.arange(n_systems), np.arange(n_systems, n_systems + len(pairs))
    decisions = _pair_decisions(human, judge, settings.sig_alpha, settings.test)
    human_sep = np.where(decisions["human_sig"], decisions["human_sign"], 0).astype(int)
    judge_alike = (decisions["judge_sig"] & (decisions["judge_sign"] == decisions["human_sign"]))[
        human_sep != 0
    ]
    rows = []
    for n in settings.n:
        sim = simulate(targets_h, targets_j, n, settings.draws, settings.seed, settings.alpha)
        shares = separation(sim, pair_cols, human_sep) if pairs else {}
        if pairs and (human_sep != 0).any():
            shares["judge_only"] = float(judge_alike.mean())
        for target, columns in (("systems", systems), ("pairs", pair_cols)):
            if not len(columns):
                continue
            summary = summarise(sim, columns)
            for method in METHODS:
                e = sim.estimates[method]
                rows.append(
                    {
                        **ids,
                        "n": n,
                        "n_topics": n_topics,
                        "population": POPULATION.format(n=n_topics),
                        "target": target,
                        "n_targets": len(columns),
                        "method": method,
                        "draws": settings.draws,
                        "alpha": settings.alpha,
                        **summary[method],
                        "mean_lambda": float(e.lam[:, columns].mean()) if method == "ppi" else float("nan"),
                        "n_separated": int((human_sep != 0).sum()) if target == "pairs" else pd.NA,
                        "separated_alike": shares.get(method, float("nan"))
                        if target == "pairs"
                        else float("nan"),
                    }
                )
    return rows


def ppi_table(scores: dict[str, pd.DataFrame], settings: PPISettings) -> pd.DataFrame:
    """ppi.tsv's rows (:data:`PPI_COLUMNS`) from each dataset's scores table (``scores``: dataset ->
    :func:`judgelab.studies.ranking.tables.read_scores`)."""
    from judgelab.studies.ranking.correlation import align
    from judgelab.studies.ranking.tables import topic_table

    rows: list[dict[str, Any]] = []
    for dataset, judge, reference in settings.comparisons:
        for measure in settings.measures:
            table = scores[dataset]
            human, judged = align(topic_table(table, reference, measure), topic_table(table, judge, measure))
            ids = {"dataset": dataset, "judge": judge, "reference": reference, "measure": measure}
            new = _rows(human, judged, ids, settings)
            for r in new:
                if r["target"] == "systems":
                    log.info(
                        "%s / %s vs %s / %s, n = %d of %d topics, %s: coverage %.3f, width %.4f, bias %+.4f",
                        dataset,
                        judge,
                        reference,
                        measure,
                        r["n"],
                        r["n_topics"],
                        r["method"],
                        r["coverage"],
                        r["width"],
                        r["bias"],
                    )
            rows += new
    return pd.DataFrame(rows, columns=PPI_COLUMNS)


def ppi_markdown(table: pd.DataFrame) -> str:
    """The PPI table as Markdown: per dataset x judge x measure x n x target, the three methods'
    coverage / width / bias side by side."""
    from judgelab.analysis.render import fmt, markdown_table

    head = ["dataset", "judge", "measure", "n of topics", "target"]
    for m in METHODS:
        head += [f"{m} coverage", f"{m} width", f"{m} bias"]
    head += ["pairs separated (human, all topics)", "separated alike: human-only / judge-only / PPI"]
    rows = []
    keys = ["dataset", "judge", "reference", "measure", "n", "target"]
    for _, group in table.groupby(keys, sort=False):
        by = group.set_index("method")
        first = group.iloc[0]
        row = [
            str(first["dataset"]),
            f"{first['judge']} vs {first['reference']}",
            str(first["measure"]),
            f"{first['n']} of {first['n_topics']}",
            f"{first['target']} ({first['n_targets']})",
        ]
        for m in METHODS:
            row += [fmt(by.loc[m, "coverage"]), fmt(by.loc[m, "width"], 4), fmt(by.loc[m, "bias"], 4)]
        if first["target"] == "pairs":
            row += [
                str(first["n_separated"]),
                " / ".join(fmt(by.loc[m, "separated_alike"]) for m in METHODS),
            ]
        else:
            row += ["", ""]
        rows.append(row)
    note = (
        f"\nCoverage of the {1 - float(table['alpha'].iloc[0]):.0%} intervals (normal approximation) of the "
        "mean over the dataset's topics under the reference qrels - a finite population, the n "
        "topics drawn without replacement - over the seeded draws; judge-only has no valid interval "
        "(its bias is the point). Separated alike: of the pairs the reference's paired test separates "
        "on all topics, the share of (draw, pair) cells whose interval excludes 0 on the same side "
        "(judge-only: the same test on the judge's values)."
        if len(table)
        else ""
    )
    return markdown_table(head, rows) + note + "\n"


def ppi_figure(table: pd.DataFrame, png: str, pdf: str) -> None:
    """Interval width against n for human-only and PPI (judge-only has none: its RMSE is drawn,
    dashed), one panel per dataset x judge x measure (systems' means), each point labelled with
    its coverage."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from judgelab.analysis.plotting import save

    systems = table[table["target"] == "systems"]
    panels = list(systems.groupby(["dataset", "judge", "reference", "measure"], sort=False))
    cols = max(1, min(3, len(panels)))
    rows = max(1, -(-len(panels) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    styles = {
        "human_only": ("o-", "human-only"),
        "ppi": ("s-", "PPI++"),
        "judge_only": ("^--", "judge-only (RMSE)"),
    }
    for ax, ((dataset, judge, reference, measure), group) in zip(axes.ravel(), panels):
        for method in METHODS:
            g = group[group["method"] == method].sort_values("n")
            value = g["rmse"] if method == "judge_only" else g["width"]
            style, label = styles[method]
            ax.plot(g["n"], value, style, label=label)
            if method != "judge_only":
                for x, y, c in zip(g["n"], value, g["coverage"]):
                    ax.annotate(f"{c:.2f}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
        ax.set_title(f"{dataset}: {judge} vs {reference}, {measure}", fontsize=8)
        ax.set_xlabel("human-judged topics n")
        ax.set_ylabel("mean interval width (judge-only: RMSE)")
    for ax in axes.ravel()[len(panels) :]:
        ax.axis("off")
    if panels:
        axes.ravel()[0].legend(fontsize=7)
    fig.suptitle("Systems' means: interval width vs n (labels: coverage)", fontsize=9)
    fig.tight_layout()
    save(fig, png, pdf)
    plt.close(fig)
