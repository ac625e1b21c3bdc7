"""Imported judges: labels (and optional confidences) produced elsewhere, in TREC qrels format.

A file has one line per judged pair, ``qid Q0 docid label [confidence]``, whitespace separated:
``label`` an integer on the judge's scale, ``confidence`` an optional number on its confidence
scale (the second field is ignored; LLMJudge writes ``0`` there). Blank lines and lines starting
with ``#`` are skipped.

Scales are declared, never guessed (``imported_judges.<name>``):

* ``scale: graded`` (labels 0-3, the default) or ``scale: binary`` (0 non-relevant, 1 relevant).
  A binary judge's 0/1 are not grades: it is left out of the graded (PERAS) metrics and stages
  (:func:`judge_groups`, :func:`import_judgments` refuses it) and diagnosed by the overrating
  study, which compares it with the binarised human grades.
* ``confidence_scale: percent`` (0-100, the default) or ``probability`` (0-1); the PERAS
  confidence tables hold percent, so probabilities are multiplied by 100 there, explicitly.
* Without a declaration the defaults apply, but a file they would misread fails instead of being
  reinterpreted silently: every label 0 or 1 (graded or binary?), or every confidence within 0-1
  with fractions (probabilities read as percent?). Declaring the scale removes the error.
* ``scale: scores`` with a ``score_range`` (low, high): real numbers, not labels - a published
  judge whose catalog entry says ``scores <low>-<high>`` (EXAM's self-ratings, AutoNuggetizer's
  nugget scores; :mod:`judgelab.data.published`). Its file's fourth field is read as a float
  within [low, high] (the ``score`` column instead of ``label``); everything else is read as for
  labels. Only the ranking study takes such a judge (its scores as gains); the others take labels
  (:attr:`ImportedJudge.graded`, :func:`study_imports`).

An imported judge is configured under ``imported_judges.<name>``; ``<name>`` becomes the
``model`` wildcard of the result paths, and :func:`import_judgments` writes the same judgment
and confidence tables as a live judge (``parsed`` true for every pair the file labels), so the
metrics, significance, figures and classifier stages treat it exactly like a live judge. A pair
of the dataset that the file does not label gets a missing label (``parsed`` false): it is
counted in ``coverage`` like an unparsable answer, never turned into a grade.

A file may label more than the dataset's selection (``queries``, ``max_queries``, ``per_grade``:
the default config samples 2 pairs per grade): a pair of the dataset's source files outside the
selection is skipped and counted (``outside_selection`` in the import's table, and a log line).

Errors name the file and line: a query or passage unknown to the dataset's source files (its
qrels and topics, not only the selection), a file whose pairs are all outside the selection, a label
outside 0-3, a confidence outside 0-100, a wrong number of fields, a pair labelled twice
differently.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from judgelab.data.labels import SCALE_VALUES
from judgelab.data.readers import parse_grade, read_qrels, read_topics, unique_pairs
from judgelab.data.tables import label_tables
from judgelab.data.textfiles import text_lines
from judgelab.errors import InputError
from judgelab.params import Settings

DEFAULT_TEMPLATE = "imported"
DEFAULT_PERSONAS = ["default"]
_NAME = re.compile(r"^[^/\s]+$")
#: confidence scales: the upper bound of each (the lower is 0)
CONFIDENCE_SCALES = {"percent": 100.0, "probability": 1.0}


class JudgeLine(NamedTuple):
    """One label line of an imported judge's file (``label``: the label, an integer, or the score
    of a judge that gives scores)."""

    qid: str
    docid: str
    label: float
    confidence: float | None
    line: int


@dataclass(frozen=True)
class ImportReading(Settings):
    """How an imported judge's file is read: the label and confidence scales it declares (None:
    not declared - 0/1 labels and 0-1 confidences are never guessed; see :func:`read_judge`) and
    the encoding of the dataset's raw files (its source pairs)."""

    scale: str | None = None
    confidence_scale: str | None = None
    encoding: str | None = None
    #: a published judge's file (:mod:`judgelab.data.published`): a pair unknown to the dataset
    #: and a label outside the scale are dropped and counted, not errors (such files carry them)
    drop: bool = False
    #: (low, high) of a judge that gives scores (``scale: scores``); () for labels
    score_range: tuple[float, ...] = ()

    def to_json(self) -> dict:
        """The fields; ``score_range`` only for a judge that gives scores, so a label judge's
        param is the one it had before scores were read (its import jobs do not rerun)."""
        out = super().to_json()
        if not self.score_range:
            del out["score_range"]
        return out


