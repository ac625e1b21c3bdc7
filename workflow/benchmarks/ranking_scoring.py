"""The ranking study's scoring job over the 63 TREC DL 2021 runs: one job per dataset with the
scores kept by content digest, against the per-run jobs it replaced.

Each case runs the scoring job (:func:`judgelab.studies.ranking.jobs.score_job`) as a fresh
Python process, as Snakemake starts a job's script - interpreter, imports, reading the inputs,
scoring, writing scores.tsv - from prepared inputs (the dataset table and the label files
written beforehand), with the scores cache in the state the case names:

* ``cold``: an empty cache, every run under the human qrels and a judge's;
* ``new judge``: the human scores cached, a new judge's qrels: every run scored under it alone
  (the issue's case: at most 15 s of wall);
* ``one run more``: the 62 other runs cached under both qrels, the 63rd added: only it is scored
  (the job's count of scored run x qrels pairs is checked, not only its time);
* ``nothing new``: every entry cached (a rerun for another reason, e.g. a new run's tables).

``per-run job`` times the job the study had before (one run under both qrels, its own process:
the same start-up) ``--repeat`` times; 63 of them on ``--cores`` cores is the estimate of that
layout's wall (``old layout, estimated``). The judge is the human qrels with a seeded 20% of the
grades moved to another grade, written as an imported judge's label table. Needs the shared data
(``--shared``, default ``../shared/data`` beside the checkout).

    python3 workflow/benchmarks/ranking_scoring.py [--shared ../shared/data] [--repeat 3]
        [--cores 2] [--runs 63] [--out results/benchmarks/ranking_scoring.tsv]

``--runs N`` takes the first N runs (a quick check).

With ``--before DIR`` (a checkout with the per-run layout, e.g. a worktree of the commit before
this change) the same is also measured through Snakemake, ``--cores`` cores, on the
``.test/ranking_dl21`` config (an imported judge ``flip``, no LLM call) from prepared inputs
(the dataset table, the run files and the judge's labels made first, untimed): the before
checkout's 63 ``ranking_score`` jobs against this checkout's one, cold, then this checkout's one
job again with a second imported judge added (its labels prepared first): every run scored under
the new qrels only, and with it the circularity job (each judge's run built from the best run,
scored under every qrels and ranked: the judge-built runs included).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
from benchlib import (  # first: puts this checkout's judgelab on the path
    ROOT,
    default_out,
    job_stats,
    markdown,
    median,
    run,
    run_env,
    snakemake_cmd,
    write_tsv,
)

from judgelab.data.prepare import build_trec_table
from judgelab.data.tables import write_dataset
from judgelab.data.tables import write_tsv as write_table

COLUMNS = ["case", "runs", "qrels", "scored", "from_cache", "wall_s", "cpu_s", "note"]

#: One scoring job as its own process: the arguments as JSON on the command line.
JOB = """
import json, logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
from judgelab.studies.ranking.jobs import score_job
from judgelab.studies.ranking.settings import Scoring
a = json.loads(sys.argv[1])
score_job(a["pairs"], a["runs"], a["labels"], a["scores"], Scoring.from_param(a["scoring"]), a["cache"])
"""

_COUNT = re.compile(r"(\d+) runs x (\d+) qrels: (\d+) scored, (\d+) read from the cache")


def judge_labels(table, share: float, seed: int):
    """A judge's label table: the human grades with a seeded ``share`` moved to another grade."""
    rng = np.random.default_rng(seed)
    rel = table["grade"].astype(int).to_numpy().copy()
    change = rng.random(len(rel)) < share
    rel[change] = (rel[change] + rng.integers(1, 4, int(change.sum()))) % 4
    return table[["qid", "docid"]].assign(label=rel)


def job(pairs, runs: dict[str, Path], labels: dict[str, Path], cache: Path, out: Path):
    """Run the scoring job once; (timing, scored, from cache)."""
    qrels = [["human", "human", ""]] + [[j, "judge", j] for j in labels]
    scoring = json.dumps(
        {"qrels": qrels, "judges": list(labels), "measures": ["nDCG@10"], "run_names": list(runs)}
    )
    args = {
        "pairs": str(pairs),
        "runs": [str(p) for p in runs.values()],
        "labels": [str(p) for p in labels.values()],
        "scores": str(out),
        "scoring": scoring,
        "cache": str(cache),
    }
    timing, proc = run([sys.executable, "-c", JOB, json.dumps(args)])
    m = _COUNT.search(proc.stderr)
    if not m:
        raise RuntimeError(f"no count line in the job's log:\n{proc.stderr[-2000:]}")
    return timing, int(m.group(3)), int(m.group(4))


