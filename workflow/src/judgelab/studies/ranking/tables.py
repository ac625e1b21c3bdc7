"""The tables of the ranking study: their columns and readers, one comparison row, and the
leaderboard shaped like LLMJudge's Table 3.

* ``scores.tsv`` (:data:`SCORES_COLUMNS`): run, qrels (``human``, a judge, or ``human+<judge>``
  with ``unjudged: fill``), measure, topic (a qid, or ``all`` for the mean over the run's scored
  topics), value, judged_at_k - concatenated from the per run x qrels files of the scoring jobs.
* ``correlations.tsv`` (:data:`CORRELATION_COLUMNS`): per dataset x judge x measure, the judge's
  system ranking against its reference's (:func:`compare`) and the label agreement on the pool
  (:func:`judgelab.studies.ranking.pool.label_agreement`).
* ``leaderboard.{tsv,md,tex,html}`` (:func:`leaderboard`, :func:`render_leaderboard`): judge,
  Cohen's kappa, Krippendorff's alpha, Kendall's tau, Spearman's rho (Rahmani et al. 2024,
  "LLMJudge: LLMs for Relevance Judgments", Table 3), tau_gap and tau_gap@k, and the systems'
  Bland-Altman bias and limits of agreement, per dataset and measure. A judge that gives
  scores has kappa n/a and alpha only after ``ranking.score_alpha``'s map, which ``alpha_map``
  names (the renderings show an "α map" column when a row has one).
"""

from __future__ import annotations

import logging

import pandas as pd

from judgelab.analysis import render
from judgelab.data.tables import read_tsv
from judgelab.llm.pricing import COST_COLUMNS
from judgelab.studies.ranking.correlation import CORRELATION_KEYS, align, correlations, ranking_order
from judgelab.studies.ranking.pool import AGREEMENT_KEYS
from judgelab.studies.ranking.scores import ALL
from judgelab.studies.ranking.settings import CorrelationSettings

log = logging.getLogger("judgelab")

#: Columns of ``scores.tsv`` and of every per run x qrels score file.
SCORES_COLUMNS = ["run", "qrels", "measure", "topic", "value", "judged_at_k"]

#: The system level's Bland-Altman bias and 95% limits of agreement of the judge's mean scores
#: against the reference's (:mod:`judgelab.studies.ranking.values`), in ``correlations.tsv``, the
#: leaderboard and the robustness table.
VALUE_COLUMNS = ["ba_bias", "ba_loa_low", "ba_loa_high"]

#: Columns of ``correlations.tsv``.
CORRELATION_COLUMNS = (
    ["dataset", "judge", "reference", "measure"]
    + CORRELATION_KEYS
    + VALUE_COLUMNS
    + AGREEMENT_KEYS
    + ["reference_judged_at_k", "judge_judged_at_k"]
    + COST_COLUMNS
    + ["judge_template", "judge_persona"]
)

#: (title, column, digits) of the leaderboard's metric columns (LLMJudge Table 3).
LEADERBOARD_METRICS = [
    ("Cohen's κ", "kappa", 3),
    ("Krippendorff's α", "alpha", 3),
    ("Kendall's τ", "tau", 3),
    ("Spearman's ρ", "rho", 3),
    ("τ_gap", "tau_gap", 3),
    ("τ_gap@k", "tau_gap_at_k", 3),
    ("Bias", "ba_bias", 3),
    ("LoA low", "ba_loa_low", 3),
    ("LoA high", "ba_loa_high", 3),
]
#: The same titles in LaTeX.
_TEX_TITLES = {
    "kappa": r"Cohen's $\kappa$",
    "alpha": r"Krippendorff's $\alpha$",
    "tau": r"Kendall's $\tau$",
    "rho": r"Spearman's $\rho$",
    "tau_gap": r"$\tau_{\mathrm{gap}}$",
    "tau_gap_at_k": r"$\tau_{\mathrm{gap}}@k$",
    "usd_per_1k": r"\$ / 1k judgments",
}
LEADERBOARD_COLUMNS = [
    "dataset",
    "measure",
    "judge",
    "reference",
    "kappa",
    "alpha",
    "alpha_map",
    "tau",
    "rho",
    "tau_gap",
    "tau_gap_at_k",
    *VALUE_COLUMNS,
    *COST_COLUMNS,
    "judge_template",
    "judge_persona",
]

