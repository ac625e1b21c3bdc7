"""The jobs a dry run of each config resolves to, one line per job (rule and outputs, sorted), for
the before/after check of a refactoring: the same config on two commits must list the same jobs.

    python3 workflow/benchmarks/dryrun_jobs.py --checkout . --out results/benchmarks/dryrun/after
    python3 workflow/benchmarks/dryrun_jobs.py --checkout ../before --out /tmp/dryrun/before
    diff -r /tmp/dryrun/before results/benchmarks/dryrun/after

Each config (default: the shipped ``config/config.yaml`` and every ``config/paper-*.yaml`` of the
checkout) is dry-run in a fresh folder with ``snakemake -s <checkout>/Snakefile -d <folder>
--configfile config/config.yaml <config> -n`` (the checkout's ``workflow/src`` first on ``PYTHONPATH``; API key
variables unset: a dry run needs none). Writes ``<out>/<config name>.jobs`` and prints one line per
config: its job count.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

JOB = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):\n((?:    .*\n)+)", re.MULTILINE)


def jobs(text: str) -> list[str]:
    """``rule <name> -> <outputs>`` for every job block of a dry run's output, sorted."""
    out = []
    for rule, body in JOB.findall(text):
        fields = dict(
            line.strip().split(": ", 1)
            for line in body.splitlines()
            if ": " in line and line.startswith("    ")
        )
        out.append(f"{rule} -> {fields.get('output', '')}")
    return sorted(out)


def dry_run(checkout: Path, config: Path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_KEY"))}
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(checkout / "workflow" / "src"), env.get("PYTHONPATH")])
    )
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "snakemake", "-s", str(checkout / "Snakefile"), "-d", tmp, "-n"]
        # the Snakefile's `configfile:` is relative to the run folder: give the shipped default first,
        # the paper config on top of it, as a run from the checkout does
        default = checkout / "config" / "config.yaml"
        cmd += ["--configfile", *dict.fromkeys([str(default), str(config.resolve())])]
        run = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=checkout)
    if run.returncode != 0:
        raise SystemExit(f"dry run of {config} failed:\n{run.stdout}\n{run.stderr}")
    return jobs(run.stdout)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("configs", nargs="*", type=Path, help="configs (default: config.yaml, paper-*.yaml)")
    args = parser.parse_args(argv)
    checkout = args.checkout.resolve()
    configs = args.configs or [
        checkout / "config" / "config.yaml",
        *sorted(checkout.glob("config/paper-*.yaml")),
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    for config in configs:
        listed = dry_run(checkout, config)
        (args.out / f"{config.stem}.jobs").write_text("".join(f"{j}\n" for j in listed), encoding="utf-8")
        print(f"{config.name}: {len(listed)} jobs")


if __name__ == "__main__":
    main()
