"""The package's layout rules: strict layers - the core (cache, data, llm, analysis, annotate, errors,
params) <- the project base (``judgelab.project``) <- the studies (``judgelab.studies.*``) <- the
wiring (``judgelab.wiring``, ``judgelab.cli``), each importing only those below it -, no study
importing another study, no import cycle among modules or among packages (imports inside
functions included, and modules loaded by name: ``import_module`` of a string or an f-string, and
``"module:Class"`` registry entries such as the backends'), the backend contract names no backend,
every package says what lives where, and no module keeps a global that decides which cache a call
uses."""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "workflow" / "src" / "judgelab"

#: The layers, lowest first: a module may import only modules of its own layer or below.
LAYERS = (
    ("core", ("cache", "data", "llm", "analysis", "annotate", "errors", "params", "schema", "")),
    ("project", ("project",)),
    ("studies", ("studies",)),
    ("wiring", ("wiring", "cli")),
)


def module_name(f: Path, root: Path = PACKAGE) -> str:
    rel = f.relative_to(root.parent).with_suffix("")
    return ".".join(p for p in rel.parts if p != "__init__")


@functools.cache  # the tests read the same modules: each is parsed once
def tree(f: Path) -> ast.Module:
    return ast.parse(f.read_text(encoding="utf-8"))


def _by_name(node: ast.AST, names: frozenset[str]) -> set[str]:
    """The modules a name expression may load: a string, or an f-string whose fields stand for any
    identifier (``f"judgelab.studies.{s}.plan"``: every study's plan)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value.partition(":")[0]} & names
    if isinstance(node, ast.JoinedStr):
        pattern = "".join(
            re.escape(v.value) if isinstance(v, ast.Constant) else r"[A-Za-z0-9_]+" for v in node.values
        )
        return {n for n in names if re.fullmatch(pattern, n)}
    return set()


def imports(f: Path, root: Path, names: frozenset[str]) -> set[str]:
    """Every module of the package ``root`` (its modules: ``names``) that ``f`` imports, at any depth
    (functions, TYPE_CHECKING blocks), or loads by name: ``import_module(<str or f-string>)``, and a
    ``"package.module:Class"`` string (a registry entry, imported when chosen)."""
    me, top = module_name(f, root), root.name
    found = set()
    for node in ast.walk(tree(f)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = me.split(".") if f.name == "__init__.py" else me.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] == top:
                # ``from pkg import submodule`` imports the submodule; any other name, the module
                subs = {f"{mod}.{a.name}" for a in node.names} & names
                found |= subs if len(subs) == len(node.names) else subs | {mod}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == top}
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called == "import_module":
                found |= _by_name(node.args[0], names)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and re.fullmatch(rf"{top}(\.\w+)+:\w+", node.value)
        ):
            found |= _by_name(node, names)
    return found & names


def graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (or loads by name)."""
    mods = {module_name(f, root): f for f in root.rglob("*.py")}
    names = frozenset(mods)
    return {name: {m for m in imports(f, root, names) if m != name} for name, f in mods.items()}


def layer(module: str) -> int:
    """The layer of a module (:data:`LAYERS`), by its first name under the package."""
    first = (module.split(".") + [""])[1]
    return next(i for i, (_, tops) in enumerate(LAYERS) if first in tops)


def study_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "studies" else None


def package_of(module: str) -> str:
    """The package a module counts in for the package graph: a top-level package (or module:
    ``cli``, ``errors``), a study."""
    parts = module.split(".")
    return ".".join(parts[:3] if len(parts) > 2 and parts[1] == "studies" else parts[:2])


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(g.get(v, ())):
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
                found.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def layout_problems(root: Path = PACKAGE) -> list[str]:
    """Everything wrong with the layers of the package at ``root``: an import upward, a study
    importing another study, a cycle among modules, a cycle among packages."""
    g = graph(root)
    problems = []
    for a, deps in sorted(g.items()):
        for b in sorted(deps):
            if layer(b) > layer(a):
                problems.append(f"upward: {a} ({LAYERS[layer(a)][0]}) -> {b} ({LAYERS[layer(b)][0]})")
            if study_of(a) and study_of(b) and study_of(a) != study_of(b):
                problems.append(f"across studies: {a} -> {b}")
    problems += [f"module cycle: {' <-> '.join(c)}" for c in cycles(g)]
    packages: dict[str, set[str]] = {}
    for a, deps in g.items():
        packages.setdefault(package_of(a), set()).update(package_of(b) for b in deps)
    packages = {p: deps - {p} for p, deps in packages.items()}
    problems += [f"package cycle: {' <-> '.join(c)}" for c in cycles(packages)]
    return problems


