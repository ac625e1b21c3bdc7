"""A hand-made collection for the estimate from annotated labels (shared by
tests/ranking/test_ranking_annotated.py and tests/test_annotate_browser.py): the two topics of the
annotation fixture (tests/fixtures/annotate_pairs.tsv: 1001 with d1-d6, 2002 with e1-e6) and two
more topics only a judge labels (3003: f1-f4, 4004: g1-g4); three runs ordering each topic's
documents differently; a judge's qrels over all four topics. :func:`estimate` runs the ranking
study's estimate job (:func:`judgelab.studies.ranking.jobs.ppi_estimate_job`) on them with the
annotated qrels given."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgelab.data.tables import write_dataset, write_tsv
from judgelab.studies.ranking.jobs import DatasetFiles, ppi_estimate_job
from judgelab.studies.ranking.scores import score_runs
from judgelab.studies.ranking.settings import AnnotatedEstimate

TOPICS = {
    "1001": ["d1", "d2", "d3", "d4", "d5", "d6"],
    "2002": ["e1", "e2", "e3", "e4", "e5", "e6"],
    "3003": ["f1", "f2", "f3", "f4"],
    "4004": ["g1", "g2", "g3", "g4"],
}

#: The judge's label of every pair (qid, docid).
JUDGE = {
    **dict(zip((("1001", d) for d in TOPICS["1001"]), [3, 1, 0, 2, 0, 1])),
    **dict(zip((("2002", d) for d in TOPICS["2002"]), [2, 0, 2, 3, 1, 0])),
    **dict(zip((("3003", d) for d in TOPICS["3003"]), [1, 3, 0, 2])),
    **dict(zip((("4004", d) for d in TOPICS["4004"]), [0, 2, 1, 0])),
}

#: Each run's document order per topic, as positions in :data:`TOPICS` (the first retrieved first).
ORDERS = {
    "forward": lambda docs: list(docs),
    "backward": lambda docs: list(reversed(docs)),
    "middle": lambda docs: docs[len(docs) // 2 :] + docs[: len(docs) // 2],
}

MEASURE = "nDCG@10"


def runs() -> dict[str, dict[str, list[str]]]:
    """Run name -> topic -> documents in rank order."""
    return {name: {q: order(docs) for q, docs in TOPICS.items()} for name, order in ORDERS.items()}


def write_inputs(folder: Path) -> DatasetFiles:
    """The dataset table, the run files and the scores table (the judge's qrels, named ``judge``)."""
    folder.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame(
        [
            {"dataset": "fx", "qid": q, "query": f"query {q}", "docid": d, "passage": f"text {d}", "grade": g}
            for (q, d), g in JUDGE.items()
        ]
    )
    write_dataset(table, folder / "fx.tsv")
    files = []
    for name, ranked in runs().items():
        lines = [
            f"{q} Q0 {d} {rank} {100 - rank} {name}"
            for q, docs in ranked.items()
            for rank, d in enumerate(docs, start=1)
        ]
        f = folder / f"{name}.txt"
        f.write_text("\n".join(lines) + "\n")
        files.append(str(f))
    from judgelab.data.readers import read_run

    qrels = pd.DataFrame([(q, d, g) for (q, d), g in JUDGE.items()], columns=["qid", "docid", "relevance"])
    scored = score_runs({n: read_run(f, n) for n, f in zip(ORDERS, files)}, qrels, [MEASURE])
    write_tsv(
        scored.assign(qrels="judge")[["run", "qrels", "measure", "topic", "value", "judged_at_k"]],
        folder / "scores.tsv",
    )
    return DatasetFiles(pairs=str(folder / "fx.tsv"), runs=files, scores=str(folder / "scores.tsv"))


def estimate(
    folder: Path, annotated: list[str], chosen: str | None = None, alpha: float = 0.05
) -> pd.DataFrame:
    """The estimate job's table for the annotated qrels files ``annotated`` (outputs in ``folder``)."""
    files = write_inputs(folder / "inputs")
    settings = AnnotatedEstimate(
        dataset="fx", judges=("judge",), measures=(MEASURE,), run_names=tuple(ORDERS), alpha=alpha
    )
    outputs = {"tsv": str(folder / "ppi_estimate.tsv"), "md": str(folder / "ppi_estimate.md")}
    return ppi_estimate_job(files, annotated, settings, outputs, chosen)