@dataclass(frozen=True)
class ImportedJudge:
    name: str
    path: str  # pattern with optional {dataset}, {template}, {persona}
    datasets: tuple[str, ...]
    templates: tuple[str, ...]
    personas: tuple[str, ...]
    #: "graded" or "binary"; None: not declared (graded, files with only 0/1 labels refused);
    #: "scores" for a published judge that gives real numbers within ``score_range``
    scale: str | None = None
    #: "percent" or "probability"; None: not declared (percent, 0-1 fractions refused)
    confidence_scale: str | None = None
    #: a judge of the published catalog (its file downloaded by the workflow; read with ``drop``)
    published: bool = False
    #: (low, high) of a judge that gives scores (``scale: scores``); () for labels
    score_range: tuple[float, ...] = ()

    @property
    def graded(self) -> bool:
        """Whether its labels are grades 0-3 (not a binary judge's 0/1, nor scores)."""
        return self.scale in (None, "graded")

    @property
    def gives_scores(self) -> bool:
        return self.scale == "scores"

    @property
    def values(self) -> str:
        """What its values are, as the catalog writes it: ``scores 0-5``, ``labels 0-3``."""
        if self.gives_scores:
            return "scores " + "-".join(f"{x:g}" for x in self.score_range)
        return "labels 0-1" if self.scale == "binary" else "labels 0-3"

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
            raise InputError(
                "needs a `path` (a file, or a pattern with {dataset}, {template}, {persona})",
                key=f"{key}.path",
            )
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(path) if f is not None}
        except ValueError as exc:
            raise InputError(f"bad pattern {path!r}: {exc}", key=f"{key}.path") from None
        unknown = fields - {"dataset", "template", "persona"}
        if unknown:
            raise InputError(
                f"unknown placeholders {sorted(unknown)} (use {{dataset}}, {{template}}, {{persona}})",
                key=f"{key}.path",
            )
        ds = [str(d) for d in e.get("datasets") or []]
        if not ds:
            raise InputError("needs at least one dataset", key=f"{key}.datasets")
        for i, d in enumerate(ds):
            if d not in datasets:
                raise InputError(
                    f"dataset {d!r} is not a key of `datasets` (known: {sorted(datasets)})",
                    key=f"{key}.datasets[{i}]",
                )
        templates = [str(t) for t in e.get("templates") or [DEFAULT_TEMPLATE]]
        personas = [str(p) for p in e.get("personas") or DEFAULT_PERSONAS]
        for what, values in (("dataset", ds), ("template", templates), ("persona", personas)):
            bad = [v for v in values if not _NAME.match(v)]
            if bad:
                raise InputError(f"{what} names {bad} cannot be path components", key=f"{key}.{what}s")
            if len(set(values)) != len(values):
                raise InputError(f"duplicate {what} names", key=f"{key}.{what}s")
            if len(values) > 1 and what not in fields:
                raise InputError(
                    f"{len(values)} {what}s but no {{{what}}} placeholder in the path", key=f"{key}.path"
                )
        scale, conf_scale = e.get("scale"), e.get("confidence_scale")
        if scale is not None and scale not in SCALE_VALUES:
            raise InputError(f"expected one of {sorted(SCALE_VALUES)}, got {scale!r}", key=f"{key}.scale")
        if conf_scale is not None and conf_scale not in CONFIDENCE_SCALES:
            raise InputError(
                f"expected one of {sorted(CONFIDENCE_SCALES)}, got {conf_scale!r}",
                key=f"{key}.confidence_scale",
            )
        out[str(name)] = ImportedJudge(
            str(name), path, tuple(ds), tuple(templates), tuple(personas), scale, conf_scale
        )
    return out