#: The rendered column naming the map a score judge's alpha took (shown when a row has one).
ALPHA_MAP = ("α map", "alpha_map", None)

#: (title, column, digits) of the leaderboard's cost columns, beside the metrics.
LEADERBOARD_COSTS = [("Calls", "calls", 0), ("$ / 1k judgments", "usd_per_1k", 4), ("Model s", "model_s", 1)]

TABLE_FORMATS = render.TABLE_FORMATS


def read_scores(path) -> pd.DataFrame:
    """A scores table (ids as strings; the columns :data:`SCORES_COLUMNS`)."""
    return read_tsv(path, {"run": str, "qrels": str, "measure": str, "topic": str})[SCORES_COLUMNS]


def read_correlations(path) -> pd.DataFrame:
    return read_tsv(path, {"dataset": str, "judge": str, "reference": str, "measure": str})


def topic_table(scores: pd.DataFrame, qrels: str, measure: str) -> pd.DataFrame:
    """The topic x run matrix of one qrels and measure (topic ``all`` left out). A run without
    documents for a topic that other runs are scored on has no row there: it scores 0 on it, as
    ``trec_eval -c`` gives (every run is compared on the same topics)."""
    sel = scores[(scores["qrels"] == qrels) & (scores["measure"] == measure) & (scores["topic"] != ALL)]
    wide = sel.pivot(index="topic", columns="run", values="value")
    runs = sorted(scores.loc[(scores["qrels"] == qrels) & (scores["measure"] == measure), "run"].unique())
    wide = wide.reindex(columns=runs)
    n_missing = int(wide.isna().to_numpy().sum())
    if n_missing:
        log.info(
            "%s, %s: %d run x topic cells without documents score 0 (trec_eval -c)", qrels, measure, n_missing
        )
    return wide.fillna(0.0).astype(float)


def mean_judged(scores: pd.DataFrame, qrels: str, measure: str) -> float:
    """The mean over runs of the ``all`` row's judged_at_k (the share of each run's top k the
    qrels label, averaged over its topics)."""
    sel = scores[(scores["qrels"] == qrels) & (scores["measure"] == measure) & (scores["topic"] == ALL)]
    return float(sel["judged_at_k"].mean()) if len(sel) else float("nan")


def compare(
    scores: pd.DataFrame,
    reference: str,
    judge: str,
    measure: str,
    settings: CorrelationSettings | None = None,
) -> dict[str, float | int]:
    """The rank correlations of the judge's system ranking against the reference's on one measure
    (:func:`judgelab.studies.ranking.correlation.correlations` with ``settings``: k, p, n_boot,
    seed, ci_alpha, sig_alpha, test; None: the defaults). The systems are compared on the topics both score: a topic
    the judge labelled nothing in has no score under its qrels and is left out (``n_topics``)."""
    ref = topic_table(scores, reference, measure)
    jud = topic_table(scores, judge, measure)
    dropped = sorted(set(ref.index) - set(jud.index))
    if dropped:
        log.info(
            "%s vs %s, %s: %d of the reference's %d topics have no judge label, left out: %s",
            judge,
            reference,
            measure,
            len(dropped),
            len(ref.index),
            ", ".join(dropped[:10]) + (" ..." if len(dropped) > 10 else ""),
        )
    if not len(set(ref.index) & set(jud.index)):
        log.warning(
            "%s vs %s, %s: the judge labels no pair on any topic the reference scores: its "
            "ranking agreement is undefined (n/a)",
            judge,
            reference,
            measure,
        )
        undefined = dict.fromkeys(CORRELATION_KEYS, float("nan"))
        return {**undefined, "n_systems": len(ref.columns), "n_topics": 0}
    return correlations(ref, jud, settings)


