"""Cut the bundled offline sample (resources/sample) from the full TREC DL files.

The sample keeps the raw formats (qrels, topics, judged-text lines byte for byte, mojibake
included) so the default run exercises the same readers and repairs as a full run.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

from judgelab.data.labels import GRADES
from judgelab.data.readers import read_qrels, read_qrels_text, read_topics

TREC_FILES = {
    "dl19": ("qrels.dl19-passage.txt", "topics.dl19-passage.txt", "qrels_text.dl19.tsv"),
    "dl20": ("qrels.dl20-passage.txt", "topics.dl20.txt", "qrels_text.dl20.tsv"),
    "dl21": ("qrels.dl21-passage.txt", "topics.dl21.txt", "qrels_text.dl21.tsv"),
}


def cut_trec_sample(
    trec_dir: str | Path,
    name: str,
    out_dir: str | Path,
    *,
    n_queries: int = 3,
    per_grade: int = 3,
    seed: int = 13,
) -> dict:
    """Pick ``n_queries`` queries that have at least ``per_grade`` pairs of every grade 0-3, then
    ``per_grade`` pairs per grade of each, all with ``seed``; write qrels.txt, topics.txt and
    texts.tsv under ``out_dir/name``."""
    qrels_f, topics_f, texts_f = (Path(trec_dir) / f for f in TREC_FILES[name])
    qrels = read_qrels(qrels_f)
    topics = read_topics(topics_f)
    with open(texts_f, encoding="utf-8", newline="") as fh:
        raw_text_lines = fh.read().split("\n")
    texts = read_qrels_text(texts_f)
    assert len(texts) == len(qrels), "judged-text file not aligned with qrels"

    by_query: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, q in enumerate(qrels):
        by_query[q.qid][q.grade].append(i)
    eligible = sorted(
        qid for qid, g in by_query.items() if all(len(g[k]) >= per_grade for k in GRADES) and qid in topics
    )
    rng = random.Random(seed)
    chosen = sorted(rng.sample(eligible, n_queries))
    keep: list[int] = []
    for qid in chosen:
        for grade in GRADES:
            keep += rng.sample(by_query[qid][grade], per_grade)
    keep.sort()  # original file order

    out = Path(out_dir) / name
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "qrels.txt", "w", encoding="utf-8") as fh:
        for i in keep:
            q = qrels[i]
            fh.write(f"{q.qid} Q0 {q.docid} {q.grade}\n")
    with open(out / "topics.txt", "w", encoding="utf-8") as fh:
        for qid in chosen:
            fh.write(f"{qid}\t{topics[qid]}\n")
    with open(out / "texts.tsv", "w", encoding="utf-8", newline="") as fh:
        for i in keep:
            fh.write(raw_text_lines[texts[i][0] - 1] + "\n")
    return {"dataset": name, "queries": chosen, "pairs": len(keep)}