def judge_groups(
    datasets: Sequence[str],
    models: Sequence[str],
    templates: Sequence[str],
    personas: Sequence[str],
    imported: Mapping[str, ImportedJudge],
) -> dict[tuple[str, str, str], list[str]]:
    """Every dataset x model x template of a run (live models, then imported judges) with its
    persona conditions in order: the unit of the significance, figure and classifier stages.
    Binary imported judges and judges that give scores are not among them (their values are not
    grades: :attr:`ImportedJudge.graded`)."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for d in datasets:
        for m in models:
            for t in templates:
                groups[(d, m, t)] = list(personas)
    for name, judge in imported.items():
        if not judge.graded:
            continue
        for d in judge.datasets:
            for t in judge.templates:
                groups[(d, name, t)] = list(judge.personas)
    return groups


@dataclass(frozen=True)
class SourcePairs:
    """What a dataset's source files know, before its selection (``queries``, ``max_queries``,
    ``per_grade``): the judged pairs of its qrels and the queries of its qrels and topics. An
    imported judge file may label any of these pairs; pairs outside the selection are skipped
    and counted, anything else is an error."""

    pairs: frozenset[tuple[str, str]]
    queries: frozenset[str]
    #: the files, for messages ("qrels X, topics Y")
    files: str = ""

    @classmethod
    def read(cls, qrels: str | Path, topics: str | Path, encoding: str | None = None) -> SourcePairs:
        judged = read_qrels(qrels, encoding)
        pairs = frozenset((q.qid, q.docid) for q in judged)
        queries = frozenset(q.qid for q in judged) | frozenset(read_topics(topics, encoding))
        return cls(pairs, queries, f"qrels {qrels}, topics {topics}")

    @classmethod
    def of_table(cls, pairs: pd.DataFrame) -> SourcePairs:
        """A table that is all there is (no source files given): its pairs and queries."""
        return cls(frozenset(zip(pairs["qid"], pairs["docid"])), frozenset(pairs["qid"]), "")


@dataclass(frozen=True)
class ImportCounts:
    """How an imported judge file meets a dataset's selection."""

    labelled: int  # distinct pairs the file labels (all known to the dataset's source)
    in_selection: int  # of them, pairs of the selection: the labels used
    outside_selection: int  # of them, pairs of the source outside the selection: skipped
    selection: int  # pairs of the selection
    unlabelled: int  # pairs of the selection the file does not label: missing, counted in coverage
    #: a published judge's lines dropped: pairs unknown to the dataset's source (another dataset's,
    #: or not in the human qrels) and labels outside the declared scale (0 for other judges: errors)
    unknown: int = 0
    out_of_scale: int = 0


#: The import's table (one row per import job): how the file met the selection.
IMPORT_SUMMARY_COLUMNS = [
    "file",
    "labelled",
    "in_selection",
    "outside_selection",
    "selection",
    "unlabelled",
    "unknown",
    "out_of_scale",
]


@dataclass(frozen=True)
class JudgeFile:
    """An imported judge file read against a dataset's selection: ``labels`` (qid, docid, label,
    confidence, line: the pairs of the selection it labels, in file order) and the counts."""

    path: str
    labels: pd.DataFrame
    counts: ImportCounts
    scale: str | None = None
    confidence_scale: str | None = None

    def summary(self, **ids: str) -> pd.DataFrame:
        """The import's table: ``ids`` (e.g. dataset, judge, template, persona), then
        :data:`IMPORT_SUMMARY_COLUMNS`."""
        row = {**ids, "file": self.path, **vars(self.counts)}
        return pd.DataFrame([row], columns=[*ids, *IMPORT_SUMMARY_COLUMNS])

    def log_line(self) -> str:
        c = self.counts
        outside = "scores outside the range" if self.scale == "scores" else "labels outside the scale"
        dropped = (
            f"; dropped: {c.unknown} lines of pairs unknown to the dataset (unknown), "
            f"{c.out_of_scale} {outside} (out_of_scale)"
            if c.unknown or c.out_of_scale
            else ""
        )
        return (
            f"{self.path}: {c.labelled} pairs labelled, {c.in_selection} of them in the dataset's "
            f"selection, {c.outside_selection} outside it (skipped, counted in outside_selection); "
            f"{c.unlabelled} of the {c.selection} selected pairs not labelled (missing){dropped}"
        )


