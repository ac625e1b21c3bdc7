"""Every study has the shape the study template teaches: its result paths under
``results/<study>/``, its rules prefixed by its name, and the docs' counts and lists of the places
a study touches and of its rule files true to what the template script writes and the rules
folder holds."""

from __future__ import annotations

import ast
import re
from importlib import import_module
from pathlib import Path

from judgelab.studies import STUDIES

ROOT = Path(__file__).resolve().parents[1]
#: the rule prefix of each study: its name, but the perturbation study's rules are singular
RULE_PREFIX = {s: f"{s}_" for s in STUDIES} | {"perturbations": "perturbation_"}
WORDS = {8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen"}


def rules_of(study: str) -> dict[str, list[str]]:
    """Rule file stem -> the rules (and checkpoints) it declares."""
    return {
        f.stem: re.findall(r"^(?:rule|checkpoint) (\w+):", f.read_text(encoding="utf-8"), re.M)
        for f in sorted((ROOT / "workflow" / "rules" / study).glob("*.smk"))
    }


def test_every_result_path_of_a_study_is_under_its_folder():
    for study in STUDIES:
        paths = import_module(f"judgelab.studies.{study}.plan").Plan.paths
        assert paths, study
        outside = {k: v for k, v in paths.items() if not v.startswith(f"{{results}}/{study}")}
        assert not outside, f"{study}: result paths outside results/{study}/: {outside}"


def test_every_rule_of_a_study_is_prefixed_by_its_name():
    for study in STUDIES:
        names = [r for rules in rules_of(study).values() for r in rules]
        assert study in names  # the study's target
        bad = [r for r in names if r != study and not r.startswith(RULE_PREFIX[study])]
        assert not bad, f"{study}: rules without the prefix {RULE_PREFIX[study]!r}: {bad}"


def test_every_log_of_a_study_is_under_its_log_folder():
    for study in STUDIES:
        for stem, text in (
            (f.stem, f.read_text(encoding="utf-8"))
            for f in sorted((ROOT / "workflow" / "rules" / study).glob("*.smk"))
        ):
            logs = re.findall(r'PROJECT\.log\(\s*f?"([^"]+)"', text)
            bad = [name for name in logs if not name.startswith(f"{study}")]
            assert not bad, f"workflow/rules/{study}/{stem}.smk: logs outside results/logs/{study}/: {bad}"


def test_the_docs_count_the_places_the_template_script_writes():
    script = ROOT / "docs" / "study-template" / "new_study.py"
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    places = [int(n) for n in re.findall(r"^(\d+)\. ", doc, re.M)]
    assert places == list(range(1, len(places) + 1)) and len(places) == 11, places
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    heading = re.search(
        r"^### The places a study touches - (\w+), all written by the script$", contributing, re.M
    )
    assert heading and heading.group(1) == WORDS[len(places)], heading
    section = contributing[heading.end() : contributing.index("\n### ", heading.end())]
    assert [int(n) for n in re.findall(r"^(\d+)\. \*\*", section, re.M)] == places
    layout = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    assert [int(n) for n in re.findall(r"^\| (\d+) \| ", layout, re.M)] == places
    assert f"These {WORDS[len(places)]} are what `docs/study-template/new_study.py` writes" in layout


def test_the_layout_lists_every_rule_file_of_every_study():
    layout = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    for study in STUDIES:
        row = re.search(rf"^\| {study} \| (.+) \(\+ common\) \|$", layout, re.M)
        assert row, study
        listed = sorted(s.strip() for s in row.group(1).split(","))
        stages = sorted(set(rules_of(study)) - {study, "common"})
        assert listed == stages, (
            f"docs/layout.md lists {listed} for {study}; workflow/rules/{study}/ holds {stages}"
        )
