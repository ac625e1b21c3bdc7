"""Published judges: relevance labels (or scores) that LLM judges produced in published studies,
catalogued as data so a run can name them instead of finding, downloading and declaring each file.

The catalog is ``resources/published/catalog.tsv`` (one row per file: the judge's name, its
source, the dataset, the judge model, the method, what its values are, the file's path in its
source, its size, SHA-256 and public URL at a commit) and ``resources/published/sources.yaml``
(per source: the paper, the repository and commit, the licence as the source states it), plus
the config's own entries (``published_judges.entries``). :func:`load_catalog` reads them into
:class:`Catalog`; :meth:`Catalog.resolve` turns a name - one judge, or a group: a source or a
method - into the judges of the config's datasets.

What a judge's values are is declared, never guessed (:class:`Values`): ``labels 0-3`` (graded),
``labels 0-1`` (binary), or ``scores <low>-<high>`` (real numbers, e.g. EXAM's self-ratings 0-5).

The shipped rows come from the manifests of the byte copies in ``../shared/data/published-judges``
(:func:`catalog_rows`, checked against the shipped file by a test): the empty files are left out,
and a file byte-identical to another is one judge, not two.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import yaml

from judgelab.data.sources import download_or_copy
from judgelab.errors import InputError

#: the catalog's columns, in order
COLUMNS = (
    "name",
    "source",
    "dataset",
    "judge_model",
    "method",
    "values",
    "file",
    "bytes",
    "sha256",
    "url",
)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_SHA = re.compile(r"^[0-9a-f]{64}$")
_VALUES = re.compile(r"^(labels|scores) (-?[0-9.]+)-([0-9.]+)$")

#: Where a catalog value stands: a config key (``published_judges.entries.x.values``) or a file
#: and line (``(catalog.tsv, 7)``).
Where: TypeAlias = str | tuple[str, int]


def _error(message: str, where: Where) -> InputError:
    """The one error of a bad catalog value, naming the file and line or the config key."""
    if isinstance(where, tuple):
        return InputError(message, path=where[0], line=where[1])
    return InputError(message, key=where)


@dataclass(frozen=True)
class Values:
    """What a judge's values are: ``labels`` (integers ``low``..``high``; 0-1 binary, 0-3 graded)
    or ``scores`` (real numbers within ``low``..``high``). Written ``labels 0-3``, ``scores 0-5``."""

    kind: str
    low: float
    high: float

    @classmethod
    def parse(cls, text: str, key: Where) -> Values:
        """``text`` read; an error names ``key``: a config key, or a ``(file, line)``."""
        m = _VALUES.match(str(text).strip())
        if not m:
            raise _error(
                f"values {text!r}: expected 'labels 0-3', 'labels 0-1' or 'scores <low>-<high>'", key
            )
        kind, low, high = m.group(1), float(m.group(2)), float(m.group(3))
        if low >= high:
            raise _error(f"values {text!r}: the low end must be below the high end", key)
        if kind == "labels" and (low, high) not in ((0.0, 1.0), (0.0, 3.0)):
            raise _error(
                f"values {text!r}: labels are on the binary (0-1) or graded (0-3) scale; other "
                "values are scores ('scores <low>-<high>')",
                key,
            )
        return cls(kind, low, high)

    @property
    def scale(self) -> str:
        """The imported judge's scale (:class:`judgelab.data.imported.ImportedJudge`): ``binary``
        or ``graded`` for labels, ``scores`` for scores (their range: :attr:`score_range`)."""
        if self.kind != "labels":
            return "scores"
        return "binary" if self.high == 1 else "graded"

    @property
    def score_range(self) -> tuple[float, ...]:
        """(low, high) of a judge that gives scores; () for labels."""
        return (self.low, self.high) if self.kind == "scores" else ()

    def __str__(self) -> str:
        def num(x: float) -> str:
            return f"{x:g}"

        return f"{self.kind} {num(self.low)}-{num(self.high)}"


@dataclass(frozen=True)
class PublishedFile:
    """One dataset's file of a published judge: its path in the source, size, digest, public URL."""

    dataset: str
    file: str
    bytes: int
    sha256: str
    url: str


@dataclass(frozen=True)
class Source:
    """Where a group of published judges comes from."""

    name: str
    paper: str
    repository: str
    licence: str