def read_judge(
    path: str | Path,
    pairs: pd.DataFrame,
    *,
    source: SourcePairs | None = None,
    scale: str | None = None,
    confidence_scale: str | None = None,
    drop: bool = False,
    score_range: Sequence[float] = (),
) -> JudgeFile:
    """Read a qrels-format judge file against the dataset's selection ``pairs`` (qid, docid).

    ``source``: the pairs and queries of the dataset's source files (:meth:`SourcePairs.read`;
    None: the selection is all there is). A pair of the source outside the selection is skipped
    and counted (``outside_selection``); a query or pair unknown to the source, or a file that
    labels pairs but none of the selection, is an error naming the file and line (a file with no
    label line at all is a judge that labelled nothing: every pair missing). ``scale`` /
    ``confidence_scale``: as declared for the judge (None: not declared; see the module
    docstring). ``drop`` (a published judge's file): the lines :func:`judge_lines` drops are
    counted (``unknown``, ``out_of_scale``). The labels are Int64 on ``scale``, the confidences Float64 on
    ``confidence_scale`` as in the file (missing without a 5th column); with ``scale: scores`` the
    table has ``score`` (Float64, within ``score_range``) instead of ``label``."""
    src = source or SourcePairs.of_table(pairs)
    selected = set(zip(pairs["qid"], pairs["docid"]))
    every = judge_lines(
        path, src, scale=scale, confidence_scale=confidence_scale, drop=drop, score_range=score_range
    )
    inside = pd.Series([(q, d) in selected for q, d in zip(every["qid"], every["docid"])], dtype=bool)
    labels = every[inside.to_numpy()].reset_index(drop=True)
    dataset = str(pairs["dataset"].iloc[0]) if "dataset" in pairs and len(pairs) else None
    key = f"datasets.{dataset}" if dataset else "the dataset's selection"
    if labels.empty and not every.empty:
        raise InputError(
            f"none of the {len(every)} pairs this file labels is among the {len(selected)} pairs "
            f"of the dataset's selection ({key}: queries, max_queries, per_grade); this line "
            "labels the first of them",
            path=str(path),
            line=int(every["line"].iloc[0]),
        )
    counts = ImportCounts(
        labelled=len(every),
        in_selection=len(labels),
        outside_selection=len(every) - len(labels),
        selection=len(selected),
        unlabelled=len(selected) - len(labels),
        unknown=every.attrs.get("unknown", 0),
        out_of_scale=every.attrs.get("out_of_scale", 0),
    )
    return JudgeFile(str(path), labels, counts, scale, confidence_scale)


