"""Time the perturbation study's default cells (When LLM Judges Inflate Scores, section 3) on the
bundled sample.

The cells the default config is meant to run: dataset dl20 (bundled sample; ``--dataset``), one judge (the
embedded SmolLM2) with the PERAS w_cot template (``--template``) and the default (empty) persona, at most
``--per-label`` passages per query and predicted label, rewrites bounded to
``--rewrite-max-tokens``, the embedded model as rewriter and meaning checker. The jobs run layer
by layer as Snakemake would schedule them, ``--cores`` jobs at once (1 thread each), with a fresh
request cache (nothing answered from an earlier run). The original judgment (a PERAS cell the
default run has anyway) is timed apart.

    PYTHONPATH=workflow/src python3 tests/benchmarks/bench_perturbations_default.py --out /tmp/pbench
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

from judgelab import schema
from judgelab.data.prepare import build_trec_table
from judgelab.data.resources import resources_dir
from judgelab.data.tables import write_dataset
from judgelab.llm.prompts import load_template
from judgelab.studies.peras.jobs import judge_job
from judgelab.studies.perturbations import jobs as pj
from judgelab.studies.perturbations.insertions import INSERTION_VARIANTS
from judgelab.studies.perturbations.outcomes import VARIANTS
from judgelab.studies.perturbations.rewrites import REWRITE_VARIANTS
from judgelab.studies.perturbations.sampling import read_sample

MODEL = {"backend": "local", "n_ctx": 2048, "threads": 1, "name": "smollm2"}


def _timed(fn, *args, **kwargs) -> tuple[float, float]:
    """Wall and CPU seconds of one job (run in a worker process, as Snakemake runs a job)."""
    logging.basicConfig(level=logging.WARNING)
    t0, c0 = time.perf_counter(), time.process_time()
    fn(*args, **kwargs)
    return time.perf_counter() - t0, time.process_time() - c0


def _layer(pool: ProcessPoolExecutor, name: str, jobs: dict[str, tuple]) -> dict[str, tuple[float, float]]:
    t0 = time.perf_counter()
    futures = {k: pool.submit(_timed, fn, *args, **kwargs) for k, (fn, args, kwargs) in jobs.items()}
    times = {k: f.result() for k, f in futures.items()}
    print(
        f"{name}: wall {time.perf_counter() - t0:.1f} s; jobs (wall/CPU s) "
        + ", ".join(f"{k} {w:.1f}/{c:.1f}" for k, (w, c) in times.items()),
        flush=True,
    )
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--per-label", type=int, default=2)
    ap.add_argument("--rewrite-max-tokens", type=int, default=64)
    ap.add_argument("--judge-max-tokens", type=int, default=8)
    ap.add_argument("--template", default="w_cot", help="PERAS template of the judge (peras/<name>)")
    ap.add_argument("--dataset", default="dl20", help="bundled sample dataset (dl19, dl20)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cache = str(out / f"cache-{os.getpid()}.sqlite")
    sample_dir = resources_dir() / "sample" / args.dataset
    pairs = out / f"{args.dataset}.tsv"
    write_dataset(
        build_trec_table(
            args.dataset, sample_dir / "qrels.txt", sample_dir / "topics.txt", sample_dir / "texts.tsv"
        ),
        pairs,
    )
    settings = {
        "persona": "",
        "template": load_template(f"peras/{args.template}"),
        "model": MODEL,
        "max_tokens": args.judge_max_tokens,
        "placement": "user",
        "cache": cache,
    }
    judgments = out / "judgments.tsv"
    t, c = _timed(judge_job, str(pairs), str(judgments), **settings)
    j = pd.read_csv(judgments, sep="\t")
    print(
        f"original judgment (PERAS cell, not counted): {t:.1f} s wall, {c:.1f} s CPU, {len(j)} pairs, "
        f"{int(j['parsed'].sum())} parsed, labels {j['label'].value_counts().sort_index().to_dict()}"
    )

    t_start = time.perf_counter()
    sample = out / "samples" / "smollm2.tsv"
    pj.sample_job(str(pairs), str(judgments), str(sample), judge="smollm2", per_label=args.per_label, seed=42)
    s = read_sample(str(sample))
    print(
        f"sample: {len(s)} pairs, labels {s['label'].value_counts().sort_index().to_dict()}, "
        f"{int(((s['grade'] == 0) & (s['label'] == 0)).sum())} insertion candidates"
    )
    check = load_template("perturbations/meaning_check")
    rw = {
        "rewriter": MODEL,
        "max_tokens": args.rewrite_max_tokens,
        "check_max_tokens": 2,
        "cache": cache,
        "progress": False,
        "check_template": check,
    }
    layer1 = {}
    paths = {}
    for v in REWRITE_VARIANTS:
        paths[v] = out / "rewrites" / f"{v.lower()}.tsv"
        prompt = load_template(f"perturbations/{v.lower()}")
        layer1[f"rewrite {v}"] = (
            pj.rewrite_job,
            ([str(sample)], str(paths[v])),
            {"variant": v, "template": prompt, **rw},
        )
    for v in INSERTION_VARIANTS:
        paths[v] = out / "insertions" / f"{v.lower()}.tsv"
        kw = {"variant": v, "progress": False}
        if v == "SEM":
            kw.update(
                template=load_template("perturbations/sem"),
                rewriter=MODEL,
                max_tokens=32,
                max_attempts=3,
                cache=cache,
            )
        elif v == "LEX":
            kw.update(template=load_template("perturbations/lex"))
        sentences = out / "insertions" / f"{v.lower()}_sentences.tsv"
        layer1[f"insert {v}"] = (pj.insertion_job, ([str(sample)], str(paths[v]), str(sentences)), kw)
    rejudged = {v: out / "rejudged" / v.lower() / "smollm2.tsv" for v in VARIANTS}
    layer2 = {
        f"rejudge {v}": (
            pj.rejudge_job,
            (str(sample), str(paths[v]), str(rejudged[v])),
            {"variant": v, "progress": False, **settings},
        )
        for v in VARIANTS
    }
    with ProcessPoolExecutor(max_workers=args.cores) as pool:
        times = _layer(pool, "rewrites + insertions", layer1)
        times.update(_layer(pool, "re-judging", layer2))
    tables = out / "tables"
    pj.transitions_job(
        [str(rejudged[v]) for v in REWRITE_VARIANTS],
        [str(paths[v]) for v in REWRITE_VARIANTS],
        str(tables / "transitions.tsv"),
        str(tables / "shifts.tsv"),
        str(tables / "kept.tsv"),
        schema.default("perturbations.rewrite_filter"),
    )
    pj.distributions_job(
        [str(rejudged[v]) for v in INSERTION_VARIANTS],
        [str(paths[v]) for v in INSERTION_VARIANTS],
        str(tables / "distributions.tsv"),
        str(tables / "insertions.tsv"),
    )
    figs = out / "figures"
    pj.transition_figure_job(
        str(tables / "transitions.tsv"),
        str(figs / "transitions_smollm2.png"),
        str(figs / "transitions_smollm2.pdf"),
        dataset=args.dataset,
        judge="smollm2",
    )
    pj.insertion_figure_job(
        str(tables / "distributions.tsv"),
        str(figs / "insertions.png"),
        str(figs / "insertions.pdf"),
        dataset=args.dataset,
    )
    wall = time.perf_counter() - t_start
    tokens = 0
    for v in REWRITE_VARIANTS:
        r = pd.read_csv(paths[v], sep="\t")
        tokens += int(
            r["rewrite_prompt_tokens"].sum()
            + r["rewrite_completion_tokens"].sum()
            + r["check_prompt_tokens"].sum()
        )
    for v in VARIANTS:
        r = pd.read_csv(rejudged[v], sep="\t")
        tokens += int(r["prompt_tokens"].sum() + r["completion_tokens"].sum())
    print(
        f"perturbation cells: wall {wall:.1f} s on {args.cores} workers; jobs' CPU time "
        f"{sum(c for _, c in times.values()):.1f} s; rewrite, meaning-check and re-judge tokens "
        f"(prompt + completion; SEM not included) {tokens}"
    )
    print(pd.read_csv(tables / "kept.tsv", sep="\t").to_string(index=False))
    print(pd.read_csv(tables / "insertions.tsv", sep="\t").to_string(index=False))
    print(pd.read_csv(tables / "shifts.tsv", sep="\t").to_string(index=False))
    print(pd.read_csv(tables / "distributions.tsv", sep="\t").to_string(index=False))


if __name__ == "__main__":
    main()
