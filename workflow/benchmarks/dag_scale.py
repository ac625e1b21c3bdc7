"""DAG build and dry-run time at paper scale, and what one persona edit invalidates there.

1. **Dry runs at paper scale**: the paper configs (``--configfile``, repeatable; default every
   ``config/paper-*.yaml``) merged over ``config/config.yaml`` as Snakemake merges them, in an
   empty run folder: ``judgelab.wiring.facade.Project`` (merge, validation, resolution), ``snakemake
   --list-rules`` (start and parse), ``snakemake -n all`` (parse, DAG, every job listed) and
   ``-n --quiet rules all``. API keys are dummy values in the subprocess environment (nothing is
   sent by a dry run); the LLM jobs of the dry run are checked against ``Project.llm_jobs()``.
2. **Invalidation at that scale** (needs a finished run with Snakemake's metadata): a run folder
   with the merged config's structure (its datasets, personas, templates, judges) and tiny data:
   every dataset becomes a bundled sample (resources/sample/<name>, or dl19/dl20/dl21 in turn for
   a dataset without one) read as ``source: files``, and every model a run calls becomes an
   ``openai`` model served by the instant local server of tests/fake_openai.py. The whole graph
   runs for real (every job pays its per-job overhead); then a dry run with nothing changed
   (expect "Nothing to be done") and one after editing one persona's instruction in the run's
   copy of the persona file (expect exactly the jobs of that persona: 1/len(personas) of every
   LLM rule whose jobs are per persona, none of the others).

    python workflow/benchmarks/dag_scale.py [--configfile config/paper-peras.yaml ...]
        [--cores 2] [--max-judges N] [--per-grade N] [--persona HA] [--keep DIR]
        [--skip-run] [--out results/benchmarks/dag_scale.tsv]
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import yaml
from benchlib import (
    ROOT,
    TESTS,
    Clock,
    default_out,
    job_stats,
    markdown,
    nothing_to_be_done,
    on_path,
    run,
    run_env,
    snakemake_cmd,
    write_tsv,
)

COLUMNS = ["section", "measure", "jobs", "cpu_s", "wall_s", "note"]
SAMPLES = ("dl19", "dl20", "dl21")
DUMMY = "dummy-value-for-a-dry-run"


def dry_env(project) -> dict[str, str]:
    """This checkout's judgelab, and a dummy value for every credential the config's models read
    (API key variables, the AWS chain): a dry run sends nothing."""
    env = run_env({v: DUMMY for v in project.api_key_envvars()})
    env.pop("AWS_PROFILE", None)
    env.update({"AWS_ACCESS_KEY_ID": DUMMY, "AWS_SECRET_ACCESS_KEY": DUMMY, "AWS_REGION": "us-east-1"})
    return env


def llm_rule_counts(project) -> Counter:
    return Counter(j.rule for j in project.llm_jobs())


def describe(project) -> str:
    return (
        f"studies {project.studies}; {len(project.datasets)} datasets, {len(project.personas)} personas, "
        f"judges {project.judges}; LLM jobs {dict(llm_rule_counts(project))}"
    )


# -- 1: dry runs at paper scale ----------------------------------------------------------------


def paper_dry_runs(configfiles: list[Path], repeat: int) -> list[dict]:
    from judgelab.wiring.facade import Project

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        with Clock() as c:
            project = Project.load(configfiles, directory=tmp, root=ROOT)
        rows.append(
            {
                "section": "paper",
                "measure": "Project.load (merge, validate, resolve)",
                "jobs": len(project.llm_jobs()),
                "cpu_s": c.timing.cpu,
                "wall_s": c.timing.wall,
                "note": f"configs {[f.name for f in configfiles]}: {describe(project)}",
            }
        )
        env = dry_env(project)
        cfg = [a for f in configfiles for a in ("--configfile", str(f))]
        cases = [
            ("snakemake --list-rules (start, parse)", ("--list-rules",)),
            ("snakemake -n all (start, parse, DAG, every job listed)", ("-n", "all")),
            ("snakemake -n --quiet rules all (start, parse, DAG)", ("-n", "--quiet", "rules", "all")),
        ]
        for label, args in cases:
            for i in range(repeat):
                t, proc = run(snakemake_cmd(tmp, *args, *cfg), env=env, timeout=3600)
                text = proc.stdout + proc.stderr
                stats = job_stats(text)
                note = ""
                if args[0] == "-n" and "--quiet" not in args:
                    expected = llm_rule_counts(project)
                    got = {r: stats.get(r, 0) for r in expected}
                    note = (
                        "LLM jobs equal Project.llm_jobs()"
                        if got == dict(expected)
                        else f"LLM jobs differ: dry run {got}, Project {dict(expected)}"
                    )
                    note += f"; {len(text.splitlines())} lines of output"
                rows.append(
                    {
                        "section": "paper",
                        "measure": label + (f" [{i + 1}]" if repeat > 1 else ""),
                        "jobs": stats.get("total"),
                        "cpu_s": t.cpu,
                        "wall_s": t.wall,
                        "note": note,
                    }
                )
    return rows


# -- 2: a finished run with the paper structure and tiny data ------------------------------------


def cut_judges(config: dict, n: int | None) -> None:
    """Every ``judges`` list (top level and in each study section) cut to its first ``n``; the
    blocks of ``peras.cells`` keep the judges left (a block left with none is dropped)."""
    if not n:
        return
    kept: set[str] = set()
    for section in [config] + [v for v in config.values() if isinstance(v, dict)]:
        if isinstance(section.get("judges"), list):
            section["judges"] = section["judges"][:n]
            kept.update(section["judges"])
    cells = (config.get("peras") or {}).get("cells")
    if cells:
        for block in cells:
            if block.get("judges") is not None:
                block["judges"] = [j for j in block["judges"] if j in kept]
        config["peras"]["cells"] = [b for b in cells if b.get("judges") is None or b["judges"]] or None


def run_config(
    merged: dict, base_url: str, run_dir: Path, per_grade: int | None, max_judges: int | None
) -> dict:
    """The merged paper config with tiny data, the fake server as every model the run calls, and
    a copy of the persona file in ``run_dir``."""
    from judgelab.wiring.facade import Project

    cfg = copy.deepcopy(merged)
    cut_judges(cfg, max_judges)
    cfg["results"], cfg["cache"] = "results", "cache/requests.sqlite"
    for i, name in enumerate(list(cfg["datasets"])):
        sample = ROOT / "resources" / "sample" / (name if name in SAMPLES else SAMPLES[i % len(SAMPLES)])
        cfg["datasets"][name] = {
            "source": "files",
            "format": "trec",
            "qrels": str(sample / "qrels.txt"),
            "topics": str(sample / "topics.txt"),
            "texts": str(sample / "texts.tsv"),
            "queries": [],
            "max_queries": None,
            "per_grade": per_grade,
            "seed": 42,
        }
    project = Project(copy.deepcopy(cfg), ROOT)
    for name in project.used_models:
        cfg["models"][name] = {
            "backend": "openai",
            "model": name,
            "base_url": base_url,
            "api_key_env": None,
            "concurrency": 4,
            "timeout": 60,
            "max_retries": 2,
            "batch": False,
            "logprobs": True,
        }
    ref = cfg["personas"]["file"]
    src = Path(ref) if Path(ref).exists() else ROOT / "resources" / "personas" / f"{ref}.yaml"
    shutil.copy(src, run_dir / "personas.yaml")
    cfg["personas"]["file"] = str(run_dir / "personas.yaml")
    return cfg


def edit_persona(path: Path, persona: str) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["personas"][persona]["instruction"] += " (Edited for the invalidation benchmark.)"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def invalidation(
    configfiles: list[Path],
    run_dir: Path,
    cores: int,
    per_grade: int | None,
    max_judges: int | None,
    persona: str | None,
) -> list[dict]:
    from fake_openai import FakeOpenAI, ServerThread
    from snakerun import dry_run_jobs

    from judgelab.project.config import load_config
    from judgelab.wiring.facade import Project

    merged = load_config(configfiles, directory=ROOT, root=ROOT)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config").mkdir(exist_ok=True)
    rows = []
    fake = FakeOpenAI()
    with ServerThread(fake.app()) as srv:
        cfg = run_config(merged, srv.base_url, run_dir, per_grade, max_judges)
        (run_dir / "config" / "config.yaml").write_text(
            yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
        project = Project.load(directory=run_dir, root=ROOT)
        personas = list(project.personas)
        persona = persona or personas[min(1, len(personas) - 1)]
        llm = llm_rule_counts(project)
        env = run_env()

        def sm(*args: str):
            return run(snakemake_cmd(run_dir, *args, cores=cores), env=env, timeout=6 * 3600)

        t, proc = sm("-n", "--quiet", "rules", "all")
        planned = job_stats(proc.stdout + proc.stderr)
        note = describe(project) + f"; per_grade {per_grade}; every model -> the fake server"
        rows.append(
            {
                "section": "run",
                "measure": "snakemake -n all, empty run folder",
                "jobs": planned.get("total"),
                "cpu_s": t.cpu,
                "wall_s": t.wall,
                "note": note,
            }
        )
        with Clock() as server:
            t, proc = sm("all")
        done = job_stats(proc.stdout + proc.stderr)
        rows.append(
            {
                "section": "run",
                "measure": f"snakemake all --cores {cores} (tiny data, instant server)",
                "jobs": done.get("total"),
                "cpu_s": t.cpu,
                "wall_s": t.wall,
                "note": f"{sum(fake.served.values())} requests served; jobs by rule {done}",
            }
        )
        rows.append(
            {
                "section": "run",
                "measure": "  per job",
                "jobs": done.get("total"),
                "cpu_s": t.cpu / done["total"],
                "wall_s": t.wall / done["total"],
                "note": f"wall per job x cores: {t.wall * cores / done['total']:.1f} s",
            }
        )
        rows.append(
            {
                "section": "run",
                "measure": "  fake server (this process, beside the run)",
                "jobs": None,
                "cpu_s": server.timing.cpu,
                "wall_s": None,
                "note": "",
            }
        )

        t, proc = sm("-n", "all")
        text = proc.stdout + proc.stderr
        rows.append(
            {
                "section": "invalidation",
                "measure": "snakemake -n all, nothing changed",
                "jobs": job_stats(text).get("total", 0),
                "cpu_s": t.cpu,
                "wall_s": t.wall,
                "note": "Nothing to be done"
                if nothing_to_be_done(text)
                else "JOBS SCHEDULED: " + text[-600:],
            }
        )

        edit_persona(run_dir / "personas.yaml", persona)
        t, proc = sm("-n", "all")
        text = proc.stdout + proc.stderr
        jobs = dry_run_jobs(text)
        by_rule = Counter(r for r, _ in jobs)
        rows.append(
            {
                "section": "invalidation",
                "measure": f"snakemake -n all, persona {persona} edited",
                "jobs": len(jobs),
                "cpu_s": t.cpu,
                "wall_s": t.wall,
                "note": f"jobs by rule {dict(by_rule)}",
            }
        )
        for rule, total in sorted(llm.items()):
            rows.append(
                invalidated(
                    rule,
                    total,
                    [wc for r, wc in jobs if r == rule],
                    [j.wc for j in project.llm_jobs() if j.rule == rule],
                    persona,
                    len(personas),
                )
            )
    return rows


def invalidated(
    rule: str, total: int, scheduled: list[dict], every: list[dict], persona: str, n_personas: int
) -> dict:
    """The row of one LLM rule after an edit of ``persona``: its jobs the dry run scheduled, checked
    against exactly the jobs of that persona (none for a rule whose jobs have no persona)."""
    key = lambda wc: tuple(sorted(wc.items()))  # noqa: E731
    expected = sorted(key(wc) for wc in every if wc.get("persona") == persona)
    got = sorted(key(wc) for wc in scheduled)
    note = f"{len(got)}/{total}" + (f" = 1/{total / len(got):g}" if got else "")
    if not any("persona" in wc for wc in every):
        note += "; its jobs have no persona: " + ("none scheduled, as expected" if not got else "SCHEDULED")
    elif got == expected:
        note += f"; exactly the jobs of persona {persona}" + (
            f", 1/{n_personas} of the rule" if len(got) * n_personas == total else ""
        )
    else:
        note += f"; NOT the jobs of persona {persona}: {sorted(set(got) ^ set(expected))[:3]}"
    return {
        "section": "invalidation",
        "measure": f"  {rule} jobs scheduled / all {rule} jobs",
        "jobs": len(got),
        "cpu_s": None,
        "wall_s": None,
        "note": note,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--configfile",
        action="append",
        default=None,
        help="a paper config (repeatable; default every config/paper-*.yaml)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="repetitions of each paper-scale dry run")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument(
        "--per-grade",
        type=int,
        default=None,
        help="pairs per grade of each sample in the run (default: the whole sample)",
    )
    ap.add_argument(
        "--max-judges",
        type=int,
        default=None,
        help="cap every judges list of the run to its first N models (default: all)",
    )
    ap.add_argument("--persona", default=None, help="the persona to edit (default: the second of the run)")
    ap.add_argument("--keep", help="build the run folder here and keep it (default: a temporary folder)")
    ap.add_argument("--skip-run", action="store_true", help="only the paper-scale dry runs")
    ap.add_argument("--out", default=str(default_out("dag_scale")))
    args = ap.parse_args()

    configfiles = [
        Path(f).resolve() for f in (args.configfile or sorted((ROOT / "config").glob("paper-*.yaml")))
    ]
    if not configfiles:
        ap.error("no --configfile and no config/paper-*.yaml")
    print("configs:", ", ".join(os.path.relpath(f, ROOT) for f in configfiles), flush=True)
    rows = paper_dry_runs(configfiles, args.repeat)
    print(markdown(rows, COLUMNS), flush=True)
    if not args.skip_run:
        with on_path(TESTS):
            if args.keep:
                rows += invalidation(
                    configfiles,
                    Path(args.keep).resolve(),
                    args.cores,
                    args.per_grade,
                    args.max_judges,
                    args.persona,
                )
            else:
                with tempfile.TemporaryDirectory() as tmp:
                    rows += invalidation(
                        configfiles,
                        Path(tmp) / "run",
                        args.cores,
                        args.per_grade,
                        args.max_judges,
                        args.persona,
                    )
    path = write_tsv(rows, COLUMNS, args.out)
    print(markdown(rows, COLUMNS))
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()