@dataclass(frozen=True)
class PublishedJudge:
    """A judge of the catalog: its files by dataset and what their values are."""

    name: str
    source: Source
    judge_model: str
    method: str
    values: Values
    files: Mapping[str, PublishedFile] = field(default_factory=dict)

    @property
    def datasets(self) -> list[str]:
        return list(self.files)

    @property
    def size(self) -> int:
        return sum(f.bytes for f in self.files.values())


@dataclass
class Catalog:
    """Every published judge a run can name, and the groups: a source's name takes its judges, a
    method's name the judges of that method."""

    judges: dict[str, PublishedJudge]
    sources: dict[str, Source]

    @property
    def groups(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for j in self.judges.values():
            out.setdefault(j.source.name, []).append(j.name)
        for j in self.judges.values():
            if j.method not in self.sources:
                out.setdefault(j.method, []).append(j.name)
        return {g: names for g, names in out.items() if g not in self.judges}

    def file(self, judge: str, dataset: str) -> PublishedFile:
        """The file of ``judge`` for ``dataset``; an error naming what the catalog has instead."""
        if judge not in self.judges:
            raise InputError(f"{judge!r} is not a published judge (`judgelab published` lists them)")
        files = self.judges[judge].files
        if dataset not in files:
            raise InputError(
                f"published judge {judge!r} has no file for dataset {dataset!r} (its datasets: {', '.join(files)})"
            )
        return files[dataset]

    def resolve(self, ref: str, datasets: Sequence[str], key: str) -> list[PublishedJudge]:
        """The judges ``ref`` names that labelled one of ``datasets`` (the config's): a judge's name
        (an error naming ``key`` when it labelled none of them) or a group's (its judges of those
        datasets; an error when none is left)."""
        if ref in self.judges:
            judge = self.judges[ref]
            if not set(judge.datasets) & set(datasets):
                raise InputError(
                    f"published judge {ref!r} labelled {judge.datasets}, none of the config's "
                    f"datasets {list(datasets)} (a dataset is matched by its key in `datasets`)",
                    key=key,
                )
            return [judge]
        groups = self.groups
        if ref in groups:
            chosen = [self.judges[n] for n in groups[ref] if set(self.judges[n].datasets) & set(datasets)]
            if not chosen:
                raise InputError(
                    f"no judge of the group {ref!r} labelled one of the config's datasets {list(datasets)}",
                    key=key,
                )
            return chosen
        raise InputError(
            f"{ref!r} is neither a published judge nor a group of them (`judgelab published` lists "
            f"them; groups: {sorted(groups)})",
            key=key,
        )


def catalog_dir(resources: str | Path) -> Path:
    return Path(resources) / "published"


def read_sources(path: Path) -> dict[str, Source]:
    """The sources of ``sources.yaml``: each needs a paper, a repository and a licence (an error
    names the file and the source's line)."""
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text) or {}
    lines = text.splitlines()
    out = {}
    for name, s in data.items():
        line = next((n for n, t in enumerate(lines, start=1) if t.startswith(f"{name}:")), None)
        for k in ("paper", "repository", "licence"):
            if not isinstance(s, dict) or not isinstance(s.get(k), str) or not s[k].strip():
                raise InputError(f"source {name!r} needs a {k}", path=str(path), line=line)
        out[str(name)] = Source(str(name), s["paper"], s["repository"], s["licence"])
    return out


def _add_file(
    judges: dict[str, dict],
    row: Mapping[str, str],
    where: Callable[[str], Where],
    sources: Mapping[str, Source],
) -> None:
    """Add one row (one dataset's file) to ``judges``; ``where(column)``: where that value stands,
    for the error that names it."""
    name = row["name"]
    if not _NAME.match(name):
        raise _error(f"judge name {name!r}: letters, digits and . _ + - only", where("name"))
    if row["source"] not in sources:
        raise _error(f"unknown source {row['source']!r} (known: {sorted(sources)})", where("source"))
    if not _SHA.match(row["sha256"]):
        raise _error(f"sha256 {row['sha256']!r} is not 64 lowercase hex digits", where("sha256"))
    values = Values.parse(row["values"], where("values"))
    j = judges.setdefault(
        name,
        {
            "source": row["source"],
            "judge_model": row["judge_model"],
            "method": row["method"],
            "values": values,
            "files": {},
        },
    )
    for k in ("source", "judge_model", "method", "values"):
        mine = values if k == "values" else row[k]
        if j[k] != mine:
            raise _error(f"judge {name!r}: {k} {mine!r} differs from its other rows' {j[k]!r}", where(k))
    if row["dataset"] in j["files"]:
        raise _error(f"judge {name!r} has two files for dataset {row['dataset']!r}", where("dataset"))
    try:
        size = int(row["bytes"])
    except ValueError:
        raise _error(f"bytes {row['bytes']!r} is not a whole number", where("bytes")) from None
    j["files"][row["dataset"]] = PublishedFile(row["dataset"], row["file"], size, row["sha256"], row["url"])


