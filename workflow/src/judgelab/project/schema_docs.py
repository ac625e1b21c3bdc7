"""The key tables of ``config/README.md``, generated from the schema (the one source of each key's
documentation: its ``description`` and ``default`` in ``workflow/schemas/config.schema.yaml``).

The README's prose stays as written; each key table sits between two markers naming the schema
section it documents::

    <!-- keys: datasets.<name> -->
    | key | default | meaning |
    ...
    <!-- /keys -->

``python -m judgelab.project.schema_docs`` rewrites the tables in place; ``--check`` exits with status 1
(and says which tables) when the committed file is not current, so CI fails on a key documented in
the schema but not in the README, or the other way round. A section's table lists its keys; a key
that is an object with its own table is left to that table, any other object's keys are listed
under it (``generation.enabled``); the top-level table lists only the top-level keys. Every key
of the schema must be in some table.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import yaml

from judgelab.project.config import PACKAGE_ROOT, SCHEMA

README = Path("config") / "README.md"
BLOCK = re.compile(
    r"(<!-- keys: (?P<section>[^ ]+)(?: only=(?P<only>[^ ]+))? -->\n)(?P<body>.*?)(<!-- /keys -->)", re.S
)
#: the name of the root section in a marker
ROOT = "(top-level)"


def _node(schema: dict, section: str) -> dict:
    """The schema of ``section`` (``peras.classifier``, ``datasets.<name>``)."""
    node = schema
    if section == ROOT:
        return node
    for part in section.split("."):
        if part == "<name>":
            node = node["additionalProperties"]
        else:
            node = node["properties"][part]
    return node


def _children(node: dict) -> dict[str, dict]:
    out = dict(node.get("properties", {}))
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and ("properties" in extra or "additionalProperties" in extra):
        out["<name>"] = extra
    return out


def _is_object(node: dict) -> bool:
    return bool(_children(node))


def _default(node: dict) -> str:
    if "default" not in node:
        return ""
    text = json.dumps(node["default"], ensure_ascii=False)
    return "(see the schema)" if len(text) > 40 else f"`{text}`"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def rows(
    schema: dict, section: str, tabled: set[str], only: set[str] | None = None
) -> list[tuple[str, str, str, str]]:
    """(key relative to the section, full key, default, description) of the section's table;
    ``only``: the section's keys to list (their first component), default all."""
    out: list[tuple[str, str, str, str]] = []

    def walk(node: dict, prefix: str, path: str) -> None:
        for key, sub in _children(node).items():
            full = f"{path}.{key}" if path else key
            rel = f"{prefix}{key}"
            if full in tabled or (only is not None and not prefix and key not in only):
                continue
            if _is_object(sub):
                if sub.get("description") and key != "<name>":
                    out.append((rel, full, "", sub["description"]))
                if section != ROOT:  # the top-level table names the sections, each has its own
                    walk(sub, rel + ".", full)
            else:
                out.append((rel, full, _default(sub), sub.get("description", "")))

    walk(_node(schema, section), "", "" if section == ROOT else section)
    return out


def _only(match: re.Match) -> set[str] | None:
    return set(match.group("only").split(",")) if match.group("only") else None


def table(schema: dict, section: str, tabled: set[str], only: set[str] | None = None) -> str:
    lines = ["| key | default | meaning |", "|---|---|---|"]
    for key, _, default, desc in rows(schema, section, tabled, only):
        lines.append(f"| `{key}` | {default} | {_cell(desc)} |")
    return "\n".join(lines) + "\n"


def all_keys(schema: dict) -> list[str]:
    """Every leaf key path of the schema (objects with named children are not leaves)."""
    out: list[str] = []

    def walk(node: dict, path: str) -> None:
        for key, sub in _children(node).items():
            full = f"{path}.{key}" if path else key
            if _is_object(sub):
                walk(sub, full)
            else:
                out.append(full)

    walk(schema, "")
    return out


def render(readme: str, schema: dict) -> str:
    """``readme`` with every marked table regenerated from ``schema``; an error when a key of the
    schema is in no table."""
    blocks = list(BLOCK.finditer(readme))
    tabled = {m.group("section") for m in blocks if m.group("section") != ROOT}
    listed = {full for m in blocks for _, full, _, _ in rows(schema, m.group("section"), tabled, _only(m))}
    missing = [k for k in all_keys(schema) if k not in listed]
    if missing:
        raise ValueError(
            f"keys of the schema in no table of {README}: {missing} (add a <!-- keys: ... --> block)"
        )

    def fill(m: re.Match) -> str:
        return m.group(1) + table(schema, m.group("section"), tabled, _only(m)) + m.group(5)

    return BLOCK.sub(fill, readme)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="only check that the README is current")
    parser.add_argument("--root", type=Path, default=PACKAGE_ROOT, help="the workflow folder")
    args = parser.parse_args(argv)
    schema = yaml.safe_load((args.root / SCHEMA).read_text(encoding="utf-8"))
    path = args.root / README
    text = path.read_text(encoding="utf-8")
    new = render(text, schema)
    if new == text:
        return 0
    if args.check:
        old = [m.group("body") for m in BLOCK.finditer(text)]
        stale = [m.group(1).strip() for m, body in zip(BLOCK.finditer(new), old) if m.group("body") != body]
        print(
            f"{path}: key tables not generated from {SCHEMA}: {stale}; run python -m judgelab.project.schema_docs",
            file=sys.stderr,
        )
        return 1
    path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
