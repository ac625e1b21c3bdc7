"""The judges stage - where each judge stands (``workflow/rules/judges.smk``, results/judges/).

Per dataset, every judge of the run that labelled it - the live judges PERAS runs there, the
imported and the published judges - is compared with the human grades on the same pairs
(:func:`judgelab.analysis.standing.agreement_rows`: coverage, kappa, quadratic weighted kappa,
macro F1, ordinal alpha) and with each other (Cohen's kappa on the pairs both labelled: the
figure). The leaderboard puts them in one table, LLMJudge's Table 3 shape: kappa and alpha on the
labelled pairs beside Kendall's tau and Spearman's rho of the systems' order where the ranking
study ranks runs of the dataset (on each of its measures, against the human qrels: nDCG@10 and
Clarke's compatibility ``Compat`` in config/published-judges.yaml), and the coverage and width of
its prediction-powered estimate of the systems' scores (the ranking study's PPI table).

A published or imported judge's file is read as the import jobs read it
(:func:`judgelab.data.imported.read_judge`, a published file with its lines of unknown pairs or
out-of-scale labels dropped and counted: ``unknown``, ``out_of_scale``); a live judge's labels are
its PERAS judgment table (unparsed answers missing).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from judgelab.analysis.plotting import annotated_heatmap  # noqa: E402
from judgelab.analysis.render import fmt, html_table, markdown_table  # noqa: E402
from judgelab.analysis.standing import AGREEMENT_COLUMNS, agreement_rows, pairwise_kappa  # noqa: E402
from judgelab.data.imported import SourcePairs, read_judge  # noqa: E402
from judgelab.data.tables import read_dataset, read_judgments, read_tsv, write_tsv  # noqa: E402

log = logging.getLogger(__name__)

#: the agreement table's columns
COLUMNS = ["dataset", "judge", "kind", "describe", "scale", *AGREEMENT_COLUMNS, "unknown", "out_of_scale"]
#: the leaderboard's columns
LEADERBOARD = [*COLUMNS, "tau", "rho", "n_systems", "measure"]


def _labels(judge: Mapping, path: str, table: pd.DataFrame, source: SourcePairs | None) -> tuple:
    """A judge's (qid, docid, label) and its dropped-line counts."""
    if judge["kind"] == "live":
        j = read_judgments(path)
        return j[j["parsed"].astype(bool)][["qid", "docid", "label"]], 0, 0
    r = dict(judge.get("reading") or {})
    read = read_judge(
        path,
        table,
        source=source,
        scale=r.get("scale") or None,
        confidence_scale=r.get("confidence_scale") or None,
        drop=bool(r.get("drop")),
        score_range=tuple(r.get("score_range") or ()),
    )
    log.info("%s", read.log_line())
    got = read.labels.rename(columns={"score": "label"})  # a score judge's values (coverage only)
    return got[["qid", "docid", "label"]], read.counts.unknown, read.counts.out_of_scale


def agreement_job(
    pairs: str,
    files: Sequence[str],
    judges: list[dict],
    outputs: Mapping[str, str],
    qrels: str | None = None,
    topics: str | None = None,
) -> pd.DataFrame:
    """One dataset's judges (``judges``: the project's :attr:`~judgelab.wiring.facade.Project.standing`
    entries without their files, ``files`` in the same order) against the human grades of the
    dataset table ``pairs``: the agreement table (``outputs["table"]``) and the judges x judges kappa
    figure (``outputs["png"]``, ``outputs["pdf"]``). ``qrels``, ``topics``: the dataset's raw files
    (a file may label their pairs outside the selection: skipped)."""
    table = read_dataset(pairs)
    dataset = str(table["dataset"].iloc[0]) if len(table) else ""
    encoding = next((j["reading"].get("encoding") for j in judges if j.get("reading")), None)
    source = SourcePairs.read(qrels, topics, encoding) if qrels and topics else None
    labels, dropped = {}, {}
    for judge, path in zip(judges, files):
        got, unknown, out_of_scale = _labels(judge, path, table, source)
        labels[judge["name"]], dropped[judge["name"]] = got, (unknown, out_of_scale)
    scales = {j["name"]: j.get("scale") or "graded" for j in judges}
    rows = agreement_rows(table, labels, scales)
    rows.insert(0, "dataset", dataset)
    rows.insert(2, "kind", [j["kind"] for j in judges])
    rows.insert(3, "describe", [j["describe"] for j in judges])
    rows["unknown"] = [dropped[j["name"]][0] for j in judges]
    rows["out_of_scale"] = [dropped[j["name"]][1] for j in judges]
    write_tsv(rows[COLUMNS], outputs["table"])
    for r in rows.itertuples():
        log.info(
            "%s %s: %d of %d pairs labelled, kappa %s, alpha %s",
            dataset,
            r.judge,
            r.n_labelled,
            r.n_pairs,
            fmt(r.kappa),
            fmt(r.alpha),
        )
    matrix = pairwise_kappa(table, labels, scales)
    agreement_figure(matrix, dataset, outputs["png"], outputs["pdf"])
    return rows


