"""Which topics should a person label? The choosing strategies of ``judgelab annotate choose``
(random, stratified by the judge's label mix, active: proportional to the judge's shortfall with a
floor) compared at equal n on TREC DL 2021 with the published judges, by the weighted PPI estimate
of the 63 runs' scores (docs/annotate.md, "Which strategy").

    python3 workflow/benchmarks/choose_strategies.py [--results DIR] [--shared ../shared/data]
        [--draws 500] [--seed 0] [--n 5 10 20] [--measure nDCG@10] [--floor 0.5] [--out DIR]

``--results``: the run folder of ``config/published-judges.yaml`` (its
``results/ranking/dl21/scores.tsv`` and ``pool.tsv``); without it, the ranking study's DL21 scores
and pool are made in a fresh folder with the local copies in ``--shared`` (the overlay of
``published_judges.py``: no download, no model call). For every judge of the scores table and every
n: ``--draws`` seeded samples of n topics per strategy (the same seed gives the same table), the
weighted PPI interval of each run's mean score and of each run pair's difference, against the mean
over all topics under the human qrels: coverage of the 95% intervals, mean width, and the share of
the run pairs the human qrels separate on all topics (paired t-test at 0.05, the ranking study's
default) whose interval excludes 0 on the same side. Beside them, for reference, the random draws
with the PPI++ estimate of ``results/ranking/tables/ppi.md`` (unweighted, the judge on the other
topics). Writes ``strategies.tsv`` (per judge), ``strategies.md`` (pooled over the judges every
strategy could be simulated for: the stratified one needs the judge's label on each topic's pool)
and ``strategies.json`` (the default :func:`judgelab.annotate.simulation.default_strategy` picks)
in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from judgelab.analysis.ppi import pair_contrasts, separation, simulate, summarise
from judgelab.analysis.render import fmt, markdown_table
from judgelab.annotate.choose import DEFAULT_FLOOR, active_design, random_design, stratified_design
from judgelab.annotate.simulation import WEIGHTED, default_strategy, simulate_design
from judgelab.schema import default
from judgelab.studies.ranking.correlation import _pair_decisions, align
from judgelab.studies.ranking.tables import read_scores, topic_table

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

STRATEGIES = ("random", "stratified", "active")
REFERENCE = "random, PPI++ of ppi.md"
NOMINAL, SLACK = 0.95, 0.02


def make_results(shared: Path) -> Path:
    """The DL21 scores and pool of the published-judges config, made in a fresh folder."""
    from published_judges import overlay

    out = Path(tempfile.mkdtemp(prefix="choose-strategies-"))
    (out / "local.yaml").write_text(yaml.safe_dump(overlay(shared.resolve())))
    configs = [ROOT / "config" / "config.yaml", ROOT / "config" / "published-judges.yaml", out / "local.yaml"]
    targets = ["results/ranking/dl21/scores.tsv", "results/ranking/dl21/pool.tsv"]
    cmd = [sys.executable, "-m", "snakemake", *targets, "-s", str(ROOT / "Snakefile"), "-d", str(out)]
    cmd += ["--cores", "2", "--configfile", *map(str, configs)]
    with open(out / "snakemake.log", "w") as log:
        done = subprocess.run(cmd, cwd=out, stdout=log, stderr=subprocess.STDOUT)
    if done.returncode:
        raise SystemExit(f"the ranking study's DL21 scores failed: see {out / 'snakemake.log'}")
    return out


def label_mix(pool: pd.DataFrame, judge: str, topics: list[str]) -> np.ndarray:
    """The judge's mean label (or score) on each topic's pool pairs, in ``topics``' order."""
    have = pool[["qid", judge]].dropna()
    return have.groupby("qid")[judge].mean().reindex(topics).to_numpy(float)


def judge_rows(scores: pd.DataFrame, pool: pd.DataFrame, judge: str, args: argparse.Namespace) -> list[dict]:
    human_t, judge_t = align(
        topic_table(scores, "human", args.measure), topic_table(scores, judge, args.measure)
    )
    topics = list(human_t.index)
    h, j = human_t.to_numpy(float), judge_t.to_numpy(float)
    contrasts, pairs = pair_contrasts(h.shape[1])
    th, tj = np.hstack([h, h @ contrasts]), np.hstack([j, j @ contrasts])
    systems, pair_cols = np.arange(h.shape[1]), np.arange(h.shape[1], th.shape[1])
    decisions = _pair_decisions(human_t, judge_t, args.sig_alpha, args.test)
    separated = np.where(decisions["human_sig"], decisions["human_sign"], 0).astype(int)
    mix = label_mix(pool, judge, topics)
    rows = []
    for n in args.n:
        designs = {
            "random": random_design(len(topics), n),
            "stratified": stratified_design(mix, n) if not np.isnan(mix).any() else None,
            "active": active_design(1.0 - j.mean(1), n, args.floor),
        }
        sims = {
            s: simulate_design(th, tj, d, args.draws, args.seed, 1 - NOMINAL)
            for s, d in designs.items()
            if d is not None
        }
        ref = simulate(th, tj, n, args.draws, args.seed, 1 - NOMINAL)
        for strategy, sim, method in [*((s, x, WEIGHTED) for s, x in sims.items()), (REFERENCE, ref, "ppi")]:
            sys_ = summarise(sim, systems)[method]
            pr = summarise(sim, pair_cols)[method]
            alike = separation(sim, pair_cols, separated)[method]
            lam = sim.estimates[method].lam[:, systems].mean()
            rows.append(
                {
                    "judge": judge,
                    "measure": args.measure,
                    "n": n,
                    "n_topics": len(topics),
                    "strategy": strategy,
                    "draws": args.draws,
                    "coverage": sys_["coverage"],
                    "width": sys_["width"],
                    "bias": sys_["bias"],
                    "rmse": sys_["rmse"],
                    "pair_coverage": pr["coverage"],
                    "pair_width": pr["width"],
                    "n_separated": int((separated != 0).sum()),
                    "separated_alike": alike,
                    "mean_lambda": float(lam),
                }
            )
    return rows


