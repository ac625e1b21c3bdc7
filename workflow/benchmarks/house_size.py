"""The size of the package at a commit, counted the same way before and after a refactoring.

    python3 workflow/benchmarks/house_size.py 4040b6d HEAD

For each commit (read from git, the work tree is not touched): the lines of ``workflow/src``
split into code, docstrings and blank lines (a comment line counts as code); the studies' lines
and their wiring (the ``plan``, ``settings``, ``estimate`` and ``jobs`` modules of every study,
also when a module is split into a package of that name, and the modules a plan is split into by
concern: ``section``, ``runfiles``, ``judges``, ``inputs``, ``paths``, ``checks``); the functions whose name contains
``check``; the ``raise InputError`` statements; and the largest parameter count of a public job
function (``studies/*/jobs.py``).
"""

from __future__ import annotations

import argparse
import ast
import io
import subprocess
import tokenize
from pathlib import PurePosixPath

SRC = "workflow/src/judgelab"
WIRING = ("plan", "settings", "estimate", "jobs")
#: the modules a plan is split into by concern (the ranking plan: issue 39) count as its wiring too
PLAN_PARTS = ("section", "runfiles", "judges", "inputs", "paths", "checks")


def sources(rev: str) -> dict[str, str]:
    names = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev, SRC], capture_output=True, text=True, check=True
    ).stdout.split()
    return {
        n: subprocess.run(["git", "show", f"{rev}:{n}"], capture_output=True, text=True, check=True).stdout
        for n in names
        if n.endswith(".py")
    }


def docstring_lines(text: str) -> set[int]:
    """Line numbers (1-based) of module, class and function docstrings."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    end = body[0].end_lineno or body[0].lineno
                    lines.update(range(body[0].lineno, end + 1))
    return lines


def split(text: str) -> tuple[int, int, int]:
    doc = docstring_lines(text)
    code = blank = docs = 0
    for i, line in enumerate(text.splitlines(), start=1):
        if i in doc:
            docs += 1
        elif not line.strip():
            blank += 1
        else:
            code += 1
    return code, docs, blank


def is_wiring(path: str) -> bool:
    parts = PurePosixPath(path).relative_to(SRC).parts
    if len(parts) < 3 or parts[0] != "studies":
        return False
    return PurePosixPath(parts[2]).stem in WIRING + PLAN_PARTS


def raises_input_error(text: str) -> int:
    count = 0
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.NAME and tok.string == "raise":
            rest = tok.line[tok.end[1] :].strip()
            count += rest.startswith("InputError")
    return count


def largest_job(files: dict[str, str]) -> tuple[int, str]:
    best = (0, "")
    for path, text in files.items():
        parts = PurePosixPath(path).relative_to(SRC).parts
        if parts[0] != "studies" or "jobs" not in (PurePosixPath(parts[-1]).stem, *parts):
            continue  # a study's jobs module, or a module of its jobs package
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                a = node.args
                n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
                best = max(best, (n, f"{parts[1]}.{node.name}"))
    return best


def measure(rev: str) -> dict[str, object]:
    files = sources(rev)
    total = [0, 0, 0]
    studies = wiring = 0
    checks = raises = 0
    for path, text in files.items():
        c, d, b = split(text)
        total = [total[0] + c, total[1] + d, total[2] + b]
        n = c + d + b
        if PurePosixPath(path).relative_to(SRC).parts[0] == "studies":
            studies += n
            wiring += n if is_wiring(path) else 0
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "check" in node.name.lower():
                checks += 1
        raises += raises_input_error(text)
    size, name = largest_job(files)
    return {
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", rev], capture_output=True, text=True
        ).stdout.strip(),
        "lines": sum(total),
        "code": total[0],
        "docstrings": total[1],
        "blank": total[2],
        "study lines": studies,
        "study wiring": wiring,
        "*check* functions": checks,
        "raise InputError": raises,
        "largest job function": f"{size} ({name})",
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("revs", nargs="+", help="commits to count (e.g. 4040b6d HEAD)")
    rows = [measure(r) for r in parser.parse_args().revs]
    keys = list(rows[0])
    print("| " + " | ".join(["measure"] + [str(r["commit"]) for r in rows]) + " |")
    print("|" + "---|" * (len(rows) + 1))
    for k in keys[1:]:
        print("| " + " | ".join([k] + [str(r[k]) for r in rows]) + " |")


if __name__ == "__main__":
    main()