def _at(path: str, line: int) -> Callable[[str], Where]:
    """Where every value of a catalog row stands: its file and line."""

    def where(_column: str) -> Where:
        return (path, line)

    return where


def read_catalog_rows(path: Path) -> list[tuple[Callable[[str], Where], dict[str, str]]]:
    """The rows of a catalog file, each with where its values stand (the file and line)."""
    rows = []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t")
        header = next(reader, None)
        if tuple(header or ()) != COLUMNS:
            raise InputError(f"the header must be {'<TAB>'.join(COLUMNS)}", path=str(path), line=1)
        for n, cells in enumerate(reader, start=2):
            if not cells:
                continue
            if len(cells) != len(COLUMNS):
                raise InputError(f"{len(cells)} fields, expected {len(COLUMNS)}", path=str(path), line=n)
            rows.append((_at(str(path), n), dict(zip(COLUMNS, cells))))
    return rows


#: the columns of a config entry's file (``files.<dataset>.<column>``); the others are the entry's
_FILE_KEYS = {"sha256": "sha256", "bytes": "bytes", "url": "url", "file": "url", "dataset": ""}


def _entry_key(key: str, dataset: str) -> Callable[[str], Where]:
    """Where a column of a config entry's row stands: its key under ``published_judges.entries``."""

    def where(column: str) -> Where:
        if column in _FILE_KEYS:
            return ".".join(filter(None, (f"{key}.files.{dataset}", _FILE_KEYS[column])))
        return key if column == "name" else f"{key}.{column}"

    return where


def config_rows(entries: Mapping[str, Mapping]) -> list[tuple[Callable[[str], Where], dict[str, str]]]:
    """The rows of the config's own entries (``published_judges.entries.<name>``: ``source``,
    ``judge_model``, ``method``, ``values`` and ``files: {<dataset>: {url, sha256, bytes}}``), each
    with where its values stand (their config keys)."""
    rows = []
    for name, e in (entries or {}).items():
        key = f"published_judges.entries.{name}"
        for dataset, f in (e.get("files") or {}).items():
            rows.append(
                (
                    _entry_key(key, str(dataset)),
                    {
                        "name": str(name),
                        "source": str(e.get("source", "")),
                        "dataset": str(dataset),
                        "judge_model": str(e.get("judge_model", "")),
                        "method": str(e.get("method", "")),
                        "values": str(e.get("values", "")),
                        "file": str(f.get("file") or str(f.get("url", "")).rsplit("/", 1)[-1]),
                        "bytes": str(f.get("bytes", 0)),
                        "sha256": str(f.get("sha256", "")),
                        "url": str(f.get("url", "")),
                    },
                )
            )
    return rows


def load_catalog(resources: str | Path, section: Mapping | None = None) -> Catalog:
    """The shipped catalog and the config's ``published_judges`` section (its ``sources`` and
    ``entries``: a config entry may not reuse a shipped judge's name)."""
    folder = catalog_dir(resources)
    section = section or {}
    sources = read_sources(folder / "sources.yaml")
    for name, s in (section.get("sources") or {}).items():
        key = f"published_judges.sources.{name}"
        if name in sources:
            raise InputError("a source of the shipped catalog has this name", key=key)
        for k in ("paper", "repository", "licence"):
            if not str(s.get(k) or "").strip():
                raise InputError(f"needs a {k}", key=f"{key}.{k}")
        sources[str(name)] = Source(str(name), s["paper"], s["repository"], s["licence"])
    judges: dict[str, dict] = {}
    for where, row in read_catalog_rows(folder / "catalog.tsv"):
        _add_file(judges, row, where, sources)
    shipped = set(judges)
    for where, row in config_rows(section.get("entries") or {}):
        if row["name"] in shipped:
            raise _error("a judge of the shipped catalog has this name", where("name"))
        _add_file(judges, row, where, sources)
    return Catalog(
        {
            n: PublishedJudge(n, sources[j["source"]], j["judge_model"], j["method"], j["values"], j["files"])
            for n, j in judges.items()
        },
        sources,
    )