def write_config(wd: Path, checkout: Path, judges: dict) -> None:
    """``checkout``'s ``.test/ranking_dl21`` config in ``wd`` with every judge of ``judges``
    (name -> label table) an imported judge (its qrels file written under ``imports/``)."""
    import yaml

    cfg = yaml.safe_load((checkout / ".test" / "ranking_dl21" / "config" / "config.yaml").read_text())
    cfg["imported_judges"] = {}
    for name, labels in judges.items():
        f = wd / "imports" / f"{name}.qrels"
        f.parent.mkdir(parents=True, exist_ok=True)
        rows = zip(labels["qid"], labels["docid"], labels["label"])
        f.write_text("".join(f"{q} Q0 {d} {g}\n" for q, d, g in rows))
        cfg["imported_judges"][name] = {
            "path": f"imports/{name}.qrels",
            "datasets": ["dl21"],
            "scale": "graded",
        }
    cfg["ranking"]["imported_judges"] = list(judges)
    (wd / "config").mkdir(parents=True, exist_ok=True)
    (wd / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))


def snakemake_workdir(checkout: Path, shared: Path, runs: dict[str, Path], judges: dict, wd: Path) -> Path:
    """A run folder ``wd`` of :func:`write_config` with ``runs`` linked into ``runs/`` and the
    shared data as ``shared/``."""
    write_config(wd, checkout, judges)
    (wd / "shared").symlink_to(shared.resolve())
    (wd / "runs").mkdir()
    for f in runs.values():
        (wd / "runs" / f.name).symlink_to(f.resolve())
    return wd


def through_snakemake(checkout: Path, wd: Path, targets: list[str], judges: list[str], cores: int):
    """Prepare the dataset table and the judges' labels (untimed), then time Snakemake making
    ``targets``; (timing, jobs run by rule)."""
    src = checkout / "workflow" / "src"
    prep = ["results/datasets/dl21.tsv"] + [f"results/ranking/dl21/labels/{j}.tsv" for j in judges]
    run(snakemake_cmd(wd, *prep, snakefile=checkout / "Snakefile", cores=cores), env=run_env(src=src))
    t, proc = run(
        snakemake_cmd(wd, *targets, snakefile=checkout / "Snakefile", cores=cores), env=run_env(src=src)
    )
    return t, job_stats(proc.stdout + proc.stderr)


