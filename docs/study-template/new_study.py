"""Start a new study from the template: every file and registration a study needs, in one command.

    python docs/study-template/new_study.py NAME [--title "Title"] [--root .]

NAME becomes the config section, the target, the package ``judgelab.studies.NAME``, the folder of
its rules, scripts, captions, prompts, tests and test config, and the prefix of its rules. What it
writes (the places a study touches; CONTRIBUTING.md "Add a study" explains each):

1. ``workflow/src/judgelab/studies/NAME/`` - ``__init__.py``, ``plan.py``, ``paths.py`` (its result
   paths, each named once), ``science.py``, ``jobs.py``;
2. ``workflow/rules/NAME/`` - the entry ``NAME.smk`` (the ``NAME`` target) and its stage files
   ``common.smk``, ``judge.smk``, ``table.smk``, listed in docs/layout.md's table of rule files;
3. ``workflow/scripts/NAME/judge.py``, ``table.py`` - one-call adapters;
4. ``resources/prompts/NAME/judge.yaml`` - its prompt as data;
5. ``workflow/report/NAME/table.rst`` - the caption of its table in the report;
6. the ``NAME`` section of ``workflow/schemas/config.schema.yaml`` (``enabled: false`` by default),
   and ``NAME: {enabled: false}`` at the end of ``config/config.yaml``;
7. ``judgelab.studies.STUDIES`` - the study's place in ``all`` (the Snakefile includes
   ``workflow/rules/<study>/<study>.smk`` for every study listed there);
8. ``config/README.md`` - a section with the study's key table (generated from the schema);
9. ``.test/NAME/config/config.yaml`` - a test workflow on the bundled TREC fixture (``.test/NAME/fixtures``
   links ``tests/fixtures``);
10. ``tests/NAME/test_NAME.py`` - its tests (its science by hand, its plan on its own test config);
11. ``docs/studies/NAME.md`` - its page: the paper, what is reproduced and what deviates.

The made study runs as it is (``tests/test_study_template.py`` runs one with the embedded model):
a binary judgment of every dataset x judge and an agreement table. Replace its science, keep the
shape. Switching it on in the default run (``config/config.yaml``: ``NAME: {enabled: true}``, where
the script writes it off) is left to you: the default run has a time budget (CONTRIBUTING.md, "Add
a study").
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FILES = HERE / "files"

#: template file -> where it goes (``{name}`` is the study's name)
TARGETS = {
    "pkg/__init__.py.tmpl": "workflow/src/judgelab/studies/{name}/__init__.py",
    "pkg/plan.py.tmpl": "workflow/src/judgelab/studies/{name}/plan.py",
    "pkg/paths.py.tmpl": "workflow/src/judgelab/studies/{name}/paths.py",
    "pkg/science.py.tmpl": "workflow/src/judgelab/studies/{name}/science.py",
    "pkg/jobs.py.tmpl": "workflow/src/judgelab/studies/{name}/jobs.py",
    "rules/study.smk.tmpl": "workflow/rules/{name}/{name}.smk",
    "rules/common.smk.tmpl": "workflow/rules/{name}/common.smk",
    "rules/judge.smk.tmpl": "workflow/rules/{name}/judge.smk",
    "rules/table.smk.tmpl": "workflow/rules/{name}/table.smk",
    "scripts/judge.py.tmpl": "workflow/scripts/{name}/judge.py",
    "scripts/table.py.tmpl": "workflow/scripts/{name}/table.py",
    "prompts/judge.yaml.tmpl": "resources/prompts/{name}/judge.yaml",
    "report/table.rst.tmpl": "workflow/report/{name}/table.rst",
    "test/config.yaml.tmpl": ".test/{name}/config/config.yaml",
    "tests/test_study.py.tmpl": "tests/{name}/test_{name}.py",
    "docs/study.md.tmpl": "docs/studies/{name}.md",
}
SCHEMA = Path("workflow/schemas/config.schema.yaml")
STUDIES = Path("workflow/src/judgelab/studies/__init__.py")
README = Path("config/README.md")
CONFIG = Path("config/config.yaml")
LAYOUT = Path("docs/layout.md")
#: the stage files of the made study's rules (beside the entry ``NAME.smk``), as docs/layout.md lists them
STAGES = "judge, table"


def fill(text: str, name: str, title: str) -> str:
    return text.replace("{{study}}", name).replace("{{STUDY}}", name.upper()).replace("{{Title}}", title)


def add_schema_section(root: Path, section: str) -> None:
    """The study's section as the last top-level property of the schema."""
    path = root / SCHEMA
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = lines.index("properties:\n")
    end = next(i for i in range(start + 1, len(lines)) if lines[i][:1] not in (" ", "\n"))
    lines[end:end] = [section if section.endswith("\n") else section + "\n"]
    path.write_text("".join(lines), encoding="utf-8")