# -- the listing (``judgelab published``) ---------------------------------------------------------

#: the columns of the listing: the aligned table's headers and the TSV's
LISTING = (
    ("name", "name"),
    ("source", "source"),
    ("judge model", "judge_model"),
    ("method", "method"),
    ("values", "values"),
    ("datasets", "datasets"),
    ("size", "bytes"),
    ("downloaded", "downloaded"),
)


def human_size(n: int) -> str:
    """Bytes as a person reads them (decimal units): ``812 B``, ``178 kB``, ``1.4 MB``."""
    if n < 1000:
        return f"{n} B"
    if n < 1_000_000:
        return f"{n / 1000:.0f} kB"
    return f"{n / 1_000_000:.1f} MB"


def listing(
    catalog: Catalog,
    present: Callable[[str, str], bool],
    source: str | None = None,
    method: str | None = None,
) -> list[dict[str, Any]]:
    """One row per judge of ``catalog`` (of ``source`` and ``method`` when given: an unknown one
    is an error listing the known), in catalog order: its name, source, judge model, method,
    values, datasets, total bytes, and whether its files are downloaded - ``all``, ``some`` or
    ``no``, by ``present(judge, dataset)``."""
    for option, wanted, known in (
        ("--source", source, {j.source.name for j in catalog.judges.values()}),
        ("--method", method, {j.method for j in catalog.judges.values()}),
    ):
        if wanted is not None and wanted not in known:
            raise InputError(
                f"{option} {wanted!r}: no published judge has it (known: {', '.join(sorted(known))})"
            )
    rows = []
    for j in catalog.judges.values():
        if (source is not None and j.source.name != source) or (method is not None and j.method != method):
            continue
        have = sum(present(j.name, d) for d in j.files)
        rows.append(
            {
                "name": j.name,
                "source": j.source.name,
                "judge_model": j.judge_model,
                "method": j.method,
                "values": str(j.values),
                "datasets": ",".join(j.datasets),
                "bytes": j.size,
                "downloaded": "all" if have == len(j.files) else "some" if have else "no",
            }
        )
    return rows


def format_listing(rows: Sequence[Mapping[str, Any]], sources: Mapping[str, Source], where: str) -> str:
    """The rows of :func:`listing` as an aligned table, a total, and a footer naming each listed
    source's paper (``where``: the folder the downloaded column looked in)."""
    header = [title for title, _ in LISTING]
    cells = [[human_size(r[k]) if k == "bytes" else (str(r[k]) or "-") for _, k in LISTING] for r in rows]
    widths = [max(len(c) for c in col) for col in zip(header, *cells)]
    right = {i for i, (_, k) in enumerate(LISTING) if k == "bytes"}

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in enumerate(zip(values, widths))
        ).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out += [line(c) for c in cells]
    done = sum(r["downloaded"] == "all" for r in rows)
    total = sum(r["bytes"] for r in rows)
    out.append("")
    out.append(
        f"{len(rows)} judge{'' if len(rows) == 1 else 's'}, {human_size(total)}; {done} with every file in {where}"
    )
    out.append(
        "(a run fetches the files of the judges it uses; one by hand: "
        f"snakemake {where}/<judge>/<dataset>.txt)"
    )
    listed = list(dict.fromkeys(r["source"] for r in rows))
    if listed:
        out.append("")
        out += [f"{name}: {sources[name].paper}" for name in listed]
        out.append("(`judgelab published --sources`: each source's repository and licence)")
    return "\n".join(out)