def snakemake_rows(args, runs: dict[str, Path], labels, work: Path) -> list[dict]:
    """The Snakemake cases of ``--before`` (module docstring)."""
    rows = []
    n = len(runs)
    before = args.before.resolve()
    wd = snakemake_workdir(before, args.shared, runs, {"flip": labels["judge"]}, work / "before")
    per_run = [f"results/ranking/dl21/scores/{r}.tsv" for r in runs]
    t, stats = through_snakemake(before, wd, per_run, ["flip"], args.cores)
    rows.append(
        {
            "case": "Snakemake, before: per-run jobs",
            "runs": n,
            "qrels": 2,
            "scored": 2 * n,
            "from_cache": 0,
            "wall_s": t.wall,
            "cpu_s": t.cpu,
            "note": f"{stats.get('ranking_score', 0)} ranking_score jobs on {args.cores} cores ({before})",
        }
    )
    wd = snakemake_workdir(ROOT, args.shared, runs, {"flip": labels["judge"]}, work / "after")
    t, stats = through_snakemake(ROOT, wd, ["results/ranking/dl21/scores.tsv"], ["flip"], args.cores)
    rows.append(
        {
            "case": "Snakemake, one job: cold",
            "runs": n,
            "qrels": 2,
            "scored": 2 * n,
            "from_cache": 0,
            "wall_s": t.wall,
            "cpu_s": t.cpu,
            "note": f"{stats.get('ranking_score', 0)} ranking_score job",
        }
    )
    write_config(wd, ROOT, {"flip": labels["judge"], "flip2": labels["new_judge"]})
    targets = ["results/ranking/dl21/scores.tsv", "results/ranking/dl21/circularity.tsv"]
    t, stats = through_snakemake(ROOT, wd, targets, ["flip", "flip2"], args.cores)
    log_text = (wd / "results" / "logs" / "ranking" / "dl21" / "scores.log").read_text()
    m = _COUNT.search(log_text)
    rows.append(
        {
            "case": "Snakemake, one job: new judge",
            "runs": n,
            "qrels": 3,
            "scored": int(m.group(3)) if m else None,
            "from_cache": int(m.group(4)) if m else None,
            "wall_s": t.wall,
            "cpu_s": t.cpu,
            "note": f"{stats.get('ranking_score', 0)} ranking_score job; a second imported judge added; "
            f"{stats.get('ranking_circularity', 0)} ranking_circularity job (each judge's run built "
            "and scored under the 3 qrels, ranked among the 63)",
        }
    )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--repeat", type=int, default=3, help="per-run jobs timed for the old layout")
    ap.add_argument("--cores", type=int, default=2, help="cores of the old layout's estimate")
    ap.add_argument("--runs", type=int, default=63, help="the first N runs")
    ap.add_argument("--before", type=Path, default=None, help="a checkout with the per-run jobs")
    ap.add_argument("--out", default=str(default_out("ranking_scoring")))
    args = ap.parse_args()

    d = args.shared / "trec-dl"
    files = sorted((args.shared / "trec-dl-runs" / "dl21").glob("input.*.txt"))[: args.runs]
    if not files:
        raise SystemExit(f"no DL21 run under {args.shared}/trec-dl-runs/dl21 (--shared)")
    runs = {f.name[len("input.") : -len(".txt")]: f for f in files}
    work = Path(tempfile.mkdtemp(prefix="ranking-scoring-"))
    try:
        table = build_trec_table(
            "dl21", d / "qrels.dl21-passage.txt", d / "topics.dl21.txt", d / "qrels_text.dl21.tsv"
        )
        pairs = work / "dl21.tsv"
        write_dataset(table, pairs)
        labels, labels_tables = {}, {}
        for name, seed in (("judge", 1), ("new_judge", 2)):
            labels[name] = work / f"{name}.tsv"
            labels_tables[name] = judge_labels(table, 0.2, seed)
            write_table(labels_tables[name], labels[name])
        cache, out = work / "cache", work / "scores.tsv"
        rows = []

        def case(name: str, some_runs, some_labels, note: str = "") -> dict:
            t, scored, hits = job(pairs, some_runs, some_labels, cache, out)
            row = {
                "case": name,
                "runs": len(some_runs),
                "qrels": 1 + len(some_labels),
                "scored": scored,
                "from_cache": hits,
                "wall_s": t.wall,
                "cpu_s": t.cpu,
                "note": note,
            }
            rows.append(row)
            print(markdown([row], COLUMNS).splitlines()[-1], flush=True)
            return row

        n = len(runs)
        cold = case("cold", runs, {"judge": labels["judge"]}, "empty cache: every run under both qrels")
        assert cold["scored"] == 2 * n
        new = case(
            "new judge",
            runs,
            {"judge": labels["judge"], "new_judge": labels["new_judge"]},
            "human and judge cached; every run scored under the new judge only",
        )
        assert (new["scored"], new["from_cache"]) == (n, 2 * n)
        shutil.rmtree(cache)
        *first, last = runs
        case("62 runs (setup)", {r: runs[r] for r in first}, {"judge": labels["judge"]}, "fills the cache")
        more = case("one run more", runs, {"judge": labels["judge"]}, f"{last} added: only it is scored")
        assert (more["scored"], more["from_cache"]) == (2, 2 * (n - 1)), more
        case("nothing new", runs, {"judge": labels["judge"]}, "every entry cached")

        # the layout before: one job per run (one run under both qrels, its own process)
        one = {last: runs[last]}
        times = []
        for _ in range(args.repeat):
            shutil.rmtree(cache, ignore_errors=True)
            t, scored, _ = job(pairs, one, {"judge": labels["judge"]}, cache, out)
            assert scored == 2
            times.append(t)
        per_run = median(times)
        spread = f"{min(t.wall for t in times):.2f}-{max(t.wall for t in times):.2f} s"
        rows.append(
            {
                "case": "per-run job",
                "runs": 1,
                "qrels": 2,
                "scored": 2,
                "from_cache": 0,
                "wall_s": per_run.wall,
                "cpu_s": per_run.cpu,
                "note": f"median of {args.repeat} ({spread}): the old layout's job, one run",
            }
        )
        rows.append(
            {
                "case": "old layout, estimated",
                "runs": n,
                "qrels": 2,
                "scored": 2 * n,
                "from_cache": 0,
                "wall_s": per_run.wall * n / args.cores,
                "cpu_s": per_run.cpu * n,
                "note": f"{n} per-run jobs on {args.cores} cores (wall x {n} / {args.cores}); "
                "Snakemake's own time per job not counted",
            }
        )
        if args.before is not None:
            for row in snakemake_rows(args, runs, labels_tables, work / "snakemake"):
                rows.append(row)
                print(markdown([row], COLUMNS).splitlines()[-1], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    path = write_tsv(rows, COLUMNS, args.out)
    print()
    print(markdown(rows, COLUMNS))
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()