def register(root: Path, name: str) -> None:
    """``name`` appended to ``STUDIES``."""
    path = root / STUDIES
    text = path.read_text(encoding="utf-8")
    m = re.search(r"^STUDIES = \(([^)]*)\)", text, re.M)
    if m is None:
        raise SystemExit(f"{path}: no `STUDIES = (...)` line")
    names = [s.strip().strip("\"'") for s in m.group(1).split(",") if s.strip()]
    if name in names:
        raise SystemExit(f"{path}: {name!r} is already a study")
    new = "STUDIES = (" + ", ".join(f'"{s}"' for s in [*names, name]) + ")"
    path.write_text(text[: m.start()] + new + text[m.end() :], encoding="utf-8")


def add_layout_row(root: Path, name: str) -> None:
    """The study's row in docs/layout.md's table of rule files, after the last study's row
    (``tests/test_study_shape.py`` checks that every study has one, true to its folder)."""
    path = root / LAYOUT
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    rows = [i for i, line in enumerate(lines) if re.match(r"^\| \w+ \| .+ \(\+ common\) \|$", line)]
    if not rows:
        raise SystemExit(f"{path}: no table of rule files (rows `| study | stages (+ common) |`)")
    lines.insert(rows[-1] + 1, f"| {name} | {STAGES} (+ common) |\n")
    path.write_text("".join(lines), encoding="utf-8")


def add_config_entry(root: Path, name: str, title: str) -> None:
    """``NAME: {enabled: false}`` at the end of the default config (off until its share of the
    default run's budget is measured)."""
    path = root / CONFIG
    text = path.read_text(encoding="utf-8").rstrip("\n")
    path.write_text(
        text + f"\n\n# {title}: off until its share of the default run is measured (CONTRIBUTING.md).\n"
        f"{name}:\n  enabled: false            # run the study as part of `all`\n",
        encoding="utf-8",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("name", help="the study's name: lower case letters, digits and _")
    parser.add_argument("--title", help="its title in tables and the report (default: the name)")
    parser.add_argument("--root", type=Path, default=HERE.parents[1], help="the workflow checkout")
    args = parser.parse_args(argv)
    name, root = args.name, args.root.resolve()
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise SystemExit(f"{name!r}: a study's name is lower case letters, digits and _ (a Python package)")
    title = args.title or name.replace("_", " ").capitalize()
    targets = {src: root / dest.format(name=name) for src, dest in TARGETS.items()}
    taken = [str(p.relative_to(root)) for p in targets.values() if p.exists()]
    if taken:
        raise SystemExit(f"already there: {taken}")
    for src, dest in targets.items():
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(fill((FILES / src).read_text(encoding="utf-8"), name, title), encoding="utf-8")
    # the test config reads the shared fixtures as fixtures/ (a link, as every .test/<name>/ has)
    (root / ".test" / name / "fixtures").symlink_to(Path("..") / ".." / "tests" / "fixtures")
    add_schema_section(root, fill((FILES / "schema.yaml.tmpl").read_text(encoding="utf-8"), name, title))
    register(root, name)
    add_layout_row(root, name)
    add_config_entry(root, name, title)
    readme = root / README
    readme.write_text(
        readme.read_text(encoding="utf-8").rstrip("\n")
        + f"\n\n## `{name}` (study: {title})\n\n<!-- keys: {name} -->\n<!-- /keys -->\n",
        encoding="utf-8",
    )
    subprocess.run([sys.executable, "-m", "judgelab.project.schema_docs", "--root", str(root)], check=True)
    print(
        f"study {name!r}: wrote {len(targets)} files, the schema section, the README table, STUDIES, "
        "its row in docs/layout.md, its entry in config/config.yaml:"
    )
    for dest in targets.values():
        print(f"  {dest.relative_to(root)}")
    print(
        f"next: tests for its science; `{name}: {{enabled: true}}` in config/config.yaml if the default run"
    )
    print("      should run it (measure its share of the budget: workflow/benchmarks/default_run.py)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