def judge_lines(
    path: str | Path,
    source: SourcePairs | None,
    *,
    scale: str | None = None,
    confidence_scale: str | None = None,
    drop: bool = False,
    score_range: Sequence[float] = (),
) -> pd.DataFrame:
    """Every label line of an imported judge's file, checked: (qid, docid, label, confidence, line),
    one row per pair in file order. Errors name the file and line: a wrong number of fields, a
    label or confidence outside its (declared) scale, a query or pair unknown to ``source`` (the
    dataset's source files; None: not known yet, e.g. before a download - not checked), a pair
    labelled twice differently, undeclared scales the file would be misread with (see the module
    docstring). With ``drop`` (a published judge's file) a label outside the scale and a pair
    unknown to ``source`` are dropped instead, counted in the result's ``attrs`` (``out_of_scale``,
    ``unknown``); an empty file is still an error. The project runs it when the workflow is planned
    (:meth:`judgelab.wiring.facade.Project.imported_file`); :func:`read_judge` in the job.

    ``scale: scores`` (a judge that gives scores, ``score_range`` its declared (low, high)): the
    fourth field is a real number (``score``, Float64, instead of ``label``) within [low, high]
    (outside: an error, or with ``drop`` dropped and counted in ``out_of_scale``); a field that
    is not a finite number is an error; a pair listed twice with different scores is an error
    naming both lines; the rest as for labels."""
    scores = scale == "scores"
    if scores and len(score_range) != 2:
        raise ValueError(f"scale scores needs its (low, high), got {tuple(score_range)}")
    conf_max = CONFIDENCE_SCALES[confidence_scale or "percent"]
    where = f" ({source.files})" if source is not None and source.files else ""
    rows: list[JudgeLine] = []
    dropped = {"unknown": 0, "out_of_scale": 0}
    for no, line in text_lines(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) not in (4, 5):
            what = "score" if scores else "label"
            raise InputError(
                f"expected 'qid Q0 docid {what} [confidence]', got {len(parts)} fields: {line[:120]!r}",
                path=str(path),
                line=no,
            )
        qid, _, docid, label = parts[:4]
        if scores:
            value = _score(label, score_range, path, no, drop)
        else:
            value = _label(label, scale, path, no, drop)
        if value is None:
            dropped["out_of_scale"] += 1
            continue
        conf = None
        if len(parts) == 5:
            try:
                conf = float(parts[4])
            except ValueError:
                raise InputError(
                    f"confidence {parts[4]!r} is not a number", path=str(path), line=no
                ) from None
            if not (math.isfinite(conf) and 0 <= conf <= conf_max):
                why = (
                    " (the judge declares confidence_scale: probability)"
                    if confidence_scale == "probability"
                    else ""
                )
                raise InputError(
                    f"confidence {parts[4]} is outside 0-{conf_max:g}{why}", path=str(path), line=no
                )
        if drop and source is not None and (qid, docid) not in source.pairs:
            dropped["unknown"] += 1
            continue
        if source is not None and qid not in source.queries:
            raise InputError(f"unknown query id {qid!r}: not in the dataset{where}", path=str(path), line=no)
        if source is not None and (qid, docid) not in source.pairs:
            raise InputError(
                f"unknown passage id {docid!r} for query {qid}: not a judged pair of the dataset{where}",
                path=str(path),
                line=no,
            )
        rows.append(JudgeLine(qid, docid, value, conf, no))
    shown = _shown_score if scores else _shown
    what = "scored twice differently" if scores else "labelled twice differently"
    rows, _ = unique_pairs(rows, path, value=lambda r: (r.label, r.confidence), what=what, shown=shown)
    column = "score" if scores else "label"
    every = pd.DataFrame([tuple(r) for r in rows], columns=["qid", "docid", column, "confidence", "line"])
    every[column] = every[column].astype("Float64" if scores else "Int64")
    every["confidence"] = every["confidence"].astype("Float64")
    if drop and every.empty:
        outside = "scores outside the range" if scores else "labels outside the scale"
        raise InputError(
            f"no {'score' if scores else 'label'} of this file is kept ({dropped['unknown']} lines "
            f"of pairs unknown to the dataset{where}, {dropped['out_of_scale']} {outside}): a file "
            "of another dataset, or an empty one",
            path=str(path),
        )
    every.attrs.update(dropped)
    _refuse_ambiguous(every, path, scale, confidence_scale)
    return every


def _label(text: str, scale: str | None, path: str | Path, no: int, drop: bool) -> int | None:
    """A label field on ``scale`` (binary 0/1, graded 0-3); None: outside the scale, dropped
    (``drop``); an error at ``path:no`` otherwise, and for a field that is not a whole number."""
    try:
        lab = parse_grade(text, path, no, what="label")
    except InputError:
        if not (drop and text.lstrip("-").isdigit()):
            raise
        return None  # a whole number outside 0-3
    if lab in SCALE_VALUES[scale or "graded"]:
        return lab
    if drop:
        return None
    raise InputError(
        f"label {lab} is outside 0-1 (the judge declares scale: binary)", path=str(path), line=no
    )


