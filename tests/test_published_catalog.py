"""Published judges (issue 40): the shipped catalog is what the sources' manifests say, reading it
or a config entry that is wrong fails naming the file and line or the config key, a name resolves
to judges or a group, a file is fetched verified (from its URL or the mirror), `judgelab
published` lists the catalog, and the rule download_published_judge fetches one file."""

from __future__ import annotations

import csv
import hashlib
import shutil
from pathlib import Path

import pytest
import yaml
from http_server import Server
from snakerun import ROOT, make_workdir, output, snakemake

from judgelab import cli
from judgelab.data import sources
from judgelab.data.published import (
    COLUMNS,
    Values,
    catalog_rows,
    fetch,
    human_size,
    load_catalog,
)
from judgelab.data.sources import DownloadError
from judgelab.errors import InputError

RESOURCES = ROOT / "resources"
CATALOG = RESOURCES / "published" / "catalog.tsv"
OLZ = "llmjudge-Olz-exp"  # one LLMJudge submission: 61,295 bytes


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    """Retries as in production, without their waits."""
    monkeypatch.setattr(sources, "RETRY_DELAYS", (0.01, 0.01, 0.01))


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(RESOURCES)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- the shipped catalog -------------------------------------------------------------------------


def test_the_shipped_catalog_is_built_from_the_manifests_of_the_shared_copies(shared_data):
    with CATALOG.open(encoding="utf-8", newline="") as fh:
        shipped = list(csv.DictReader(fh, delimiter="\t"))
    assert shipped == catalog_rows(shared_data / "published-judges")


def test_the_shipped_files_are_the_shared_copies_byte_for_byte(shared_data, catalog):
    for judge in catalog.judges.values():
        for f in judge.files.values():
            copy = shared_data / "published-judges" / judge.source.name / f.file
            assert copy.stat().st_size == f.bytes, copy
            assert sha(copy.read_bytes()) == f.sha256, copy


def test_58_judges_of_107_files_in_two_sources_and_their_groups(catalog):
    assert len(catalog.judges) == 58
    assert sum(len(j.files) for j in catalog.judges.values()) == 107
    groups = catalog.groups
    assert len(groups["narabzad-2024"]) == 25 and len(groups["llmjudge-2024"]) == 33
    assert groups["umbrela-zeroshot"] == ["umbrela-zeroshot-gpt-4"]
    assert groups["binary"] == [
        "binary-gpt-4",
        "binary-gpt-4o",
        "binary-llama-3.2",
        "binary-llama-3.2-raw-qrels",
    ]
    assert groups["llmjudge-submission"] == groups["llmjudge-2024"]
    assert not set(groups) & set(catalog.judges)  # a group never shadows a judge
    assert sorted(catalog.sources) == ["llmjudge-2024", "narabzad-2024"]


def test_every_llmjudge_submission_is_graded_labels_on_the_llmjudge_dataset(catalog):
    llmjudge = [j for j in catalog.judges.values() if j.source.name == "llmjudge-2024"]
    assert len(llmjudge) == 33
    for j in llmjudge:
        assert str(j.values) == "labels 0-3" and j.values.scale == "graded", j.name
        assert j.datasets == ["llmjudge"], j.name
        assert j.files["llmjudge"].url.startswith(
            "https://raw.githubusercontent.com/llm4eval/LLMJudge-benchmark/968a1f9c962fddfc6508faa2d45e3e7edd1c3829/"
        )


@pytest.mark.parametrize(
    ("text", "kind", "scale", "shown"),
    [
        ("labels 0-3", "labels", "graded", "labels 0-3"),
        ("labels 0-1", "labels", "binary", "labels 0-1"),
        ("scores 0-5", "scores", "scores", "scores 0-5"),
        (" scores 0-1.5 ", "scores", "scores", "scores 0-1.5"),
    ],
)
def test_values_parse(text, kind, scale, shown):
    v = Values.parse(text, "k")
    assert (v.kind, v.scale, str(v)) == (kind, scale, shown)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("grades 0-3", "expected 'labels 0-3'"),
        ("labels 0-5", "binary (0-1) or graded (0-3)"),
        ("labels 1-3", "binary (0-1) or graded (0-3)"),
        ("scores 5-1", "the low end must be below the high end"),
        ("labels", "expected 'labels 0-3'"),
    ],
)
def test_values_parse_errors_name_the_key_or_the_line(text, says):
    with pytest.raises(InputError, match="config key 'published_judges.entries.x.values'") as e:
        Values.parse(text, "published_judges.entries.x.values")
    assert says in str(e.value)
    with pytest.raises(InputError) as e:
        Values.parse(text, ("catalog.tsv", 7))
    assert str(e.value).startswith("catalog.tsv:7: ") and says in str(e.value)


