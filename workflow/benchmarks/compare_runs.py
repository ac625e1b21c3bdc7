"""Compare every results file of two runs (logs left out): byte for byte, then - for the files
that differ - TSVs re-read without the columns that record per-call timing and cache provenance
(``latency_s``, ``cache_hit`` and the other cache-provenance columns) and PDFs without their
creation date; a TSV that differs in its numbers only says by how much at most.

    python3 workflow/benchmarks/compare_runs.py BEFORE/results AFTER/results
    python3 workflow/benchmarks/compare_runs.py BEFORE/results AFTER/results \
        --rename workflow/benchmarks/peras-renames.tsv

``--rename``: the path prefixes a refactoring moved (``dryrun_jobs.py``'s file, paths given from the
run folder: ``results/...``); each file of BEFORE is compared with the file of AFTER at its new place.

Used for the before/after check of a refactoring: the same default `all` on two commits must
give the same files.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path, PurePosixPath

import pandas as pd
from dryrun_jobs import Renames

#: per-call timing and cache provenance: whether an answer was computed or read from the cache
VOLATILE = ("latency_s", "cache_hit", "rewrite_cache_hit", "check_cache_hit", "cache_hits")


def files(root: Path) -> set[Path]:
    return {
        p.relative_to(root)
        for p in root.rglob("*")
        if p.is_file() and "logs" not in p.relative_to(root).parts
    }


def why_different(a: Path, b: Path) -> str:
    x, y = a.read_bytes(), b.read_bytes()
    if a.suffix == ".tsv":
        dx, dy = pd.read_csv(a, sep="\t"), pd.read_csv(b, sep="\t")
        drop = [c for c in VOLATILE if c in dx.columns]
        if list(dx.columns) == list(dy.columns) and dx.drop(columns=drop).equals(dy.drop(columns=drop)):
            return f"only in {drop}"
        if list(dx.columns) == list(dy.columns) and dx.shape == dy.shape:
            nx, ny = (
                dx.drop(columns=drop).select_dtypes("number"),
                dy.drop(columns=drop).select_dtypes("number"),
            )
            rest = [c for c in dx.columns if c not in drop and c not in nx.columns]
            if list(nx.columns) == list(ny.columns) and dx[rest].equals(dy[rest]):
                gap = float((nx - ny).abs().max().max())
                return f"CONTENT DIFFERS: numbers only, by at most {gap:.1e}"
    if a.suffix == ".pdf":

        def strip(s: bytes) -> bytes:
            return re.sub(rb"/CreationDate \(D:[^)]*\)", b"", s)

        if strip(x) == strip(y):
            return "only in the PDF CreationDate"
    return "CONTENT DIFFERS"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rename", type=Path, help="a TSV of renames (dryrun_jobs.py --rename)")
    args = parser.parse_args()
    renames = Renames.read(args.rename) if args.rename else Renames()
    top = PurePosixPath(args.before.name)  # the renames' paths start at the run folder: results/...
    moved = {rel: Path(renames.path(str(top / rel))).relative_to(top) for rel in files(args.before)}
    fa, fb = set(moved.values()), files(args.after)
    source = {new: old for old, new in moved.items()}
    print(
        f"files: {len(fa)} vs {len(fb)}; only before: {sorted(map(str, fa - fb))}; "
        f"only after: {sorted(map(str, fb - fa))}"
    )
    same, kinds = 0, {}
    for rel in sorted(fa & fb):
        before = args.before / source[rel]
        if before.read_bytes() == (args.after / rel).read_bytes():
            same += 1
        else:
            kinds.setdefault(why_different(before, args.after / rel), []).append(str(rel))
    print(f"identical byte for byte: {same}")
    for why, rels in kinds.items():
        print(f"  differ {why}: {len(rels)}, e.g. {rels[:3]}")
    return 1 if any(k.startswith("CONTENT DIFFERS") for k in kinds) or fa != fb else 0


if __name__ == "__main__":
    raise SystemExit(main())