def _score(text: str, score_range: Sequence[float], path: str | Path, no: int, drop: bool) -> float | None:
    """A score field: a finite real number within ``score_range`` (low, high); None: outside it,
    dropped (``drop``); an error at ``path:no`` otherwise, and for a field that is not a number."""
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"score {text!r} is not a number", path=str(path), line=no) from None
    if math.isnan(value):
        raise InputError(f"score {text!r} is not a number", path=str(path), line=no)
    low, high = float(score_range[0]), float(score_range[1])
    if low <= value <= high:
        return value
    if drop:
        return None
    raise InputError(
        f"score {text} is outside {low:g}-{high:g} (the judge declares scores {low:g}-{high:g})",
        path=str(path),
        line=no,
    )


def _shown_score(r: JudgeLine) -> str:
    return f"score {r.label:g}" + ("" if r.confidence is None else f", confidence {r.confidence:g}")


def _shown(r: JudgeLine) -> str:
    return f"label {r.label}" + ("" if r.confidence is None else f", confidence {r.confidence:g}")


def read_judge_file(
    path: str | Path,
    pairs: pd.DataFrame,
    *,
    source: SourcePairs | None = None,
    scale: str | None = None,
    confidence_scale: str | None = None,
    drop: bool = False,
    score_range: Sequence[float] = (),
) -> pd.DataFrame:
    """The labels of :func:`read_judge` (qid, docid, label, confidence, line; ``score`` instead of
    ``label`` for ``scale: scores``)."""
    return read_judge(
        path,
        pairs,
        source=source,
        scale=scale,
        confidence_scale=confidence_scale,
        drop=drop,
        score_range=score_range,
    ).labels


def _refuse_ambiguous(
    df: pd.DataFrame, path: str | Path, scale: str | None, confidence_scale: str | None
) -> None:
    """Undeclared scales the file would be misread with fail, naming the key to declare."""
    if scale is None and len(df) and "label" in df and df["label"].isin([0, 1]).all():
        raise InputError(
            "every label is 0 or 1: declare the judge's scale, `scale: binary` "
            "(0 non-relevant / 1 relevant) or `scale: graded` (grades 0-3), in "
            "imported_judges.<name>.scale",
            path=str(path),
        )
    conf = df["confidence"].dropna().astype(float)
    if confidence_scale is None and len(conf) and (conf <= 1).all() and (conf % 1 != 0).any():
        raise InputError(
            "every confidence lies within 0-1, with fractions: declare "
            "`confidence_scale: probability` (0-1) or `confidence_scale: percent` "
            "(0-100) in imported_judges.<name>.confidence_scale",
            path=str(path),
        )


def confidence_as_probability(conf: pd.Series, confidence_scale: str | None) -> pd.Series:
    """Confidences of a judge file on 0-1 (``percent`` values divided by 100)."""
    return conf / CONFIDENCE_SCALES[confidence_scale or "percent"]