# -- errors reading the catalog and the config's entries ----------------------------------------


def resources_with(tmp_path: Path, lines: list[str] | None = None, sources_yaml: str | None = None) -> Path:
    """A resources folder whose catalog is the shipped header and ``lines`` (default: the shipped
    catalog's first two rows) and whose sources are the shipped ones (or ``sources_yaml``)."""
    folder = tmp_path / "resources" / "published"
    folder.mkdir(parents=True)
    shipped = CATALOG.read_text(encoding="utf-8").splitlines()
    body = shipped[:3] if lines is None else [shipped[0], *lines]
    (folder / "catalog.tsv").write_text("\n".join(body) + "\n", encoding="utf-8")
    (folder / "sources.yaml").write_text(
        sources_yaml or (RESOURCES / "published" / "sources.yaml").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    return tmp_path / "resources"


def shipped_row(n: int = 1) -> list[str]:
    return CATALOG.read_text(encoding="utf-8").splitlines()[n].split("\t")


def test_a_catalog_with_a_wrong_header_names_line_1(tmp_path):
    res = resources_with(tmp_path)
    path = res / "published" / "catalog.tsv"
    path.write_text(path.read_text().replace("judge_model", "model", 1))
    with pytest.raises(InputError, match=rf"^{path}:1: the header must be name<TAB>source"):
        load_catalog(res)


@pytest.mark.parametrize(
    ("column", "value", "says"),
    [
        (None, None, "9 fields, expected 10"),
        ("sha256", "ABC", "sha256 'ABC' is not 64 lowercase hex digits"),
        ("source", "nowhere", "unknown source 'nowhere' (known: ['llmjudge-2024', 'narabzad-2024'])"),
        ("values", "labels 0-4", "binary (0-1) or graded (0-3)"),
        ("bytes", "12k", "bytes '12k' is not a whole number"),
        ("name", "a b", "judge name 'a b'"),
    ],
)
def test_a_bad_catalog_row_names_its_file_and_line(tmp_path, column, value, says):
    row = shipped_row(2)
    if column is None:
        row = row[:-1]
    else:
        row[COLUMNS.index(column)] = value
    res = resources_with(tmp_path, ["\t".join(shipped_row(1)), "\t".join(row)])
    with pytest.raises(InputError) as e:
        load_catalog(res)
    assert str(e.value).startswith(f"{res / 'published' / 'catalog.tsv'}:3: ") and says in str(e.value)


def test_two_files_of_one_judge_for_one_dataset_name_the_second_line(tmp_path):
    first, second = shipped_row(1), shipped_row(2)  # binary-gpt-4: dl19, dl20
    second[COLUMNS.index("dataset")] = first[COLUMNS.index("dataset")]
    res = resources_with(tmp_path, ["\t".join(first), "\t".join(second)])
    with pytest.raises(
        InputError, match=r"catalog.tsv:3: judge 'binary-gpt-4' has two files for dataset 'dl19'"
    ):
        load_catalog(res)


def test_a_source_without_a_licence_names_the_sources_file_and_its_line(tmp_path):
    text = (RESOURCES / "published" / "sources.yaml").read_text(encoding="utf-8")
    text = text.replace("  licence: MIT (the repository's LICENSE)\n", "")
    res = resources_with(tmp_path, sources_yaml=text)
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.startswith("llmjudge-2024:"))
    with pytest.raises(InputError, match=rf"sources.yaml:{line}: source 'llmjudge-2024' needs a licence"):
        load_catalog(res)


def entry(**over) -> dict:
    """A config entry of one file (its values changed by ``over``)."""
    e = {
        "source": "mine",
        "judge_model": "m",
        "method": "own",
        "values": "labels 0-3",
        "files": {"dl19": {"url": "file:///x/own.qrels", "sha256": "a" * 64, "bytes": 10}},
    }
    e.update(over)
    return e


MINE = {"mine": {"paper": "p", "repository": "r", "licence": "l"}}