def agreement_figure(matrix: pd.DataFrame, dataset: str, png: str, pdf: str) -> None:
    """The judges x judges Cohen's kappa (the human grades first) as an annotated heatmap."""
    n = len(matrix)
    size = max(4.0, 0.38 * n + 2.0)
    fig, ax = plt.subplots(figsize=(size, size))
    values = matrix.to_numpy(dtype=float)
    texts = [[fmt(v, 2) for v in row] for row in values]
    annotated_heatmap(ax, values, texts, cmap="viridis", vmin=-0.2, vmax=1.0, fontsize=max(4.0, 9 - 0.12 * n))
    ax.set_xticks(range(n), matrix.columns, rotation=90, fontsize=7)
    ax.set_yticks(range(n), matrix.index, fontsize=7)
    ax.set_title(f"{dataset}: Cohen's kappa between judges (pairs both labelled)", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=150)
    fig.savefig(pdf)
    plt.close(fig)


def _measure_columns(measures: Sequence[str]) -> list[str]:
    """The leaderboard's rank-correlation columns: ``tau``, ``rho`` on the first measure (named
    in ``measure``), ``tau:<m>``, ``rho:<m>`` on each further one."""
    return [f"{c}:{m}" for m in measures[1:] for c in ("tau", "rho")]


def _ranks(correlations: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
    """Per (dataset, judge): tau and rho against the human qrels on each measure (wide)."""
    out = pd.DataFrame(columns=["dataset", "judge", "tau", "rho", "n_systems", "measure"])
    corr = [read_tsv(p, {"judge": str, "reference": str, "measure": str}) for p in correlations]
    if not corr or not measures:
        return out
    c = pd.concat(corr, ignore_index=True)
    c = c[c["reference"] == "human"].rename(columns={"kendall_tau": "tau", "spearman": "rho"})
    if "dataset" not in c:
        c["dataset"] = ""
    out = c[c["measure"] == measures[0]][["dataset", "judge", "tau", "rho", "n_systems", "measure"]]
    for m in measures[1:]:
        more = c[c["measure"] == m][["dataset", "judge", "tau", "rho"]]
        out = out.merge(
            more.rename(columns={"tau": f"tau:{m}", "rho": f"rho:{m}"}), on=["dataset", "judge"], how="left"
        )
    return out


#: the PPI columns of the leaderboard (the ranking study's prediction-powered estimates)
PPI = ["ppi_n", "ppi_coverage", "ppi_width", "human_only_width"]


def _ppi(tables: Sequence[str], measure: str | None) -> pd.DataFrame:
    """Per (dataset, judge): the ranking study's prediction-powered estimate of the systems'
    scores (``target`` systems, against the human qrels, on ``measure``) at the smallest number of
    human-judged topics it draws: the interval's coverage and mean width, beside the human-only
    interval's width at the same n."""
    frames = [read_tsv(p, {"judge": str, "reference": str, "measure": str, "method": str}) for p in tables]
    if not frames or not measure:
        return pd.DataFrame(columns=["dataset", "judge", *PPI])
    t = pd.concat(frames, ignore_index=True)
    t = t[(t["reference"] == "human") & (t["measure"] == measure) & (t["target"] == "systems")]
    t = t[t["n"] == t.groupby(["dataset", "judge"])["n"].transform("min")]
    ppi = t[t["method"] == "ppi"][["dataset", "judge", "n", "coverage", "width"]]
    human = t[t["method"] == "human_only"][["dataset", "judge", "width"]]
    out = ppi.merge(human.rename(columns={"width": "human_only_width"}), on=["dataset", "judge"], how="left")
    return out.rename(columns={"n": "ppi_n", "coverage": "ppi_coverage", "width": "ppi_width"})[
        ["dataset", "judge", *PPI]
    ]


def leaderboard(
    agreement: Sequence[str], correlations: Sequence[str], measures: Sequence[str], ppi: Sequence[str] = ()
) -> pd.DataFrame:
    """Every dataset's agreement rows with the ranking study's Kendall's tau and Spearman's rho of
    the judge's system order against the human qrels' on each of ``measures`` (the study's; the
    first in ``tau``, ``rho``, ``measure``), where it ranks the dataset, and its prediction-powered
    estimate's coverage and width (:data:`PPI`, from the study's ``ppi`` tables, on the first
    measure); sorted by dataset, then kappa (highest first; n/a last)."""
    frames = [read_tsv(p, {"dataset": str, "judge": str}) for p in agreement]
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    measures = list(measures)
    out = rows.merge(_ranks(correlations, measures), on=["dataset", "judge"], how="left")
    out = out.merge(_ppi(ppi, measures[0] if measures else None), on=["dataset", "judge"], how="left")
    for c in _measure_columns(measures):
        if c not in out:
            out[c] = float("nan")
    out = out.sort_values(["dataset", "kappa"], ascending=[True, False], na_position="last", kind="stable")
    return out[[*LEADERBOARD, *_measure_columns(measures), *PPI]].reset_index(drop=True)


def leaderboard_job(
    agreement: Sequence[str],
    correlations: Sequence[str],
    ppi: Sequence[str],
    measures: list[str],
    outputs: Mapping[str, str],
) -> pd.DataFrame:
    """The leaderboard (:func:`leaderboard`) as TSV, Markdown and HTML (``outputs``: tsv, md, html)."""
    board = leaderboard(agreement, correlations, measures, ppi)
    write_tsv(board, outputs["tsv"])
    first = measures[0] if measures else None
    head = ["dataset", "judge", "kind", "scale", "labelled", "κ", "α", f"τ {first or ''}".strip(), "ρ"]
    head += [f"{c} {m}" for m in measures[1:] for c in ("τ", "ρ")]
    head += ["systems", "PPI n", "PPI coverage", "PPI width", "human-only width", "unknown", "out of scale"]
    cells = []
    for r in board.to_dict("records"):
        row = [
            r["dataset"],
            r["judge"],
            r["describe"],
            r["scale"],
            f"{int(r['n_labelled'])}/{int(r['n_pairs'])}",
            fmt(r["kappa"]),
            fmt(r["alpha"]),
            fmt(r["tau"]),
            fmt(r["rho"]),
        ]
        row += [fmt(r[c]) for c in _measure_columns(measures)]
        row += [
            _count(r["n_systems"]),
            _count(r["ppi_n"]),
            fmt(r["ppi_coverage"]),
            fmt(r["ppi_width"], 4),
            fmt(r["human_only_width"], 4),
            str(int(r["unknown"])),
            str(int(r["out_of_scale"])),
        ]
        cells.append(row)
    with open(outputs["md"], "w", encoding="utf-8") as fh:
        fh.write(markdown_table(head, cells))
    caption = (
        "Each judge against the human grades on the pairs it labelled (labelled: of the dataset's "
        "judged pairs; a binary judge against the grades binarised at 2, the TREC rule); tau and rho: "
        f"its order of the systems on {', '.join(measures) or 'n/a'} against the human qrels' (ranking "
        "study; Compat is Clarke's compatibility); PPI: the prediction-powered estimate of the "
        "systems' mean scores from n human-judged topics and the judge's labels of the rest (the "
        "smallest n the study draws; coverage of the full-qrels score and mean interval width, beside "
        "the human-only interval's width: results/ranking/tables/ppi.md has every n); unknown, out of "
        "scale: a published file's lines dropped - pairs the dataset's source files do not have (for "
        "a sample: every pair outside it) and labels outside the declared scale."
    )
    with open(outputs["html"], "w", encoding="utf-8") as fh:
        fh.write(html_table(pd.DataFrame(cells, columns=head), caption))
    log.info(
        "%d judges x datasets; tau and rho on %s where the ranking study ranks runs", len(board), measures
    )
    return board


def _count(value) -> str:
    return "" if pd.isna(value) else str(int(value))
