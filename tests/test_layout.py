"""The package's layout rules: the core packages import no study (only the wiring - the project
facade, the estimate and the CLI - names the studies), no import cycle anywhere (imports inside
functions included), the backend contract names no backend, every package says what lives where,
and no module keeps a global that decides which cache a call uses."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "workflow" / "src" / "judgelab"
#: the modules that wire the studies together (they load the studies' plans by module path)
WIRING = {"project/facade.py", "project/estimate.py", "cli.py"}


def module_name(f: Path) -> str:
    rel = f.relative_to(PACKAGE.parent).with_suffix("")
    return ".".join(p for p in rel.parts if p != "__init__")


@functools.cache  # the tests read the same modules: each is parsed once
def tree(f: Path) -> ast.Module:
    return ast.parse(f.read_text(encoding="utf-8"))


@functools.cache
def imports(f: Path) -> set[str]:
    """Every judgelab module ``f`` imports, at any depth (functions, TYPE_CHECKING blocks)."""
    me = module_name(f)
    found = set()
    for node in ast.walk(tree(f)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = me.split(".") if f.name == "__init__.py" else me.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] == "judgelab":
                found |= {f"{mod}.{a.name}" for a in node.names} | {mod}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "judgelab"}
    return found


def graph() -> dict[str, set[str]]:
    mods = {module_name(f): f for f in PACKAGE.rglob("*.py")}
    return {name: {m for m in imports(f) if m in mods and m != name} for name, f in mods.items()}


def test_the_core_imports_no_study():
    offenders = []
    for f in PACKAGE.rglob("*.py"):
        rel = f.relative_to(PACKAGE).as_posix()
        if rel.startswith("studies/") or rel in WIRING:
            continue
        offenders += [f"{rel}: {m}" for m in imports(f) if m.startswith("judgelab.studies")]
    assert not offenders, offenders


def test_no_import_cycle_deferred_or_not():
    g = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in g:
        if v not in index:
            visit(v)
    assert len(g) > 50 and not cycles, cycles


def test_the_core_packages_and_their_layers():
    """cache imports nothing above it; data and llm no analysis, project or study; analysis no
    llm backend, project or study."""
    above = {
        "judgelab.cache": ("judgelab.data", "judgelab.llm", "judgelab.analysis", "judgelab.project"),
        "judgelab.data": ("judgelab.llm", "judgelab.analysis", "judgelab.project"),
        "judgelab.llm": ("judgelab.analysis", "judgelab.project"),
        "judgelab.analysis": ("judgelab.llm", "judgelab.cache", "judgelab.project"),
    }
    offenders = []
    for name, deps in graph().items():
        for pkg, banned in above.items():
            if name == pkg or name.startswith(pkg + "."):
                offenders += [f"{name} -> {d}" for d in deps if d.startswith(banned) or ".studies" in d]
    assert not offenders, offenders


def test_the_backend_contract_names_no_backend():
    base = (PACKAGE / "llm" / "backends" / "base.py").read_text(encoding="utf-8")
    for backend in ("LocalBackend", "OpenAIBackend", "AnthropicBackend", "BedrockBackend", "llama_cpp"):
        assert backend not in base, backend


def test_every_package_says_what_lives_where():
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc.splitlines()) >= 2, f"{init.relative_to(PACKAGE)}: no map of the package"


def test_no_module_sets_a_global_at_run_time():
    """A ``global`` statement is module state a call changes (e.g. which cache the next call
    uses): pass the value instead."""
    offenders = [
        f"{f.relative_to(PACKAGE)}:{node.lineno}"
        for f in PACKAGE.rglob("*.py")
        for node in ast.walk(tree(f))
        if isinstance(node, ast.Global)
    ]
    assert not offenders, offenders
