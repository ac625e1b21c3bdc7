"""The judges stage - where each judge stands (``workflow/rules/judges.smk``, results/judges/).

Per dataset, every judge of the run that labelled it - the live judges PERAS runs there, the
imported and the published judges - is compared with the human grades on the same pairs
(:func:`judgelab.analysis.standing.agreement_rows`: coverage, kappa, quadratic weighted kappa,
macro F1, ordinal alpha) and with each other (Cohen's kappa on the pairs both labelled: the
figure). The leaderboard puts them in one table, LLMJudge's Table 3 shape: kappa and alpha on the
labelled pairs beside Kendall's tau and Spearman's rho of the systems' order where the ranking
study ranks runs of the dataset (its first measure, against the human qrels).

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


def leaderboard(agreement: Sequence[str], correlations: Sequence[str], measure: str | None) -> pd.DataFrame:
    """Every dataset's agreement rows with the ranking study's Kendall's tau and Spearman's rho of
    the judge's system order against the human qrels' (on ``measure``, the study's first), where it
    ranks the dataset; sorted by dataset, then kappa (highest first; n/a last)."""
    frames = [read_tsv(p, {"dataset": str, "judge": str}) for p in agreement]
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    corr = [read_tsv(p, {"judge": str, "reference": str, "measure": str}) for p in correlations]
    ranks = pd.DataFrame(columns=["dataset", "judge", "tau", "rho", "n_systems", "measure"])
    if corr and measure:
        c = pd.concat(corr, ignore_index=True)
        c = c[(c["reference"] == "human") & (c["measure"] == measure)]
        if "dataset" not in c:
            c["dataset"] = ""
        ranks = c.rename(columns={"kendall_tau": "tau", "spearman": "rho"})[
            ["dataset", "judge", "tau", "rho", "n_systems", "measure"]
        ]
    out = rows.merge(ranks, on=["dataset", "judge"], how="left")
    out = out.sort_values(["dataset", "kappa"], ascending=[True, False], na_position="last", kind="stable")
    return out[LEADERBOARD].reset_index(drop=True)


def leaderboard_job(
    agreement: Sequence[str], correlations: Sequence[str], measure: str | None, outputs: Mapping[str, str]
) -> pd.DataFrame:
    """The leaderboard (:func:`leaderboard`) as TSV, Markdown and HTML (``outputs``: tsv, md, html)."""
    board = leaderboard(agreement, correlations, measure or None)
    write_tsv(board, outputs["tsv"])
    head = [
        "dataset",
        "judge",
        "kind",
        "scale",
        "labelled",
        "κ",
        "α",
        "τ",
        "ρ",
        "systems",
        "unknown",
        "out of scale",
    ]
    cells = [
        [
            r.dataset,
            r.judge,
            r.describe,
            r.scale,
            f"{int(r.n_labelled)}/{int(r.n_pairs)}",
            fmt(r.kappa),
            fmt(r.alpha),
            fmt(r.tau),
            fmt(r.rho),
            "" if pd.isna(r.n_systems) else str(int(r.n_systems)),
            str(int(r.unknown)),
            str(int(r.out_of_scale)),
        ]
        for r in board.itertuples()
    ]
    with open(outputs["md"], "w", encoding="utf-8") as fh:
        fh.write(markdown_table(head, cells))
    caption = (
        "Each judge against the human grades on the pairs it labelled (labelled: of the dataset's "
        "judged pairs; a binary judge against the grades binarised at 2, the TREC rule); tau and rho: "
        f"its order of the systems on {measure or 'n/a'} against the human qrels' (ranking study); "
        "unknown, out of scale: a published file's lines dropped - pairs the dataset's source files do "
        "not have (for a sample: every pair outside it) and labels outside the declared scale."
    )
    with open(outputs["html"], "w", encoding="utf-8") as fh:
        fh.write(html_table(pd.DataFrame(cells, columns=head), caption))
    log.info(
        "%d judges x datasets; tau and rho on %s where the ranking study ranks runs", len(board), measure
    )
    return board