def test_the_layers_hold_without_a_cycle():
    """core <- project base <- studies <- wiring; no study imports another; no cycle among the
    modules or the packages, counting the modules loaded by name."""
    g = graph()
    assert len(g) > 50
    # the edges by name are followed: the facade loads every study's plan, the registry every backend
    assert {f"judgelab.studies.{s}.plan" for s in ("peras", "ranking")} <= g["judgelab.wiring.facade"]
    assert "judgelab.llm.backends.local" in g["judgelab.llm.backends"]
    assert layout_problems() == []


def _fake_package(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / "judgelab" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root / "judgelab"


def test_the_checker_sees_a_cycle_built_on_purpose(tmp_path):
    """The cycle the first redesign missed, rebuilt in a tiny package: the wiring loads a study's
    plan by an f-string, the study's estimate reaches up to the wiring's estimate."""
    pkg = _fake_package(
        tmp_path,
        {
            "__init__.py": "",
            "studies/__init__.py": 'STUDIES = ("sim",)\n',
            "studies/sim/__init__.py": "",
            "studies/sim/plan.py": "from judgelab.studies.sim import estimate\n",
            "studies/sim/estimate.py": "def f():\n    from judgelab.wiring.estimate import made_for\n",
            "wiring/__init__.py": "",
            "wiring/facade.py": """\
                from importlib import import_module
                from judgelab.studies import STUDIES
                PLANS = {s: import_module(f"judgelab.studies.{s}.plan") for s in STUDIES}
            """,
            "wiring/estimate.py": "from judgelab.wiring.facade import PLANS\nmade_for = None\n",
        },
    )
    problems = layout_problems(pkg)
    assert "upward: judgelab.studies.sim.estimate (studies) -> judgelab.wiring.estimate (wiring)" in problems
    assert (
        "module cycle: judgelab.studies.sim.estimate <-> judgelab.studies.sim.plan <-> "
        "judgelab.wiring.estimate <-> judgelab.wiring.facade"
    ) in problems
    assert "package cycle: judgelab.studies.sim <-> judgelab.wiring" in problems
    # without the edge by name the cycle is gone (the import_module edge is what closes it)
    (pkg / "wiring" / "facade.py").write_text("PLANS = {}\n", encoding="utf-8")
    tree.cache_clear()
    assert not [p for p in layout_problems(pkg) if "cycle" in p]


def test_the_checker_sees_a_registry_entry_and_a_study_reaching_into_another(tmp_path):
    pkg = _fake_package(
        tmp_path,
        {
            "__init__.py": "",
            "llm/__init__.py": 'BACKENDS = {"x": "judgelab.llm.x:X"}\n',
            "llm/x.py": "from judgelab.llm import BACKENDS\nclass X: ...\n",
            "studies/__init__.py": "",
            "studies/a/__init__.py": "",
            "studies/a/prompts.py": "",
            "studies/b/__init__.py": "",
            "studies/b/originals.py": "from judgelab.studies.a.prompts import *\n",
            "project/__init__.py": "",
            "project/plan.py": "from judgelab import studies\n",
        },
    )
    problems = layout_problems(pkg)
    assert "module cycle: judgelab.llm <-> judgelab.llm.x" in problems
    assert "across studies: judgelab.studies.b.originals -> judgelab.studies.a.prompts" in problems
    assert "upward: judgelab.project.plan (project) -> judgelab.studies (studies)" in problems


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


def test_no_backend_is_asked_by_its_name_outside_the_registry():
    """What the embedded model does differently (runs here, reads logits, costs nothing) is a
    capability its registry entry declares (``judgelab.llm.backends.capabilities``): no module
    outside the backends compares a backend with ``"local"``."""
    offenders = [
        f"{f.relative_to(PACKAGE)}:{node.lineno}"
        for f in PACKAGE.rglob("*.py")
        if "backends" not in f.relative_to(PACKAGE).parts
        for node in ast.walk(tree(f))
        if isinstance(node, ast.Compare)
        and any(isinstance(x, ast.Constant) and x.value == "local" for x in [node.left, *node.comparators])
    ]
    assert not offenders, offenders


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
