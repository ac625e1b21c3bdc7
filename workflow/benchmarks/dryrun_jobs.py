"""The jobs a dry run of each config resolves to, one line per job (rule, outputs and log, sorted),
for the before/after check of a refactoring: the same config on two commits must list the same
jobs, up to the renames the refactoring made (``--rename``).

    python3 workflow/benchmarks/dryrun_jobs.py --checkout . --out results/benchmarks/dryrun/after
    python3 workflow/benchmarks/dryrun_jobs.py --checkout ../before --out /tmp/dryrun/before \\
        --rename workflow/benchmarks/peras-renames.tsv
    diff -r /tmp/dryrun/before results/benchmarks/dryrun/after
    python3 workflow/benchmarks/dryrun_jobs.py .test/peras          # one config's jobs, printed

A config is a config file or a run folder (a ``.test/<name>/`` folder: its ``config/config.yaml``
is the whole config). A file is dry-run in a fresh folder with ``snakemake -s <checkout>/Snakefile
-d <folder> --configfile config/config.yaml <config> -n``; a run folder is copied (links followed)
into a fresh folder and dry-run there. The checkout's ``workflow/src`` comes first on
``PYTHONPATH``; API key variables are unset (a dry run needs none). Every job is listed (a fresh
folder has no outputs). Default configs: the shipped ``config/config.yaml``, every
``config/paper-*.yaml`` and every ``.test/*/`` folder of the checkout. With ``--out``: writes
``<out>/<config name>.jobs`` and prints one line per config (its job count, or why its dry run
failed); without: prints the jobs.

``--rename FILE``: a TSV of ``kind<TAB>old<TAB>new`` rows (``#`` comments), kind ``rule`` (a rule
name, renamed where it is the job's rule) or ``path`` (a path prefix, the longest that matches
replaced, in every output and log path): the list of an old commit rewritten in the new names, so
``diff`` shows only what changed beyond the renames.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

JOB = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):\n((?:    .*\n)+)", re.MULTILINE)


class Renames:
    """Rule names and path prefixes, old -> new (``--rename``)."""

    def __init__(self, rules: dict[str, str] | None = None, paths: dict[str, str] | None = None):
        self.rules = dict(rules or {})
        # longest prefix first: results/metrics/groups/ before results/metrics/
        self.paths = dict(sorted((paths or {}).items(), key=lambda kv: -len(kv[0])))

    @classmethod
    def read(cls, path: Path) -> Renames:
        rules: dict[str, str] = {}
        paths: dict[str, str] = {}
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 3 or fields[0] not in ("rule", "path"):
                raise SystemExit(f"{path}:{n}: expected 'rule|path<TAB>old<TAB>new', got {line!r}")
            (rules if fields[0] == "rule" else paths)[fields[1]] = fields[2]
        return cls(rules, paths)

    def rule(self, name: str) -> str:
        return self.rules.get(name, name)

    def path(self, p: str) -> str:
        for old, new in self.paths.items():
            if p.startswith(old):
                return new + p[len(old) :]
        return p


def jobs(text: str, renames: Renames | None = None) -> list[str]:
    """``rule <name> -> <outputs>[ | log: <logs>]`` for every job block of a dry run's output,
    renamed (``renames``) and sorted."""
    renames = renames or Renames()
    out = []
    for rule, body in JOB.findall(text):
        fields = dict(
            line.strip().split(": ", 1)
            for line in body.splitlines()
            if ": " in line and line.startswith("    ")
        )
        line = f"{renames.rule(rule)} -> " + ", ".join(
            renames.path(p) for p in filter(None, fields.get("output", "").split(", "))
        )
        if fields.get("log"):
            line += " | log: " + ", ".join(renames.path(p) for p in fields["log"].split(", "))
        out.append(line)
    return sorted(out)


def dry_run(checkout: Path, config: Path, renames: Renames | None = None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_KEY"))}
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(checkout / "workflow" / "src"), env.get("PYTHONPATH")])
    )
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "snakemake", "-s", str(checkout / "Snakefile"), "-d", tmp, "-n"]
        if config.is_dir():
            # a run folder: its config/config.yaml is the whole config, its paths relative to it
            shutil.copytree(config, tmp, dirs_exist_ok=True, symlinks=False)
        else:
            # the Snakefile's `configfile:` is relative to the run folder: give the shipped default
            # first, the paper config on top of it, as a run from the checkout does
            default = checkout / "config" / "config.yaml"
            cmd += ["--configfile", *dict.fromkeys([str(default), str(config.resolve())])]
        run = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=checkout)
    if run.returncode != 0:
        raise RuntimeError(f"dry run of {config} failed:\n{run.stdout}\n{run.stderr}")
    return jobs(run.stdout, renames)


def default_configs(checkout: Path) -> list[Path]:
    return [
        checkout / "config" / "config.yaml",
        *sorted(checkout.glob("config/paper-*.yaml")),
        *sorted(p for p in (checkout / ".test").iterdir() if (p / "config" / "config.yaml").exists()),
    ]


def config_name(config: Path) -> str:
    return f"test-{config.name}" if config.is_dir() else config.stem


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--out", type=Path, help="write <out>/<config>.jobs (default: print the jobs)")
    parser.add_argument("--rename", type=Path, help="TSV kind/old/new: rule names and path prefixes")
    parser.add_argument(
        "configs", nargs="*", type=Path, help="config files or run folders (default: see above)"
    )
    args = parser.parse_args(argv)
    checkout = args.checkout.resolve()
    renames = Renames.read(args.rename) if args.rename else None
    configs = args.configs or default_configs(checkout)
    failed = 0
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    for config in configs:
        try:
            listed = dry_run(checkout, config, renames)
        except RuntimeError as exc:
            failed += 1
            if not args.out:
                raise SystemExit(str(exc)) from None
            lines = str(exc).strip().splitlines()
            last = next((x for x in lines if "Error" in x or "error" in x), lines[-1]).strip()
            (args.out / f"{config_name(config)}.jobs").write_text(f"FAILED: {last}\n", encoding="utf-8")
            print(f"{config_name(config)}: dry run failed: {last}")
            continue
        text = "".join(f"{j}\n" for j in listed)
        if args.out:
            (args.out / f"{config_name(config)}.jobs").write_text(text, encoding="utf-8")
            print(f"{config_name(config)}: {len(listed)} jobs")
        else:
            sys.stdout.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