def common(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the judges every strategy was simulated for (the stratified strategy needs the
    judge's label on every topic's pool: a judge that labels no pair of a topic is left out)."""
    per = table.groupby("judge")["strategy"].nunique()
    return table[table["judge"].isin(per[per == table["strategy"].nunique()].index)]


def pooled(table: pd.DataFrame) -> pd.DataFrame:
    """Per strategy x n, the mean over the judges (coverage also its lowest judge)."""
    g = table.groupby(["strategy", "n"], sort=False)
    out = g.agg(
        judges=("judge", "nunique"),
        coverage=("coverage", "mean"),
        lowest=("coverage", "min"),
        width=("width", "mean"),
        pair_coverage=("pair_coverage", "mean"),
        pair_width=("pair_width", "mean"),
        separated_alike=("separated_alike", "mean"),
        rmse=("rmse", "mean"),
    ).reset_index()
    return out.sort_values(
        ["n", "strategy"], key=lambda c: c if c.name == "n" else c.map(_order), kind="stable"
    )


def _order(strategy: str) -> int:
    return [*STRATEGIES, REFERENCE].index(strategy)


def render(summary: pd.DataFrame) -> str:
    head = [
        "n",
        "strategy",
        "judges",
        "coverage (systems)",
        "lowest judge",
        "width",
        "RMSE",
        "coverage (pairs)",
        "pair width",
        "separated alike",
    ]
    rows = [
        [
            str(r.n),
            r.strategy,
            str(r.judges),
            fmt(r.coverage),
            fmt(r.lowest),
            fmt(r.width, 4),
            fmt(r.rmse, 4),
            fmt(r.pair_coverage),
            fmt(r.pair_width, 4),
            fmt(r.separated_alike),
        ]
        for r in summary.itertuples()
    ]
    return markdown_table(head, rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=None, help="run folder of config/published-judges.yaml")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument("--measure", default="nDCG@10")
    ap.add_argument("--floor", type=float, default=DEFAULT_FLOOR)
    ap.add_argument("--judges", nargs="*", default=None, help="default: every judge of the scores table")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    args.sig_alpha = default("ranking.correlation.sig_alpha")
    args.test = default("ranking.correlation.test")
    results = Path(args.results) if args.results else make_results(Path(args.shared))
    folder = results / "results" / "ranking" / "dl21"
    scores = read_scores(folder / "scores.tsv")
    pool = pd.read_csv(folder / "pool.tsv", sep="\t", dtype={"qid": str, "docid": str})
    judges = args.judges or sorted(set(scores["qrels"]) - {"human"})
    start = time.monotonic()
    rows = [r for judge in judges for r in judge_rows(scores, pool, judge, args)]
    seconds = time.monotonic() - start
    table = pd.DataFrame(rows)
    summary = pooled(common(table))
    left_out = sorted(set(table["judge"]) - set(common(table)["judge"]))
    choice = default_strategy(summary[summary["strategy"].isin(STRATEGIES)], NOMINAL, SLACK)
    out = Path(args.out or tempfile.mkdtemp(prefix="choose-strategies-out-"))
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "strategies.tsv", sep="\t", index=False)
    text = render(summary)
    (out / "strategies.md").write_text(text)
    meta = {
        "results": str(results),
        "judges": judges,
        "left_out": left_out,
        "measure": args.measure,
        "draws": args.draws,
        "seed": args.seed,
        "floor": args.floor,
        "default": choice,
        "rule": f"coverage of the systems' intervals >= {NOMINAL} - {SLACK} at every n where some strategy "
        "reaches it; of those strategies, the narrowest on average over those n",
        "seconds": round(seconds, 1),
    }
    (out / "strategies.json").write_text(json.dumps(meta, indent=2))
    print(text)
    print(f"pooled over {len(judges) - len(left_out)} judges; left out (no stratified design): {left_out}")
    print(f"default by the rule: {choice}; {seconds:.1f} s; tables in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
