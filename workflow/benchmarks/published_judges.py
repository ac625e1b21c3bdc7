"""The meta-evaluation of the published judges, timed: `config/published-judges.yaml` (every catalog
judge of DL19, DL20, DL21 and LLMJudge against the human labels, no live judge) as a user runs it,
with the downloads replaced by the local copies in ``../shared/data`` (the datasets as ``source:
files``, the 63 DL21 runs as files, the DL19/DL20 runs at hand by ``file://`` URLs,
``published_judges.mirror``) - the downloads themselves are
excluded from the time, as the issue asks.

    python3 workflow/benchmarks/published_judges.py [--shared ../shared/data] [--out DIR]

It runs ``judgelab estimate`` on the config (it must count 0 requests), then ``snakemake judges
ranking --cores 2`` in a fresh run folder, timed (wall and CPU seconds of it and its children),
then the same command again (it must have nothing to do). Prints a table and writes
``published_judges.json`` in ``--out``; the leaderboard is at ``<out>/results/judges/leaderboard.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from judgelab.data.readers import run_name

ROOT = Path(__file__).resolve().parents[2]


def overlay(shared: Path) -> dict:
    """The config's downloads as the local copies (datasets, runs, published files)."""
    dl = shared / "trec-dl"
    topics = {"dl19": "topics.dl19-passage.txt", "dl20": "topics.dl20.txt", "dl21": "topics.dl21.txt"}
    datasets = {
        d: {
            "source": "files",
            "format": "trec",
            "qrels": str(dl / f"qrels.{d}-passage.txt"),
            "topics": str(dl / topics[d]),
            "texts": str(dl / f"qrels_text.{d}.tsv"),
        }
        for d in topics
    }
    lj = shared / "llmjudge"
    datasets["llmjudge"] = {
        "source": "files",
        "format": "llmjudge",
        "qrels": str(lj / "llmjudge_test_qrel_idx.txt"),
        "topics": str(lj / "llm4eval_query_2024.txt"),
        "split": None,  # the test qrels given as a file
    }
    return {
        "datasets": datasets,
        "published_judges": {"mirror": str(shared / "published-judges")},
        "ranking": {
            "runs": {
                "dl21": {"source": "files", "paths": [str(shared / "trec-dl-runs/dl21/input.*.txt")]},
                # the config's URLs for the runs at hand, as file:// URLs of the copies
                **{d: {"source": "download", "urls": at_hand(shared, d)} for d in ("dl19", "dl20")},
            }
        },
    }


def at_hand(shared: Path, dataset: str) -> dict[str, str]:
    """Run name -> file:// URL of the copy in ``shared`` of each run the config downloads for
    DL19 or DL20 (``ranking.runs.<dataset>.urls``)."""
    config = yaml.safe_load((ROOT / "config" / "published-judges.yaml").read_text())
    copies = {run_name(f): f.resolve().as_uri() for f in (shared / "trec-dl-runs" / dataset).glob("*.txt")}
    return {name: copies[name] for name in config["ranking"]["runs"][dataset]["urls"]}


def timed(cmd: list[str], cwd: Path) -> dict:
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    run = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall, after = time.monotonic() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "cmd": " ".join(cmd),
        "rc": run.returncode,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "out": run.stdout + run.stderr,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="published-judges-"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "local.yaml").write_text(yaml.safe_dump(overlay(Path(args.shared).resolve())))
    files = [
        str(ROOT / "config" / "config.yaml"),
        str(ROOT / "config" / "published-judges.yaml"),
        str(out / "local.yaml"),
    ]
    configs = ["--configfile", *files]
    py = sys.executable
    each = [a for f in files for a in ("--configfile", f)]
    estimate = timed(
        [py, "-m", "judgelab.cli", "estimate", "-d", str(out), "-s", str(ROOT / "Snakefile"), *each], out
    )
    smk = [
        py,
        "-m",
        "snakemake",
        "judges",
        "ranking",
        "-s",
        str(ROOT / "Snakefile"),
        "-d",
        str(out),
        "--cores",
        "2",
        *configs,
    ]
    first = timed(smk, out)
    again = timed(smk, out)
    load = os.getloadavg()
    result = {
        "estimate_rc": estimate["rc"],
        "estimate": estimate["out"][-1500:],
        "run": {k: v for k, v in first.items() if k != "out"},
        "again_nothing_to_do": "Nothing to be done" in again["out"],
        "loadavg_after": load,
    }
    if first["rc"] != 0:
        print(first["out"][-4000:], file=sys.stderr)
    (out / "published_judges.json").write_text(json.dumps(result, indent=2))
    print("| step | wall s | CPU s | rc |\n|---|---|---|---|")
    print(f"| snakemake judges ranking | {first['wall_s']} | {first['cpu_s']} | {first['rc']} |")
    print(f"second run nothing to do: {result['again_nothing_to_do']}; load after {load}")
    print(estimate["out"][-800:])
    print(f"leaderboard: {out / 'results' / 'judges' / 'leaderboard.md'}")
    return 0 if first["rc"] == 0 and estimate["rc"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
