"""The log parser of workflow/benchmarks/job_overhead.py on a hand-written run folder (two
Snakemake invocations, a forced rerun, an unfinished job, an API job with a cost), and the
Snakemake job-table reader the benchmarks share. Every expected number is worked out from the
log lines below."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "benchmarks"))

from benchlib import job_stats, nothing_to_be_done  # noqa: E402
from job_overhead import parse_run, summarize_run, usage_lines  # noqa: E402

FIRST = """\
Building DAG of jobs...
Job stats:
job             count
------------  -------
confidence          1
group_metrics       1
judge               1
total               3

Select jobs to execute...
Execute 1 jobs...
[Thu Jan  1 10:00:00 2026]
localrule judge:
    input: results/datasets/d.tsv
    output: results/judgments/d/m/t/LA.tsv
    log: results/logs/judge/d/m/t/LA.log
    jobid: 7
    reason: Missing output files: results/judgments/d/m/t/LA.tsv
    wildcards: dataset=d, model=m, template=t, persona=LA
    resources: tmpdir=/tmp
Shell command: None
[Thu Jan  1 10:00:20 2026]
Finished jobid: 7 (Rule: judge)
1 of 3 steps (33%) done
[Thu Jan  1 10:00:20 2026]
localrule confidence:
    input: results/datasets/d.tsv, results/judgments/d/m/t/LA.tsv
    output: results/confidence/d/m/t/LA.tsv
    log: results/logs/confidence/d/m/t/LA.log
    jobid: 8
    wildcards: dataset=d, model=m, template=t, persona=LA
Shell command: None
[Thu Jan  1 10:00:26 2026]
Finished jobid: 8 (Rule: confidence)
[Thu Jan  1 10:00:26 2026]
rule group_metrics:
    output: results/metrics/groups/d/m/t.tsv
    log: results/logs/metrics/d/m/t.log
    jobid: 9
[Thu Jan  1 10:00:29 2026]
Finished job 9.
3 of 3 steps (100%) done
"""

SECOND = """\
Building DAG of jobs...
[Thu Jan  1 10:01:00 2026]
localrule judge:
    output: results/judgments/d/m/t/LA.tsv
    log: results/logs/judge/d/m/t/LA.log
    jobid: 1
    reason: Forced execution
[Thu Jan  1 10:01:10 2026]
Finished jobid: 1 (Rule: judge)
[Thu Jan  1 10:01:10 2026]
localrule judge:
    output: results/judgments/d/m/t/HN.tsv
    log: results/logs/judge/d/m/t/HN.log
    jobid: 2
