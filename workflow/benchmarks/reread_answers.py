"""What a new answer parser changes in finished runs: every judgment table (a TSV with ``label``,
``parsed`` and ``answer`` columns; PERAS's confidence tables, with ``asked``, for their confidence)
of a run folder
before the parser change against the same table after the workflow reran it (the judge jobs rerun
from the request cache when the parser version in their params changes: no request is sent).

    python3 workflow/benchmarks/reread_answers.py BEFORE/results AFTER/results [--out TSV]

For each table found under both: the answers (rows), how many were read before and after, how
many went from missing to a value (``gained``), from a value to missing (``lost``) and from one
value to another (``changed``); ``lost`` and ``changed`` must be 0 (the later rules only read
answers the earlier ones leave missing), and the answers themselves must be equal (the same cached
responses; a row whose answer differs is counted in ``answer_differs`` and left out). The rules
that read the gained answers (``parse_rule`` of the after table) are listed. Writes
``results/benchmarks/reread_answers.tsv`` (one row per table, then a total) unless ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

VALUE_COLUMNS = ("confidence", "label")


def tables(root: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(root.rglob("*.tsv")):
        if "logs" in path.parts or "benchmarks" in path.parts:
            continue
        header = path.open(encoding="utf-8").readline().rstrip("\n").split("\t")
        if {"parsed", "answer"} <= set(header) and any(c in header for c in VALUE_COLUMNS):
            out[str(path.relative_to(root))] = path
    return out


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def compare(before: Path, after: Path) -> dict:
    a, b = read(before), read(after)
    # a PERAS confidence table (``asked``) is read for its confidence, every other table for its label
    col = "confidence" if "asked" in a.columns else "label"
    if len(a) != len(b):
        raise SystemExit(f"{after}: {len(b)} rows, {len(a)} before: not the same table")
    same = a["answer"] == b["answer"]
    a, b = a[same], b[same]
    va, vb = a[col], b[col]
    gained = (va == "") & (vb != "")
    lost = (va != "") & (vb == "")
    changed = (va != "") & (vb != "") & (va.astype(str) != vb.astype(str))
    if col == "confidence":  # 85 and 85.0 are one value
        both = (va != "") & (vb != "")
        changed = both & (
            pd.to_numeric(va.where(both), errors="coerce") != pd.to_numeric(vb.where(both), errors="coerce")
        )
    rules = Counter(b.loc[gained, "parse_rule"]) if "parse_rule" in b.columns else Counter()
    return {
        "column": col,
        "answers": int(len(same)),
        "answer_differs": int((~same).sum()),
        "read_before": int((va != "").sum()),
        "read_after": int((vb != "").sum()),
        "gained": int(gained.sum()),
        "lost": int(lost.sum()),
        "changed": int(changed.sum()),
        "gained_by": ", ".join(f"{r} {n}" for r, n in rules.most_common()),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--out", type=Path, default=Path("results/benchmarks/reread_answers.tsv"))
    args = ap.parse_args(argv)
    old, new = tables(args.before), tables(args.after)
    rows = [{"table": name, **compare(old[name], new[name])} for name in sorted(set(old) & set(new))]
    if not rows:
        raise SystemExit(f"no judgment table under both {args.before} and {args.after}")
    total: dict = {"table": "TOTAL", "column": ""}
    for key in ("answers", "answer_differs", "read_before", "read_after", "gained", "lost", "changed"):
        total[key] = sum(r[key] for r in rows)
    by: Counter = Counter()
    for r in rows:
        for part in filter(None, r["gained_by"].split(", ")):
            rule, n = part.rsplit(" ", 1)
            by[rule] += int(n)
    total["gained_by"] = ", ".join(f"{r} {n}" for r, n in by.most_common())
    rows.append(total)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter="\t")
        w.writeheader()
        w.writerows(rows)
    w = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]), delimiter="\t")
    w.writeheader()
    w.writerows(r for r in rows if r["gained"] or r["lost"] or r["changed"] or r["table"] == "TOTAL")
    print(f"{len(rows) - 1} tables; only those that changed are shown; all in {args.out}")
    only = sorted(set(old) ^ set(new))
    if only:
        print(f"{len(only)} tables under one folder only, e.g. {only[:3]}")
    return 1 if total["lost"] or total["changed"] else 0


if __name__ == "__main__":
    sys.exit(main())
