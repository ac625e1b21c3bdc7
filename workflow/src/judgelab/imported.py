"""Imported judges: labels (and optional confidences) produced elsewhere, in TREC qrels format.

A file has one line per judged pair, ``qid Q0 docid label [confidence]``, whitespace separated:
``label`` an integer 0-3, ``confidence`` an optional number 0-100 (the second field is ignored;
LLMJudge writes ``0`` there). Blank lines and lines starting with ``#`` are skipped.

An imported judge is configured under ``imported_judges.<name>``; ``<name>`` becomes the
``model`` wildcard of the result paths, and :func:`import_judgments` writes the same judgment
and confidence tables as a live judge (``parsed`` true for every pair the file labels), so the
metrics, significance, figures and classifier stages treat it exactly like a live judge. A pair
of the dataset that the file does not label gets a missing label (``parsed`` false): it is
counted in ``coverage`` like an unparsable answer, never turned into a grade.

Errors name the file and line: unknown query, unknown passage for a known query, a label outside
0-3, a confidence outside 0-100, a wrong number of fields, a pair labelled twice differently.
"""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from .datasets import parse_grade
from .errors import InputError
from .tables import CONFIDENCE_COLUMNS, JUDGMENT_COLUMNS
from .textfiles import text_lines

DEFAULT_TEMPLATE = "imported"
DEFAULT_PERSONAS = ["default"]
_NAME = re.compile(r"^[^/\s]+$")


@dataclass(frozen=True)
class ImportedJudge:
    name: str
    path: str  # pattern with optional {dataset}, {template}, {persona}
    datasets: tuple[str, ...]
    templates: tuple[str, ...]
    personas: tuple[str, ...]

    def file(self, dataset: str, template: str, persona: str) -> str:
        return self.path.format(dataset=dataset, template=template, persona=persona)

    def combos(self) -> list[tuple[str, str, str]]:
        return [(d, t, p) for d in self.datasets for t in self.templates for p in self.personas]


def resolve_imported(cfg: dict) -> dict[str, ImportedJudge]:
    """The ``imported_judges`` entries of a config, checked against its datasets and models."""
    entries = cfg.get("imported_judges") or {}
    datasets, models = set(cfg.get("datasets") or {}), set(cfg.get("models") or {})
    out = {}
    for name, e in entries.items():
        key = f"imported_judges.{name}"
        if name in models:
            raise InputError("an imported judge cannot share its name with a model of `models`", key=key)
        if not _NAME.match(str(name)):
            raise InputError("the name becomes a path component: no '/' or white space", key=key)
        path = e.get("path")
        if not isinstance(path, str) or not path:
            raise InputError("needs a `path` (a file, or a pattern with {dataset}, {template}, {persona})",
                             key=f"{key}.path")
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(path) if f is not None}
        except ValueError as exc:
            raise InputError(f"bad pattern {path!r}: {exc}", key=f"{key}.path") from None
        unknown = fields - {"dataset", "template", "persona"}
        if unknown:
            raise InputError(f"unknown placeholders {sorted(unknown)} (use {{dataset}}, {{template}}, "
                             "{persona})", key=f"{key}.path")
        ds = [str(d) for d in e.get("datasets") or []]
        if not ds:
            raise InputError("needs at least one dataset", key=f"{key}.datasets")
        for i, d in enumerate(ds):
            if d not in datasets:
                raise InputError(f"dataset {d!r} is not a key of `datasets` (known: {sorted(datasets)})",
                                 key=f"{key}.datasets[{i}]")
        templates = [str(t) for t in e.get("templates") or [DEFAULT_TEMPLATE]]
        personas = [str(p) for p in e.get("personas") or DEFAULT_PERSONAS]
        for what, values in (("dataset", ds), ("template", templates), ("persona", personas)):
            bad = [v for v in values if not _NAME.match(v)]
            if bad:
                raise InputError(f"{what} names {bad} cannot be path components", key=f"{key}.{what}s")
            if len(set(values)) != len(values):
                raise InputError(f"duplicate {what} names", key=f"{key}.{what}s")
            if len(values) > 1 and what not in fields:
                raise InputError(f"{len(values)} {what}s but no {{{what}}} placeholder in the path",
                                 key=f"{key}.path")
        out[str(name)] = ImportedJudge(str(name), path, tuple(ds), tuple(templates), tuple(personas))
    return out