"""

JUDGE_LOG = """\
2026-01-01 10:01:03,000 INFO judgelab.backends.base: judge d/m/t/LA: 8 requests, 0 cached, 8 to send
judge d/m/t/LA: 100%|##########| 8/8 [00:05<00:00,  1.45call/s]
2026-01-01 10:01:08,500 INFO judgelab: judge d/m/t/LA: 8 new calls, 0 cache hits, tokens sent 3000 prompt + 64 completion, 5.5 s
"""

CONFIDENCE_LOG = """\
2026-01-01 10:00:22,250 INFO judgelab.backends.base: confidence d/m/t/LA: 6 requests, 2 cached, 4 to send
2026-01-01 10:00:25,000 INFO judgelab: confidence d/m/t/LA: 4 new calls, 2 cache hits, tokens sent 900 prompt + 8 completion, cost $0.0012, 2.0 s
"""


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    logs = tmp_path / ".snakemake" / "log"
    logs.mkdir(parents=True)
    (logs / "2026-01-01T100000.000000.snakemake.log").write_text(FIRST)
    (logs / "2026-01-01T100100.000000.snakemake.log").write_text(SECOND)
    for rel, text in {
        "judge/d/m/t/LA.log": JUDGE_LOG,
        "confidence/d/m/t/LA.log": CONFIDENCE_LOG,
        "metrics/d/m/t.log": "2026-01-01 10:00:28,000 INFO judgelab: 1 personas\n",
        "judge/d/m/t/HN.log": "",
    }.items():
        f = tmp_path / "results" / "logs" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return tmp_path


def test_usage_lines_with_and_without_cost():
    (u,) = usage_lines(CONFIDENCE_LOG)
    assert (u["calls"], u["hits"], u["seconds"], u["cost"]) == (4, 2, 2.0, "0.0012")
    (u,) = usage_lines(JUDGE_LOG)
    assert (u["calls"], u["hits"], u["seconds"], u["cost"], u["prompt"]) == (8, 0, 5.5, None, "3000")


def test_parse_run_keeps_the_latest_finished_run_of_each_job(run_dir):
    jobs = parse_run(run_dir)
    # the judge of LA ran twice (the forced rerun counts); HN never finished
    assert [(j.rule, j.wall, j.compute) for j in jobs] == [
        ("confidence", 6.0, 2.0),
        ("group_metrics", 3.0, None),
        ("judge", 10.0, 5.5),
    ]
    judge = jobs[-1]
    assert judge.start == datetime(2026, 1, 1, 10, 1, 0)
    assert judge.first_log == datetime(2026, 1, 1, 10, 1, 3)
    assert judge.last_log == datetime(2026, 1, 1, 10, 1, 8, 500000)
    assert judge.logs == ["results/logs/judge/d/m/t/LA.log"]


def test_summarize_run_numbers(run_dir):
    rows = {r["component"]: r for r in summarize_run(parse_run(run_dir))}
    assert rows["judge: wall"]["wall_s"] == 10.0 and rows["judge: wall"]["n"] == 1
    assert rows["judge: compute line"]["wall_s"] == 5.5
    assert rows["judge: wall - compute line (overhead)"]["wall_s"] == 4.5
    assert rows["judge: wall - compute line (overhead)"]["note"] == "45% of the rule's job wall"
    assert rows["judge: job start -> first log line"]["wall_s"] == 3.0
    assert rows["judge: compute per new call"]["wall_s"] == 5.5 / 8
    assert rows["confidence: compute line"]["note"] == "sum 2 s; 4 new calls, 2 cache hits"
    assert rows["confidence: job start -> first log line"]["wall_s"] == 2.25
    assert rows["confidence: compute per new call"]["wall_s"] == 0.5
    assert rows["group_metrics: wall"]["wall_s"] == 3.0
    assert "group_metrics: compute line" not in rows
    assert rows["all jobs: wall (sum over jobs)"]["wall_s"] == 19.0
    assert rows["LLM jobs: compute lines (sum)"]["wall_s"] == 7.5
    assert rows["LLM jobs: compute lines (sum)"]["note"] == "39% of the jobs' wall"  # 7.5 / 19
    assert rows["run: first job start -> last job end"]["wall_s"] == 50.0  # 10:00:20 -> 10:01:10
    assert all(r["cpu_s"] is None for r in rows.values())  # the logs hold no CPU time


def test_job_stats_table():
    assert job_stats(FIRST) == {"confidence": 1, "group_metrics": 1, "judge": 1, "total": 3}
    assert (
        job_stats(
            "Building DAG of jobs...\nNothing to be done (all requested files are present and up to date)."
        )
        == {}
    )
    assert nothing_to_be_done("Nothing to be done (all requested files are present and up to date).")


def test_invalidation_check_of_dag_scale():
    from dag_scale import cut_judges, invalidated

    every = [{"dataset": d, "persona": p} for d in ("a", "b") for p in ("x", "y", "z")]
    ok = invalidated("judge", 6, [wc for wc in every if wc["persona"] == "y"], every, "y", 3)
    assert (ok["jobs"], ok["note"]) == (2, "2/6 = 1/3; exactly the jobs of persona y, 1/3 of the rule")
    wrong = invalidated("judge", 6, [every[0], every[1]], every, "y", 3)  # x of a scheduled, y of b missing
    assert wrong["note"].startswith("2/6 = 1/3; NOT the jobs of persona y")
    none = invalidated("simulate", 2, [], [{"dataset": "a"}, {"dataset": "b"}], "y", 3)
    assert none["note"] == "0/2; its jobs have no persona: none scheduled, as expected"

    config = {"judges": ["m1", "m2", "m3"], "peras": {"judges": ["m2", "m3"]}, "other": {"judges": None}}
    cut_judges(config, 1)
    assert config == {"judges": ["m1"], "peras": {"judges": ["m2"]}, "other": {"judges": None}}


def test_default_run_maps_every_rule_of_this_checkout_to_its_study():
    """default_run.py splits a run's job wall by study from the rules files: every rule the
    workflow defines gets the study of the file it is in, the shared stages count as shared."""
    from default_run import rule_studies

    root = Path(__file__).resolve().parents[1]
    studies = rule_studies(root)
    assert studies["peras_judge"] == "peras" and studies["peras_classifier"] == "peras"
    assert studies["simulation_predict"] == "simulation"
    assert studies["overrating_pointwise"] == "overrating"
    assert studies["perturbation_rewrite"] == "perturbations"
    assert studies["prepare_dataset"] == "shared" and studies["generate_persona"] == "shared"
    assert studies["download_published_judge"] == studies["judges_leaderboard"] == "shared"
    assert studies["all"] == "shared"
    assert studies["ranking_judge"] == "ranking" and studies["ranking_score"] == "ranking"
    assert studies["sensitivity_judge"] == "sensitivity"
    # every study of judgelab.studies.STUDIES (a new one too), nothing else
    from judgelab.studies import STUDIES

    assert set(studies.values()) == {"shared", *STUDIES}


def test_default_run_other_load_reads_proc_stat():
    """The machine's busy CPU seconds only grow, and grow by about the CPU this process burns."""
    import resource

    from default_run import busy_seconds

    b0, r0 = busy_seconds(), resource.getrusage(resource.RUSAGE_SELF)
    x = 0
    for i in range(3_000_000):
        x += i * i
    b1, r1 = busy_seconds(), resource.getrusage(resource.RUSAGE_SELF)
    own = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    assert x > 0 and own > 0
    assert b1 - b0 >= own * 0.8  # /proc/stat ticks at 1/CLK_TCK: allow its rounding


