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


#: The LLMJudge slice of the bundled sample: four test topics with pairs of every grade (475 pairs)
LLMJUDGE_TOPICS = ("q1", "q15", "q22", "q36")


def cut_llmjudge_slice(
    llmjudge_dir: str | Path, published_dir: str | Path, out_dir: str | Path, topics=LLMJUDGE_TOPICS
) -> dict[str, int]:
    """The bundled LLMJudge slice: the test qrels' lines (with the human labels) and the queries of
    ``topics``, and each of the 33 submissions' lines of the same pairs
    (``<out>/published/llmjudge-<submission>.txt``), every line byte for byte as in the source
    files (``llmjudge_dir``: the LLMJudge ``data/`` files; ``published_dir``: the
    LLMJudge-benchmark ``submissions/scores`` files). No passage text: the slice is judged by the
    published judges only. Returns the lines written per file."""
    keep = set(topics)
    out = Path(out_dir)
    (out / "published").mkdir(parents=True, exist_ok=True)
    counts = {}

    def cut(src: Path, dest: Path, sep: str | None) -> None:
        lines = [
            line
            for line in src.read_text(encoding="utf-8").splitlines(keepends=True)
            if line.strip() and line.split(sep, 1)[0] in keep
        ]
        dest.write_text("".join(lines), encoding="utf-8")
        counts[dest.relative_to(out).as_posix()] = len(lines)

    cut(Path(llmjudge_dir) / "llmjudge_test_qrel_idx.txt", out / "qrels.txt", None)
    cut(Path(llmjudge_dir) / "llm4eval_query_2024.txt", out / "topics.txt", "\t")
    for f in sorted(Path(published_dir).glob("*.txt")):
        cut(f, out / "published" / f"llmjudge-{f.stem}.txt", None)
    return counts