def judge_groups(datasets: Sequence[str], models: Sequence[str], templates: Sequence[str],
                 personas: Sequence[str], imported: Mapping[str, ImportedJudge]
                 ) -> dict[tuple[str, str, str], list[str]]:
    """Every dataset x model x template of a run (live models, then imported judges) with its
    persona conditions in order: the unit of the significance, figure and classifier stages."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for d in datasets:
        for m in models:
            for t in templates:
                groups[(d, m, t)] = list(personas)
    for name, judge in imported.items():
        for d in judge.datasets:
            for t in judge.templates:
                groups[(d, name, t)] = list(judge.personas)
    return groups


def read_judge_file(path: str | Path, pairs: pd.DataFrame) -> pd.DataFrame:
    """Read a qrels-format judge file against the dataset table ``pairs`` (qid, docid).

    Returns qid, docid, label (Int64), confidence (Float64, missing without a 5th column), line."""
    known_q = set(pairs["qid"])
    known = set(zip(pairs["qid"], pairs["docid"]))
    seen: dict[tuple[str, str], tuple[int, int, float | None]] = {}
    rows = []
    for no, line in text_lines(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) not in (4, 5):
            raise InputError(f"expected 'qid Q0 docid label [confidence]', got {len(parts)} fields: "
                             f"{line[:120]!r}", path=str(path), line=no)
        qid, _, docid, label = parts[:4]
        lab = parse_grade(label, path, no, what="label")
        conf = None
        if len(parts) == 5:
            try:
                conf = float(parts[4])
            except ValueError:
                raise InputError(f"confidence {parts[4]!r} is not a number", path=str(path),
                                 line=no) from None
            if not (math.isfinite(conf) and 0 <= conf <= 100):
                raise InputError(f"confidence {parts[4]} is outside 0-100", path=str(path), line=no)
        if qid not in known_q:
            raise InputError(f"unknown query id {qid!r}: not in the dataset", path=str(path), line=no)
        if (qid, docid) not in known:
            raise InputError(f"unknown passage id {docid!r} for query {qid}: not a judged pair of the "
                             "dataset", path=str(path), line=no)
        if (qid, docid) in seen:
            first_no, first_lab, first_conf = seen[(qid, docid)]
            if (first_lab, first_conf) != (lab, conf):
                raise InputError(f"pair (qid {qid}, docid {docid}) is labelled twice differently "
                                 f"(line {first_no} and here)", path=str(path), line=no)
            continue
        seen[(qid, docid)] = (no, lab, conf)
        rows.append((qid, docid, lab, conf, no))
    df = pd.DataFrame(rows, columns=["qid", "docid", "label", "confidence", "line"])
    df["label"] = df["label"].astype("Int64")
    df["confidence"] = df["confidence"].astype("Float64")
    return df


def import_judgments(pairs: pd.DataFrame, path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The judgment and confidence tables (judgelab's columns) of an imported judge file."""
    read = read_judge_file(path, pairs)
    merged = pairs[["dataset", "qid", "docid"]].merge(read, on=["qid", "docid"], how="left",
                                                      validate="one_to_one")
    has = merged["label"].notna()
    j = pd.DataFrame({"dataset": merged["dataset"], "qid": merged["qid"], "docid": merged["docid"],
                      "label": merged["label"], "parsed": has,
                      "answer": merged["label"].astype("string")}, columns=JUDGMENT_COLUMNS)
    for col in ("p0", "p1", "p2", "p3", "label_mass", "expected_grade", "latency_s"):
        j[col] = pd.array([pd.NA] * len(j), dtype="Float64")
    j["label"] = j["label"].astype("Int64")
    c = pd.DataFrame({"dataset": merged["dataset"], "qid": merged["qid"], "docid": merged["docid"],
                      "label": merged["label"], "asked": has, "confidence": merged["confidence"],
                      "parsed": merged["confidence"].notna(),
                      "answer": merged["confidence"].astype("string")}, columns=CONFIDENCE_COLUMNS)
    c["label"] = c["label"].astype("Int64")
    c["confidence"] = c["confidence"].astype("Float64")
    return j, c