def test_ranking_scoring_benchmark_quick(tmp_path, shared_data):
    """workflow/benchmarks/ranking_scoring.py on the first 3 DL21 runs: each case scores exactly
    what it says (the counts come from the scoring job's own log line)."""
    import csv
    import subprocess

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "b.tsv"
    proc = subprocess.run(
        [
            sys.executable,
            str(root / "workflow" / "benchmarks" / "ranking_scoring.py"),
            "--shared",
            str(shared_data),
            "--runs",
            "3",
            "--repeat",
            "1",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = {r["case"]: r for r in csv.DictReader(out.open(), delimiter="\t")}
    counts = {case: (int(r["scored"]), int(r["from_cache"])) for case, r in rows.items()}
    assert counts["cold"] == (6, 0) and counts["new judge"] == (3, 6)
    assert counts["one run more"] == (2, 4) and counts["nothing new"] == (0, 6)
    assert float(rows["old layout, estimated"]["wall_s"]) > 0


def test_estimate_speed_benchmark_on_the_shipped_default_config(tmp_path, capsys):
    """workflow/benchmarks/estimate_speed.py on config/config.yaml (the bundled sample, counted
    from its raw files): the calls it reports are the sum of the estimate table's, twice the same."""
    import csv

    from benchlib import ROOT
    from estimate_speed import main

    out = tmp_path / "e.tsv"
    assert (
        main(["--run", f"a={ROOT}", "--run", f"b={ROOT}", "--config", "config.yaml", "--out", str(out)]) == 0
    )
    rows = list(csv.DictReader(open(out, encoding="utf-8"), delimiter="\t"))
    assert [r["run"] for r in rows] == ["a", "b"]
    assert rows[0]["calls"] == rows[1]["calls"] and int(rows[0]["calls"]) > 0
    assert [r["same_table"] for r in rows] == ["True", "True"]


def test_first_hour_runs_the_readme_commands_as_written_and_ci_installs_the_same_way():
    """workflow/benchmarks/first_hour.py reads the README's set-up block: the install, then the
    default run (no second command, no flag to know); .ci/run's install is that same line."""
    from first_hour import readme_commands

    root = Path(__file__).resolve().parents[1]
    commands = readme_commands(root / "README.md")
    assert commands == ["pip install -e '.[test]'", "snakemake all --cores 8"]
    ci = (root / ".ci" / "run").read_text().splitlines()
    installs = [ln.strip() for ln in ci if "pip install" in ln and not ln.lstrip().startswith("#")]
    assert installs == [commands[0]]  # no smoke test, no second build