@pytest.mark.parametrize(
    ("section", "key", "says"),
    [
        ({"entries": {OLZ: entry(source="llmjudge-2024")}}, f"published_judges.entries.{OLZ}", "shipped"),
        (
            {"sources": MINE, "entries": {"x": entry(source="theirs")}},
            "published_judges.entries.x.source",
            "theirs",
        ),
        (
            {"sources": MINE, "entries": {"x": entry(values="labels 0-2")}},
            "published_judges.entries.x.values",
            "0-2",
        ),
        (
            {
                "sources": MINE,
                "entries": {"x": entry(files={"dl19": {"url": "u", "sha256": "0", "bytes": 1}})},
            },
            "published_judges.entries.x.files.dl19.sha256",
            "not 64 lowercase",
        ),
        ({"sources": {"narabzad-2024": MINE["mine"]}}, "published_judges.sources.narabzad-2024", "shipped"),
        (
            {"sources": {"mine": {"paper": "p", "repository": "r", "licence": " "}}},
            "published_judges.sources.mine.licence",
            "licence",
        ),
    ],
)
def test_a_bad_config_entry_names_its_key(section, key, says):
    with pytest.raises(InputError) as e:
        load_catalog(RESOURCES, section)
    assert str(e.value).startswith(f"config key '{key}': ") and says in str(e.value)


def test_a_config_entry_joins_the_catalog_and_its_source_group(catalog):
    extended = load_catalog(RESOURCES, {"sources": MINE, "entries": {"x": entry()}})
    assert len(extended.judges) == len(catalog.judges) + 1
    x = extended.judges["x"]
    assert (x.source.paper, x.method, x.datasets, x.size) == ("p", "own", ["dl19"], 10)
    assert extended.groups["mine"] == ["x"] and extended.groups["own"] == ["x"]


# -- resolving a name ------------------------------------------------------------------------------


def test_resolve_a_single_judge(catalog):
    assert [j.name for j in catalog.resolve(OLZ, ["dl19", "llmjudge"], "k")] == [OLZ]


def test_resolve_a_group_takes_only_its_judges_of_the_given_datasets(catalog):
    on_dl20 = catalog.resolve("narabzad-2024", ["dl20"], "k")
    assert len(on_dl20) == 24  # every one but exam-binary-mean-llama-3.2 (dl19 and dl21 only)
    assert "exam-binary-mean-llama-3.2" not in {j.name for j in on_dl20}
    assert len(catalog.resolve("narabzad-2024", ["dl21"], "k")) == 25
    assert [j.name for j in catalog.resolve("umbrela-zeroshot", ["dl19"], "k")] == ["umbrela-zeroshot-gpt-4"]
    with pytest.raises(
        InputError, match=r"config key 'published_judges.use': no judge of the group 'llmjudge-2024'"
    ):
        catalog.resolve("llmjudge-2024", ["dl19"], "published_judges.use")


def test_resolve_a_single_judge_of_no_config_dataset_names_the_key(catalog):
    with pytest.raises(InputError) as e:
        catalog.resolve("exam-binary-mean-llama-3.2", ["dl20", "llmjudge"], "overrating.imported_judges")
    assert str(e.value).startswith("config key 'overrating.imported_judges': ")
    assert "labelled ['dl19', 'dl21']" in str(e.value)


def test_resolve_an_unknown_name_lists_the_groups(catalog):
    with pytest.raises(InputError, match="config key 'published_judges.use'") as e:
        catalog.resolve("gpt-5", ["dl19"], "published_judges.use")
    assert "'llmjudge-2024', 'llmjudge-submission', 'narabzad-2024'" in str(e.value)


def test_catalog_file_names_the_datasets_a_judge_has(catalog):
    assert catalog.file(OLZ, "llmjudge").bytes == 61295
    with pytest.raises(
        InputError,
        match=r"'binary-gpt-4' has no file for dataset 'llmjudge' \(its datasets: dl19, dl20, dl21\)",
    ):
        catalog.file("binary-gpt-4", "llmjudge")
    with pytest.raises(InputError, match="'nobody' is not a published judge"):
        catalog.file("nobody", "dl19")


# -- fetching a file, verified ------------------------------------------------------------------

BODY = b"101 Q0 d1 3\n101 Q0 d2 0\n102 Q0 d3 1\n"


def params(url: str, data: bytes = BODY, **over) -> dict:
    return {"url": url, "bytes": len(data), "sha256": sha(data), "mirror": None, **over}