def import_judgments(
    pairs: pd.DataFrame,
    path: str | Path | JudgeFile,
    *,
    scale: str | None = None,
    confidence_scale: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The judgment and confidence tables (judgelab's columns: graded labels, confidence 0-100)
    of an imported judge file, or of one already read (:func:`read_judge`: its scales are used).
    A binary judge has no grades for them and is refused."""
    if isinstance(path, JudgeFile):
        scale, confidence_scale = path.scale, path.confidence_scale
    if scale == "binary":
        raise InputError(
            "a binary judge (0/1 labels) is not scored on grades 0-3: it goes to the overrating study only",
            path=str(path.path if isinstance(path, JudgeFile) else path),
        )
    if scale == "scores":
        raise InputError(
            "a judge that gives scores, not labels, is not scored on grades 0-3: it goes to the "
            "ranking study only (its scores as gains)",
            path=str(path.path if isinstance(path, JudgeFile) else path),
        )
    read = (
        path.labels.copy()
        if isinstance(path, JudgeFile)
        else read_judge_file(path, pairs, scale=scale, confidence_scale=confidence_scale)
    )
    if confidence_scale == "probability":
        read["confidence"] = read["confidence"] * 100.0  # the confidence tables hold percent
    merged = pairs[["dataset", "qid", "docid"]].merge(
        read, on=["qid", "docid"], how="left", validate="one_to_one"
    )
    return label_tables(merged, "imported")


def study_imports(
    entries: Sequence[str | Mapping],
    known: Mapping[str, ImportedJudge],
    datasets: Sequence[str],
    *,
    key: str,
    datasets_key: str,
    groups: Mapping[str, Sequence[str]] | None = None,
    scales: Sequence[str] = ("graded", "binary"),
) -> dict[str, tuple[ImportedJudge, str, str]]:
    """The imported judges a study names (``<study>.imported_judges``, at config key ``key``):
    name -> (the judge, the template and persona choosing its file). An entry is a judge's name
    (its first template, and its persona ``default``, else its first) or ``{name, template,
    persona}``. Errors name the entry's key: a name not in ``imported_judges``, one listed twice,
    a template or persona the judge does not have, a judge that labelled none of the study's
    ``datasets`` (``datasets_key`` says where they come from).

    ``groups``: names of published judges and groups (``judgelab.data.published``) -> their
    judges (:attr:`judgelab.wiring.facade.Project.published_groups`); a group's name takes its
    judges of the study's datasets on one of ``scales`` (the scales the study compares: ``graded``,
    ``binary``, ``scores``), each with its file's template and persona; a group left with none is
    an error naming the entry. A judge named alone that gives scores where ``scales`` has no
    ``scores`` is an error naming its entry (the study takes labels)."""
    out: dict[str, tuple[ImportedJudge, str, str]] = {}
    for i, entry in enumerate(entries):
        where = f"{key}[{i}]"
        members = (groups or {}).get(entry) if isinstance(entry, str) and entry not in known else None
        if members is not None:  # a group (a single published judge is in ``known``)
            taken = [
                m
                for m in members
                if (known[m].scale or "graded") in scales and set(known[m].datasets) & set(datasets)
            ]
            if not taken:
                raise InputError(
                    f"no judge of the group {entry!r} ({len(members)} published judges) "
                    f"labelled the datasets of this study ({datasets_key}: {list(datasets)}) on "
                    f"the scales it compares ({', '.join(scales)})",
                    key=where,
                )
            for m in taken:
                if m not in out:
                    j = known[m]
                    out[m] = (j, j.templates[0], j.personas[0])
            continue
        spec = {"name": entry} if isinstance(entry, str) else dict(entry)
        name = spec["name"]
        if name not in known:
            raise InputError(
                f"{name!r} is not a key of `imported_judges` (known: {sorted(known)}), nor a "
                "published judge or group (`judgelab published` lists them)",
                key=where if isinstance(entry, str) else f"{where}.name",
            )
        if name in out:
            raise InputError(f"imported judge {name!r} is listed twice", key=where)
        judge = known[name]
        if judge.gives_scores and "scores" not in scales:
            raise InputError(
                f"imported judge {name!r} gives scores ({judge.values}), not labels: this study "
                f"takes labels ({', '.join(scales)}); the ranking study takes scores as gains "
                "(ranking.imported_judges)",
                key=where,
            )
        template = spec.get("template") or judge.templates[0]
        persona = spec.get("persona") or ("default" if "default" in judge.personas else judge.personas[0])
        for what, value, among in (
            ("template", template, judge.templates),
            ("persona", persona, judge.personas),
        ):
            if value not in among:
                raise InputError(
                    f"{value!r} is not among the {what}s of imported judge {name!r} "
                    f"(imported_judges.{name}.{what}s: {list(among)})",
                    key=f"{where}.{what}",
                )
        if not set(judge.datasets) & set(datasets):
            raise InputError(
                f"imported judge {name!r} labelled {list(judge.datasets)}, none of the datasets of "
                f"this study ({datasets_key}: {list(datasets)})",
                key=where,
            )
        out[name] = (judge, template, persona)
    return out
