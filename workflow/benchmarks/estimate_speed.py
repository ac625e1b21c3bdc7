"""How long ``judgelab estimate`` takes on the paper configs before any download (the datasets
counted from their known sizes and typical text lengths, every request rendered as the jobs
render it), and that two checkouts estimate the same table.

    python3 workflow/benchmarks/estimate_speed.py [--run NAME=CHECKOUT ...] [--config paper-peras.yaml ...]
        [--repeat 1] [--out results/benchmarks/estimate_speed.tsv]

Each run (default: this checkout) estimates each config (default: ``config/paper-peras.yaml``) in a
fresh folder holding a copy of that checkout's ``config/`` (nothing prepared, no cache), as a
fresh process: ``python3 -m judgelab.cli estimate --configfile config/<config>`` (merged over
``config/config.yaml``)
with the checkout's ``workflow/src`` first on ``PYTHONPATH``. Prints one row per run x config
(wall and CPU s, the median of ``--repeat``, the calls counted) and whether every run's table
equals the first run's.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import ROOT, default_out, markdown, median, run, run_env, write_tsv  # noqa: E402

COLUMNS = ["run", "config", "calls", "wall_s", "cpu_s", "same_table"]


def estimate_once(checkout: Path, config: str, folder: Path) -> tuple:
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(checkout / "config", folder / "config")
    out = folder / "estimate.tsv"
    cmd = [sys.executable, "-m", "judgelab.cli", "estimate", "--snakefile", checkout / "Snakefile"]
    cmd += ["--configfile", f"config/{config}", "-d", folder, "--out", out]
    timing, _ = run(cmd, env=run_env(src=checkout / "workflow" / "src"), timeout=3600)
    return timing, out.read_text(encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", action="append", default=[], metavar="NAME=CHECKOUT")
    ap.add_argument("--config", action="append", default=[], help="a file of config/ (repeatable)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out", default=str(default_out("estimate_speed")))
    args = ap.parse_args(argv)
    runs = [tuple(r.split("=", 1)) for r in args.run] or [("this", str(ROOT))]
    configs = args.config or ["paper-peras.yaml"]
    rows, first = [], {}
    with tempfile.TemporaryDirectory(prefix="jl-estimate-") as tmp:
        for name, checkout in runs:
            for config in configs:
                timings, table = [], ""
                for i in range(args.repeat):
                    t, table = estimate_once(Path(checkout).resolve(), config, Path(tmp) / f"{name}-{i}")
                    timings.append(t)
                first.setdefault(config, table)
                t = median(timings)
                calls = sum(
                    int(line.split("\t")[header_index(table, "calls")]) for line in table.splitlines()[1:]
                )
                rows.append(
                    {
                        "run": name,
                        "config": config,
                        "calls": calls,
                        "wall_s": t.wall,
                        "cpu_s": t.cpu,
                        "same_table": table == first[config],
                    }
                )
                print(markdown(rows[-1:], COLUMNS).splitlines()[-1], flush=True)
    write_tsv(rows, COLUMNS, args.out)
    print(markdown(rows, COLUMNS))
    return 0


def header_index(table: str, column: str) -> int:
    return table.splitlines()[0].split("\t").index(column)


if __name__ == "__main__":
    sys.exit(main())