def write_listing_tsv(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows of :func:`listing` as TSV (the listing's columns, ``bytes`` a whole number)."""
    keys = [k for _, k in LISTING]
    lines = ["\t".join(keys)] + ["\t".join(str(r[k]) for k in keys) for r in rows]
    return "\n".join(lines)


def format_sources(catalog: Catalog) -> str:
    """Each source's paper, repository and licence, with how many judges it gives."""
    out = []
    for name, s in catalog.sources.items():
        n = sum(j.source.name == name for j in catalog.judges.values())
        out += [
            f"{name} ({n} judge{'' if n == 1 else 's'})",
            f"  paper:      {s.paper}",
            f"  repository: {s.repository}",
            f"  licence:    {s.licence}",
            "",
        ]
    return "\n".join(out).rstrip()


# -- fetching a file ------------------------------------------------------------------------------


def fetch(params: Mapping[str, Any], dest: str | Path) -> Path:
    """Fetch one file of a published judge to ``dest``, verified: ``params`` is what
    :meth:`judgelab.wiring.facade.Project.published_download` gives (``url``, ``bytes``,
    ``sha256``, ``mirror``).

    Without a ``mirror`` the file is downloaded from its URL (:func:`judgelab.data.sources.download`:
    atomic, retried where a retry may help). With one (a path: the local copy under
    ``published_judges.mirror``) that file is copied the same way, as a ``file://`` download. Either
    way its size and SHA-256 must be the catalog's: otherwise one
    :class:`~judgelab.data.sources.DownloadError` names the URL or the mirror's file, the expected
    and the found digest, and nothing is left under ``dest`` (an earlier file there stays as it
    was)."""
    url, size, sha256 = str(params["url"]), int(params["bytes"]), str(params["sha256"])
    mirror = params.get("mirror")
    return download_or_copy(
        url,
        dest,
        size=size,
        sha256=sha256,
        copy=mirror or None,
        key="published_judges.mirror",
        what="the catalog's file",
    )


# -- building the shipped catalog from the sources' manifests -----------------------------------


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", text.strip()).strip("-")


def narabzad_values(method: str, found: str) -> str:
    """The declared values of an Arabzadeh and Clarke file: its labels as found, EXAM's graded
    self-ratings 0-5, EXAM's binary ones and AutoNuggetizer's unweighted scores 0-1, the weighted
    ones up to 5/3 (strict 3/2) as the files hold them (the repository states no bound)."""
    if found.startswith("labels"):
        levels = found.split()[1:]
        return f"labels 0-{max(int(x) for x in levels)}"
    if method.startswith("exam-graded"):
        return "scores 0-5"
    if method.startswith("autonuggetizer-weighted_strict"):
        return "scores 0-1.5"
    if method.startswith("autonuggetizer-weighted"):
        return "scores 0-1.66667"
    return "scores 0-1"


def catalog_rows(manifest_dir: str | Path) -> list[dict[str, str]]:
    """The catalog rows of the two shipped sources from the manifests of their byte copies
    (``narabzad-2024``: judge ``<method>-<model>``, and ``-<folder>`` after it when the source's
    ``Methods`` and ``raw-qrels`` folders hold different files of one method and model, as for
    Llama-3.2's binary labels; ``llmjudge-2024``: ``llmjudge-<submission>``
    on dataset ``llmjudge``, graded labels), leaving out empty files and byte-identical
    duplicates (the first of each, in manifest order, stays)."""
    root = Path(manifest_dir)
    rows: list[dict[str, str]] = []
    seen: set[str] = set()
    taken: set[tuple[str, str]] = set()
    with (root / "narabzad-2024" / "MANIFEST.tsv").open(encoding="utf-8", newline="") as fh:
        for m in csv.DictReader(fh, delimiter="\t"):
            if int(m["bytes"]) == 0 or m["same_as"] or m["sha256"] in seen:
                continue
            seen.add(m["sha256"])
            name = _slug(f"{m['method']}-{m['judge_model']}")
            if (name, m["dataset"]) in taken:  # Llama-3.2's binary labels: two different runs
                name += "-" + _slug(m["file"].split("/", 1)[0].lower())
            taken.add((name, m["dataset"]))
            rows.append(
                {
                    "name": name,
                    "source": "narabzad-2024",
                    "dataset": m["dataset"],
                    "judge_model": m["judge_model"],
                    "method": m["method"],
                    "values": narabzad_values(m["method"], m["values"]),
                    "file": m["file"],
                    "bytes": m["bytes"],
                    "sha256": m["sha256"],
                    "url": m["source_url"],
                }
            )
    with (root / "llmjudge-2024" / "MANIFEST.tsv").open(encoding="utf-8", newline="") as fh:
        for m in csv.DictReader(fh, delimiter="\t"):
            if not m["file"].startswith("scores/"):
                continue
            stem = Path(m["file"]).stem
            rows.append(
                {
                    "name": _slug(f"llmjudge-{stem}"),
                    "source": "llmjudge-2024",
                    "dataset": "llmjudge",
                    "judge_model": "",
                    "method": "llmjudge-submission",
                    "values": "labels 0-3",
                    "file": m["file"],
                    "bytes": m["bytes"],
                    "sha256": m["sha256"],
                    "url": m["source_url"],
                }
            )
    return rows


def write_catalog(rows: Iterable[Mapping[str, str]], path: str | Path) -> None:
    with Path(path).open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([r[c] for c in COLUMNS])