def test_fetch_from_a_file_url_checks_the_digest(tmp_path):
    src = tmp_path / "src" / "own.qrels"
    src.parent.mkdir()
    src.write_bytes(BODY)
    dest = tmp_path / "out" / "dl19.txt"
    assert fetch(params(src.as_uri()), dest) == dest and dest.read_bytes() == BODY
    assert (tmp_path / "out" / "dl19.txt.download.json").exists()


def test_fetch_with_a_wrong_digest_names_the_url_and_both_digests_and_leaves_nothing(tmp_path):
    src = tmp_path / "own.qrels"
    src.write_bytes(BODY)
    out = tmp_path / "out"
    with pytest.raises(DownloadError) as e:
        fetch(params(src.as_uri(), sha256="b" * 64), out / "dl19.txt")
    assert src.as_uri() in str(e.value) and sha(BODY) in str(e.value) and "b" * 64 in str(e.value)
    assert list(out.iterdir()) == []  # no file under its name, no partial file


def test_fetch_over_http_with_a_wrong_digest_names_the_url_and_both_digests(tmp_path):
    with Server({"/o.txt": (BODY, len(BODY), 200)}) as srv:
        with pytest.raises(DownloadError) as e:
            fetch(params(srv.url("/o.txt"), sha256="c" * 64), tmp_path / "o.txt")
    message = str(e.value)
    assert f"download of {srv.url('/o.txt')} has SHA-256 {sha(BODY)}, not the expected {'c' * 64}" in message
    assert not (tmp_path / "o.txt").exists()


def test_fetch_with_a_wrong_size_leaves_nothing_and_keeps_an_earlier_file(tmp_path):
    src = tmp_path / "own.qrels"
    src.write_bytes(BODY)
    dest = tmp_path / "out" / "dl19.txt"
    dest.parent.mkdir()
    dest.write_bytes(b"earlier\n")
    with pytest.raises(DownloadError, match="does not have the expected size") as e:
        fetch(params(src.as_uri(), bytes=len(BODY) + 1), dest)
    assert f"{len(BODY):,} bytes arrived, {len(BODY) + 1:,} bytes expected" in str(e.value)
    assert dest.read_bytes() == b"earlier\n" and sorted(p.name for p in dest.parent.iterdir()) == ["dl19.txt"]


def test_fetch_via_the_mirror_never_asks_the_url(tmp_path):
    mirror = tmp_path / "mirror" / "mine" / "own.qrels"
    mirror.parent.mkdir(parents=True)
    mirror.write_bytes(BODY)
    dest = tmp_path / "out" / "dl19.txt"
    # a URL that cannot be reached: the copy is the mirror's
    assert fetch(params("https://host.invalid/own.qrels", mirror=str(mirror)), dest).read_bytes() == BODY


def test_fetch_via_the_mirror_with_a_wrong_digest_names_the_mirror_file(tmp_path):
    mirror = tmp_path / "mirror" / "own.qrels"
    mirror.parent.mkdir()
    other = BODY.replace(b"d3 1", b"d3 2")  # as long, not the catalog's file
    mirror.write_bytes(other)
    out = tmp_path / "out"
    with pytest.raises(DownloadError) as e:
        fetch(params("https://host.invalid/own.qrels", mirror=str(mirror)), out / "dl19.txt")
    message = str(e.value)
    assert message.startswith(f"published_judges.mirror: the copy {mirror} of https://host.invalid/own.qrels")
    assert f"has SHA-256 {sha(other)}, not the expected {sha(BODY)}" in message
    assert list(out.iterdir()) == []
    with pytest.raises(
        DownloadError, match=rf"published_judges.mirror: the copy {tmp_path}/nothing.qrels .*No such file"
    ):
        fetch(
            params("https://host.invalid/own.qrels", mirror=str(tmp_path / "nothing.qrels")), out / "dl19.txt"
        )


def test_fetch_every_file_of_a_judge_from_the_shared_copies(shared_data, catalog, tmp_path):
    judge = catalog.judges["exam-binary-mean-llama-3.2"]  # two files
    for dataset, f in judge.files.items():
        copy = shared_data / "published-judges" / judge.source.name / f.file
        got = fetch(
            params(f.url, mirror=str(copy)) | {"bytes": f.bytes, "sha256": f.sha256},
            tmp_path / f"{dataset}.txt",
        )
        assert sha(got.read_bytes()) == f.sha256


