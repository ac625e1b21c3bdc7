"""The ranking study's estimate from collected labels (``ranking.annotated``) end to end on TREC DL
2021, for each strategy of ``judgelab annotate choose``: the command chooses --topics topics (its
own process, the judge's labels and the 63 runs, no cap), an "annotator" labels every chosen pair
with its TREC grade and leaves the file's last topic half done, and the estimate job
(:func:`judgelab.studies.ranking.jobs.ppi_estimate_job`) reads the labels and the chosen-pairs
file: PPI++ for ``random``, the weighted estimate for ``stratified`` and ``active`` (each finished
topic's probability topic_inclusion x m / n; docs/studies/ranking.md).

    python3 workflow/benchmarks/annotated_estimate.py [--shared ../shared/data] [--seeds 20]
        [--topics 10] [--out DIR]

The target, known here, is each run's mean nDCG@10 over the 53 topics under the TREC grades of the
depth-10 pool: what labelling every topic's chosen pairs would give (a pool pair no one labelled is
non-relevant, trec_eval's rule). The judge is the published UMBRELA zero-shot GPT-4 labels of
Arabzadeh and Clarke. Per strategy and seed (``--seed`` of ``choose``): the estimator, the topics
finished, the share of the 63 runs whose 95% interval holds the target, the mean width and error,
the same for human-only, and the seconds the command and the job took. Writes ``annotated.tsv``
(every seed) and ``annotated.md`` (means per strategy) in ``--out``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from judgelab.analysis.render import fmt, markdown_table
from judgelab.annotate.choose import STRATEGIES
from judgelab.data.readers import read_qrels, read_run
from judgelab.data.tables import write_dataset, write_tsv
from judgelab.studies.ranking.jobs import DatasetFiles, ppi_estimate_job
from judgelab.studies.ranking.pool import pool_table
from judgelab.studies.ranking.scores import score_runs
from judgelab.studies.ranking.settings import AnnotatedEstimate

JUDGE = "published-judges/narabzad-2024/Methods/Umbrela_zeroshot/gpt4/umbrella_gpt-4_zeroshot_dl21.txt"
MEASURE = "nDCG@10"


def qrels_table(path: Path) -> pd.DataFrame:
    lines = read_qrels(path)
    return pd.DataFrame(
        [(x.qid, x.docid, int(x.grade)) for x in lines], columns=["qid", "docid", "relevance"]
    )


def dataset_table(shared: Path) -> pd.DataFrame:
    """DL21's judged pairs with their query, passage and grade (the dataset table's columns)."""
    with open(shared / "trec-dl/topics.dl21.txt", encoding="utf-8") as fh:
        topics = dict(line.rstrip("\n").split("\t", 1) for line in fh)
    with open(shared / "trec-dl/qrels_text.dl21.tsv", encoding="utf-8") as fh:
        texts = dict(line.rstrip("\n").split("\t", 1) for line in fh)
    rows = [
        {
            "dataset": "dl21",
            "qid": x.qid,
            "query": topics[x.qid],
            "docid": x.docid,
            "passage": texts.get(x.docid, ""),
            "grade": x.grade,
        }
        for x in read_qrels(shared / "trec-dl/qrels.dl21-passage.txt")
    ]
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[3] / "shared" / "data")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="annotated-estimate-"))
    out = args.out or work
    out.mkdir(parents=True, exist_ok=True)
    judge = args.shared / JUDGE

    table = dataset_table(args.shared)
    write_dataset(table, work / "dl21.tsv")
    run_files = sorted((args.shared / "trec-dl-runs/dl21").glob("input.*.txt"))
    names = [f.name[len("input.") : -len(".txt")] for f in run_files]
    runs = {n: read_run(f, n) for n, f in zip(names, run_files)}
    pool = pool_table(runs, table, 10)
    graded = pool[pool["human"].notna()][["qid", "docid", "human"]]
    graded = graded.rename(columns={"human": "relevance"}).astype({"relevance": int})
    grades = graded.set_index(["qid", "docid"])["relevance"]
    scored = score_runs(runs, qrels_table(judge), [MEASURE])
    columns = ["run", "qrels", "measure", "topic", "value", "judged_at_k"]
    write_tsv(scored.assign(qrels="umbrela")[columns], work / "scores.tsv")
    target_rows = score_runs(runs, graded, [MEASURE])
    per_topic = target_rows[target_rows["topic"] != "all"].pivot(index="topic", columns="run", values="value")
    target = per_topic.fillna(0.0).mean(axis=0)
    files = DatasetFiles(
        pairs=str(work / "dl21.tsv"), runs=[str(f) for f in run_files], scores=str(work / "scores.tsv")
    )
    settings = AnnotatedEstimate(
        dataset="dl21", judges=("umbrela",), measures=(MEASURE,), run_names=tuple(names), alpha=0.05
    )

    rows = []
    for strategy in STRATEGIES:
        for seed in range(1, args.seeds + 1):
            chosen = work / f"{strategy}-{seed}.tsv"
            cmd = [sys.executable, "-c", "from judgelab.cli import main; main()", "annotate", "choose"]
            cmd += [str(work / "dl21.tsv"), "--labels", str(judge), "--strategy", strategy]
            cmd += [
                "--topics",
                str(args.topics),
                "--cap",
                "100000",
                "--seed",
                str(seed),
                "--out",
                str(chosen),
            ]
            cmd += [a for f in run_files for a in ("--run", str(f))]
            start = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            choose_s = time.perf_counter() - start
            pairs = pd.read_csv(chosen, sep="\t", dtype=str, keep_default_na=False)
            order = list(dict.fromkeys(pairs["qid"]))
            lines = []
            for t in order:
                mine = pairs[pairs["qid"] == t]
                if t == order[-1]:
                    mine = mine.iloc[: len(mine) // 2]  # stopped half-way
                lines += [f"{t} 0 {d} {int(grades[(t, d)])}\n" for d in mine["docid"]]
            ana = work / f"ana-{strategy}-{seed}.qrels"
            ana.write_text("".join(lines))
            outputs = {"tsv": str(work / "estimate.tsv"), "md": str(work / "estimate.md")}
            start = time.perf_counter()
            est = ppi_estimate_job(files, [str(ana)], settings, outputs, str(chosen)).set_index("system")
            job_s = time.perf_counter() - start
            truth = target.loc[est.index]
            rows.append(
                {
                    "strategy": strategy,
                    "seed": seed,
                    "estimator": est["estimator"].iloc[0],
                    "finished": int(est["n_annotated"].iloc[0]),
                    "chosen": len(order),
                    "coverage": float(((est["ppi_low"] <= truth) & (truth <= est["ppi_high"])).mean()),
                    "width": float((est["ppi_high"] - est["ppi_low"]).mean()),
                    "error": float((est["ppi"] - truth).mean()),
                    "human_coverage": float(
                        ((est["human_low"] <= truth) & (truth <= est["human_high"])).mean()
                    ),
                    "human_width": float((est["human_high"] - est["human_low"]).mean()),
                    "judge_error": float((est["judge_only"] - truth).mean()),
                    "choose_s": choose_s,
                    "job_s": job_s,
                }
            )
            print(rows[-1], flush=True)
    result = pd.DataFrame(rows)
    write_tsv(result, out / "annotated.tsv")
    means = result.groupby("strategy", sort=False).agg(
        estimator=("estimator", "first"),
        seeds=("seed", "size"),
        coverage=("coverage", "mean"),
        width=("width", "mean"),
        error=("error", "mean"),
        abs_error=("error", lambda e: e.abs().mean()),
        human_coverage=("human_coverage", "mean"),
        human_width=("human_width", "mean"),
        job_s=("job_s", "median"),
    )
    head = ["strategy", "estimator", "seeds", "coverage", "width", "mean error", "mean |error|"]
    head += ["human-only coverage", "human-only width", "job s (median)"]
    body = [
        [
            s,
            r.estimator,
            str(r.seeds),
            fmt(r.coverage, 3),
            fmt(r.width, 3),
            fmt(r.error, 4),
            fmt(r.abs_error, 4),
        ]
        + [fmt(r.human_coverage, 3), fmt(r.human_width, 3), fmt(r.job_s, 2)]
        for s, r in means.iterrows()
    ]
    (out / "annotated.md").write_text(markdown_table(head, body) + "\n", encoding="utf-8")
    print(markdown_table(head, body))
    print(f"judge-only mean error {result['judge_error'].iloc[0]:.4f}; tables in {out}")


if __name__ == "__main__":
    main()
