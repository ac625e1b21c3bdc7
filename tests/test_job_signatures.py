"""Every job function takes at most 8 parameters (issue 39): the public functions of each study's
jobs module and every function a workflow script runs. More files or settings than that are
grouped (a :class:`judgelab.params.Files` group of inputs, or one settings value)."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ROOT / "workflow" / "src" / "judgelab" / "studies"
SCRIPTS = ROOT / "workflow" / "scripts"
MOST = 8


def _jobs_functions() -> dict[str, object]:
    """module:function -> function, for the public functions defined in studies/*/jobs.py."""
    out = {}
    for path in sorted(STUDIES.glob("*/jobs.py")):
        module = importlib.import_module(f"judgelab.studies.{path.parent.name}.jobs")
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if not name.startswith("_") and fn.__module__ == module.__name__:
                out[f"{module.__name__}:{name}"] = fn
    return out


def _script_functions() -> dict[str, object]:
    """script -> the function its ``run(snakemake, <function>)`` runs (imported by name)."""
    out = {}
    for path in sorted(SCRIPTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.asname or alias.name: (node.module, alias.name)
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
            for alias in node.names
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "run"
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Name)
                and node.args[1].id in imported
            ):
                module, name = imported[node.args[1].id]
                out[str(path.relative_to(ROOT))] = getattr(importlib.import_module(module), name)
    return out


def test_every_job_function_takes_at_most_eight_parameters():
    functions = _jobs_functions()
    scripts = _script_functions()
    assert len(functions) >= 40 and len(scripts) >= 40  # the walk found the jobs it is about
    over = {
        where: len(inspect.signature(fn).parameters)
        for where, fn in [*functions.items(), *scripts.items()]
        if len(inspect.signature(fn).parameters) > MOST
    }
    assert not over, f"job functions with more than {MOST} parameters: {over}"