# -- judgelab published ---------------------------------------------------------------------------


def run_folder(tmp_path: Path, overlay: dict | None = None) -> Path:
    """A run folder of the byo test config; ``overlay`` written as its own config/config.yaml's
    additions."""
    wd = make_workdir(tmp_path / "run", "byo")
    if overlay:
        config = yaml.safe_load((wd / "config" / "config.yaml").read_text())
        (wd / "config" / "config.yaml").write_text(yaml.safe_dump({**config, **overlay}))
    return wd


def tsv_rows(capsys, *argv: str) -> list[dict[str, str]]:
    assert cli.main(["published", *argv, "--tsv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    return list(csv.DictReader(lines, delimiter="\t"))


def test_the_listing_has_every_judge_and_the_configs_own(tmp_path, capsys, catalog):
    own = {"sources": MINE, "entries": {"x": entry()}}
    wd = run_folder(tmp_path, {"published_judges": own})
    rows = tsv_rows(capsys, "-d", str(wd))
    assert list(rows[0]) == [
        "name",
        "source",
        "judge_model",
        "method",
        "values",
        "datasets",
        "bytes",
        "downloaded",
    ]
    assert [r["name"] for r in rows] == [*catalog.judges, "x"]
    by = {r["name"]: r for r in rows}
    assert by["x"] == {
        "name": "x",
        "source": "mine",
        "judge_model": "m",
        "method": "own",
        "values": "labels 0-3",
        "datasets": "dl19",
        "bytes": "10",
        "downloaded": "no",
    }
    assert by["exam-binary-mean-llama-3.2"]["datasets"] == "dl19,dl21"
    assert by[OLZ]["bytes"] == "61295" and by[OLZ]["values"] == "labels 0-3"
    assert {r["downloaded"] for r in rows} == {"no"}


def test_the_downloaded_column_flips_as_files_arrive(tmp_path, capsys):
    wd = run_folder(tmp_path, {"results": "out"})
    for judge, dataset in [(OLZ, "llmjudge"), ("binary-gpt-4", "dl20")]:
        placed = wd / "out" / "published" / judge / f"{dataset}.txt"
        placed.parent.mkdir(parents=True)
        placed.write_text("1 Q0 d 1\n")
    (wd / "results" / "published" / "binary-gpt-4o").mkdir(parents=True)  # another folder: not the run's
    (wd / "results" / "published" / "binary-gpt-4o" / "dl19.txt").write_text("1 Q0 d 1\n")
    by = {r["name"]: r["downloaded"] for r in tsv_rows(capsys, "-d", str(wd))}
    assert (by[OLZ], by["binary-gpt-4"], by["binary-gpt-4o"]) == ("all", "some", "no")
    for dataset in ("dl19", "dl21"):
        (wd / "out" / "published" / "binary-gpt-4" / f"{dataset}.txt").write_text("1 Q0 d 1\n")
    assert {r["name"]: r["downloaded"] for r in tsv_rows(capsys, "-d", str(wd))}["binary-gpt-4"] == "all"


def test_the_aligned_table_its_filters_and_the_papers_footer(tmp_path, capsys):
    wd = run_folder(tmp_path)
    assert cli.main(["published", "-d", str(wd), "--source", "narabzad-2024", "--method", "binary"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    header, rule, *rest = lines
    table = rest[: rest.index("")]
    assert [line.split()[0] for line in table] == [
        "binary-gpt-4",
        "binary-gpt-4o",
        "binary-llama-3.2",
        "binary-llama-3.2-raw-qrels",
    ]
    # aligned: every column starts where its header does (the size right-aligned under its own)
    for title in ("source", "judge model", "method", "values", "datasets", "downloaded"):
        at = header.index(title)
        assert all(line[at - 2 : at] == "  " and line[at] != " " for line in table), title
    size_end = header.index("size") + len("size")
    assert all(line[:size_end].endswith(" kB") and line[size_end : size_end + 2] == "  " for line in table)
    assert all(line.endswith("  no") for line in table)
    assert set(rule.replace(" ", "")) == {"-"}
    assert "4 judges, 3.3 MB; 0 with every file in results/published" in text
    assert 'narabzad-2024: Arabzadeh and Clarke, "Benchmarking LLM-based Relevance Judgment Methods"' in text
    assert "llmjudge-2024:" not in text  # only the listed sources' papers


def test_an_unknown_source_or_method_is_one_error_listing_the_known(tmp_path, capsys):
    wd = run_folder(tmp_path)
    assert cli.main(["published", "-d", str(wd), "--source", "trec-2025"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "judgelab: error: --source 'trec-2025': no published judge has it (known: llmjudge-2024, narabzad-2024)"
    )


def test_the_sources_their_paper_repository_and_licence(tmp_path, capsys):
    assert cli.main(["published", "-d", str(tmp_path), "--sources"]) == 0  # no config: the shipped catalog
    text = capsys.readouterr().out
    assert "llmjudge-2024 (33 judges)" in text and "narabzad-2024 (25 judges)" in text
    assert (
        "  repository: https://github.com/llm4eval/LLMJudge-benchmark/tree/968a1f9c962fddfc6508faa2d45e3e7edd1c3829"
        in text
    )
    assert "  licence:    MIT (the repository's LICENSE)" in text
    assert "  licence:    none stated (no licence file in the repository)" in text


def test_without_a_config_the_shipped_catalog_is_listed(tmp_path, capsys, catalog):
    assert [r["name"] for r in tsv_rows(capsys, "-d", str(tmp_path))] == list(catalog.judges)


@pytest.mark.parametrize(
    ("n", "shown"), [(0, "0 B"), (999, "999 B"), (61295, "61 kB"), (1_234_567, "1.2 MB")]
)
def test_human_size(n, shown):
    assert human_size(n) == shown


# -- the rule ----------------------------------------------------------------------------------


def own_entries(tmp_path: Path, good: bytes, wrong: bytes) -> dict:
    """Two config entries of file:// URLs: `good` with its digest, `wrong` with another."""
    files = {}
    for name, data, digest in (("good", good, sha(good)), ("wrong", wrong, "d" * 64)):
        path = tmp_path / "served" / f"{name}.qrels"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        files[name] = {"dl19": {"url": path.as_uri(), "sha256": digest, "bytes": len(data)}}
    return {
        "sources": MINE,
        "entries": {
            n: {"source": "mine", "method": "own", "values": "labels 0-3", "files": f}
            for n, f in files.items()
        },
    }


@pytest.mark.slow
def test_the_rule_copies_from_the_mirror_and_refuses_a_wrong_digest(tmp_path):
    wrong = BODY + b"9 Q0 x 1\n"
    section = own_entries(tmp_path, BODY, wrong)
    mirror = tmp_path / "mirror"
    (mirror / "mine").mkdir(parents=True)
    shutil.copy(tmp_path / "served" / "good.qrels", mirror / "mine" / "good.qrels")
    (tmp_path / "served" / "good.qrels").unlink()  # only the mirror has it now
    wd = run_folder(tmp_path, {"published_judges": section})
    (wd / "mirror.yaml").write_text(yaml.safe_dump({"published_judges": {**section, "mirror": str(mirror)}}))

    res = snakemake(
        wd, "results/published/good/dl19.txt", "--configfile", str(wd / "mirror.yaml"), cores=1, timeout=300
    )
    assert res.returncode == 0, output(res)
    assert (wd / "results" / "published" / "good" / "dl19.txt").read_bytes() == BODY
    assert "downloaded file://" in (wd / "results" / "logs" / "published" / "good" / "dl19.log").read_text()

    res = snakemake(wd, "results/published/wrong/dl19.txt", cores=1, timeout=300)
    text = output(res)
    assert res.returncode != 0
    url = (tmp_path / "served" / "wrong.qrels").as_uri()
    assert (
        f"judgelab: rule download_published_judge stopped: download of {url} has SHA-256 "
        f"{sha(wrong)}, not the expected {'d' * 64}"
    ) in text
    assert (
        not (wd / "results" / "published" / "wrong").exists()
        or list((wd / "results" / "published" / "wrong").iterdir()) == []
    )


@pytest.mark.slow
def test_the_rule_fetches_an_llmjudge_submission_from_the_shared_mirror(shared_data, tmp_path, catalog):
    wd = run_folder(tmp_path, {"published_judges": {"mirror": str(shared_data / "published-judges")}})
    target = f"results/published/{OLZ}/llmjudge.txt"
    res = snakemake(wd, target, cores=1, timeout=300)
    assert res.returncode == 0, output(res)
    assert sha((wd / target).read_bytes()) == catalog.judges[OLZ].files["llmjudge"].sha256