def leaderboard(correlations_: pd.DataFrame) -> pd.DataFrame:
    """LLMJudge Table 3 from correlations tables: per dataset x measure x judge, Cohen's kappa and
    Krippendorff's alpha of the labels on the pool, Kendall's tau and Spearman's rho of the system
    rankings, tau_gap and tau_gap@k (the gap-weighted tau, over every system and over the
    reference's top k), the Bland-Altman bias and 95% limits of agreement of the systems' mean
    scores (judge - reference; :data:`VALUE_COLUMNS`) (columns :data:`LEADERBOARD_COLUMNS`), in
    the tables' order."""
    if correlations_.empty:
        return pd.DataFrame(columns=LEADERBOARD_COLUMNS)
    out = correlations_.rename(columns={"kendall_tau": "tau", "spearman": "rho"})
    for col in LEADERBOARD_COLUMNS:  # correlations tables written before the cost columns
        if col not in out.columns:
            out[col] = pd.NA
    return out[LEADERBOARD_COLUMNS].reset_index(drop=True)


def render_leaderboard(board: pd.DataFrame, fmt: str) -> str:
    """The leaderboard as ``md``, ``tex`` or ``html`` (undefined values ``n/a``)."""
    ids = ["dataset", "measure", "judge", "reference"]
    id_titles = ["Dataset", "Measure", "Judge", "Reference"]
    metrics: list[tuple[str, str, int | None]] = list(LEADERBOARD_METRICS)
    if has_alpha_map(board):  # alpha after a declared map: the map beside it
        metrics.insert(2, ALPHA_MAP)
    shown_cols = metrics + LEADERBOARD_COSTS

    def cell(value, digits: int | None) -> str:
        if digits is None:
            return "" if render.is_missing(value) else str(value)
        if digits == 0 and not render.is_missing(value):
            return f"{int(value):,}"
        return render.fmt(value, digits)

    rows = [
        (shown, [cell(r[col], digits) for _, col, digits in shown_cols])
        for shown, r in render.id_cells(board, ids)
    ]
    titles = id_titles + [t for t, _, _ in shown_cols]
    aligns = ["l"] * len(ids) + ["l" if digits is None else "r" for _, _, digits in shown_cols]
    if fmt == "md":
        return render.markdown_table(titles, [s + v for s, v in rows], aligns)
    if fmt == "tex":
        esc = render.tex_escape
        head = [
            " & ".join(
                [esc(t) for t in id_titles]
                + [_TEX_TITLES.get(c, esc(t)) for t, c, _ in metrics]
                + [_TEX_TITLES.get(c, esc(t)) for t, c, _ in LEADERBOARD_COSTS]
            )
        ]
        return render.latex_table(
            "".join(aligns),
            head,
            [[esc(x) for x in s] + [esc(x.replace(" -> ", " → ")) for x in v] for s, v in rows],
        )
    if fmt == "html":
        return render.html_table(
            pd.DataFrame([s + v for s, v in rows], columns=titles),
            caption="Label agreement on the pool and system-ranking agreement (LLMJudge Table 3), and what the judge's labels cost",
        )
    raise ValueError(f"unknown table format {fmt!r} (md, tex or html)")


def has_alpha_map(table: pd.DataFrame) -> bool:
    """Whether a row of ``table`` names the map its alpha took (a score judge's, ``alpha_map``)."""
    if "alpha_map" not in table.columns:
        return False
    return bool(table["alpha_map"].map(lambda v: not render.is_missing(v) and str(v) != "").any())


def system_means(scores: pd.DataFrame, reference: str, judge: str, measure: str) -> pd.DataFrame:
    """Each system's mean score under the reference and under the judge over the topics both
    score, as :func:`compare` ranks them: index runs (sorted), columns ``reference``, ``judge``."""
    ref, jud = topic_table(scores, reference, measure), topic_table(scores, judge, measure)
    if not len(set(ref.index) & set(jud.index)):  # no common topic: the judge's means are undefined
        return pd.DataFrame({reference: ref.mean(axis=0), judge: float("nan")}).sort_index()
    ref, jud = align(ref, jud)
    return pd.DataFrame({reference: ref.mean(axis=0), judge: jud.mean(axis=0)})


def ranks(values: pd.Series) -> pd.Series:
    """Rank 1 = the best of ``values`` (the order of
    :func:`judgelab.studies.ranking.correlation.ranking_order`: score descending, ties by run name)."""
    order = ranking_order(values)
    return pd.Series({run: i + 1 for i, run in enumerate(order)}).reindex(values.index.astype(str))
