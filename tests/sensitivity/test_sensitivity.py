"""The sensitivity study without a workflow: the published files' readers on hand-written files
(drops, repeats, errors naming file:line), the pairwise shares, the spread and the human-vs-LLM
bootstrap by hand, the plan on its own test config, and kappa per prompt from the published GPT-4o
DL21 files against scikit-learn on the joined files (../shared/data; skipped when absent)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from snakerun import make_workdir

from judgelab.errors import InputError, NothingToDo
from judgelab.studies.sensitivity.published import (
    MODELS,
    read_manifest,
    read_pairs,
    read_pairwise,
    read_pointwise,
    read_prompts,
)
from judgelab.studies.sensitivity.science import groups, pairwise_row, pointwise_row, spread
from judgelab.wiring.facade import Project

ROOT = Path(__file__).resolve().parents[2]
GRADES = {("1", "a"): 0, ("1", "b"): 1, ("1", "c"): 2, ("1", "d"): 3, ("2", "e"): 3}


def workdir(tmp_path: Path, monkeypatch) -> Path:
    """A run folder of the study's test config, the working directory (its prompt is a path
    relative to it, as in a Snakemake run)."""
    wd = make_workdir(tmp_path / "wd", "sensitivity")
    monkeypatch.chdir(wd)
    return wd


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_graded_file_drops_labels_out_of_scale_and_repeated_lines(tmp_path):
    f = write(
        tmp_path / "g.txt",
        ["1 0 a 0", "1 0 b 7", "1 0 c 2", "1 0 c 0", "1 0 d 3", "2 0 e 2"],
    )
    read = read_pointwise(f, "graded", GRADES)
    # 6 lines: b's 7 dropped, c's second line a repeat (its first label, 2, counts)
    assert (read.lines, read.dropped, read.repeats) == (6, 1, 1)
    assert read.labels["label"].tolist() == [0, 2, 3, 2]
    assert len(read.pairs) == 5
    row = pointwise_row("graded", read, 5)
    assert (row["n"], row["coverage"]) == (4, 0.8)
    human, judge = [0, 2, 3, 3], [0, 2, 3, 2]
    assert row["kappa"] == pytest.approx(cohen_kappa_score(human, judge, labels=[0, 1, 2, 3]))
    assert row["weighted_kappa"] == pytest.approx(
        cohen_kappa_score(human, judge, labels=[0, 1, 2, 3], weights="quadratic")
    )


def test_a_binary_file_is_compared_with_the_grade_binarised_at_2(tmp_path):
    f = write(tmp_path / "b.txt", ["1 0 a 0", "1 0 b 1", "1 0 c 1", "1 0 d 2", "2 0 e 0"])
    read = read_pointwise(f, "binary", GRADES)
    assert read.dropped == 1  # d's 2 is out of the binary scale
    row = pointwise_row("binary", read, 5)
    # human (>= 2): a 0, b 0, c 1, e 1; judge 0, 1, 1, 0
    assert row["kappa"] == pytest.approx(cohen_kappa_score([0, 0, 1, 1], [0, 1, 1, 0]))
    assert math.isnan(row["weighted_kappa"])


def test_a_pair_not_in_the_qrels_names_the_file_and_line(tmp_path):
    f = write(tmp_path / "g.txt", ["1 0 a 0", "1 0 zz 1"])
    with pytest.raises(InputError, match=r"g\.txt:2: query 1 passage zz is not a judged pair"):
        read_pointwise(f, "graded", GRADES)


PAIRS = ["1\ttop\tmid\ta\tb", "1\ttop\tlow\ta\tc", "1\tmid\tlow\tb\tc", "2\ttop\tlow\td\te"]


def test_pairwise_outcomes_as_given_and_their_shares_by_hand(tmp_path):
    pairs = read_pairs(write(tmp_path / "pairs.txt", PAIRS))
    f = write(
        tmp_path / "p.txt",
        # b a: the pair a b listed swapped; the last line repeats it
        [
            "1 mid_top b a agree",
            "1 low_top a c disagree",
            "1 low_mid b c tie",
            "2 low_top d e agree",
            "1 x a b tie",
        ],
    )
    read = read_pairwise(f, pairs)
    assert read.outcomes["outcome"].tolist() == ["agree", "disagree", "tie", "agree", "tie"]
    row = pairwise_row(read, len(pairs))
    # 5 lines: 2 agree, 1 disagree, 2 tie; 4 distinct pairs of the list's 4
    assert (row["agree"], row["disagree"], row["tie"]) == (0.4, 0.2, 0.4)
    assert (row["repeats"], row["coverage"]) == (1, 1.0)


@pytest.mark.parametrize(
    "line, message",
    [
        ("1 mid_top a b agrees", r"p\.txt:2: unknown outcome 'agrees'"),
        ("1 mid_top a e agree", r"p\.txt:2: query 1 passages a, e: not a pair"),
    ],
)
def test_a_bad_pairwise_line_names_the_file_and_line(tmp_path, line, message):
    pairs = read_pairs(write(tmp_path / "pairs.txt", PAIRS))
    f = write(tmp_path / "p.txt", ["1 mid_top a b agree", line])
    with pytest.raises(InputError, match=message):
        read_pairwise(f, pairs)


def agreement_frame(values: dict[str, float], kind: str = "graded") -> pd.DataFrame:
    measure = "agree" if kind == "pairwise" else "kappa"
    rows = [
        {
            "source": "published",
            "model": "m",
            "type": kind,
            "dataset": "dl21",
            "prompt": p,
            "group": g,
            measure: v,
        }
        for (p, g), v in values.items()
    ]
    return pd.DataFrame(rows).assign(**{("kappa" if measure == "agree" else "agree"): math.nan})


def test_the_spread_leaves_umbrela_beside_the_prompts():
    df = agreement_frame(
        {("0", "human"): 0.2, ("1", "human"): 0.4, ("16", "LLM"): 0.6, ("32", "umbrela"): 0.5}
    )
    row = spread(df).iloc[0]
    assert (row["prompts"], row["min"], row["max"], row["range"]) == (3, 0.2, 0.6, pytest.approx(0.4))
    assert row["mean"] == pytest.approx(0.4) and row["sd"] == pytest.approx(0.2)  # SD with n - 1
    assert (row["umbrela"], row["above_umbrela"]) == (0.5, 1)


def test_human_against_llm_prompts_with_a_seeded_bootstrap():
    df = agreement_frame(
        {
            ("0", "human"): 0.1,
            ("1", "human"): 0.3,
            ("16", "LLM"): 0.5,
            ("17", "LLM"): 0.5,
            ("32", "umbrela"): 0.9,
        }
    )
    row = groups(df, 500, 7, 0.9).iloc[0]
    assert (row["human_prompts"], row["llm_prompts"]) == (2, 2)
    assert row["difference"] == pytest.approx(0.2 - 0.5)
    # the LLM group is constant: the difference's resamples are human means - 0.5, each of
    # 0.1, 0.2, 0.3 - 0.5; the 90% interval lies within [-0.4, -0.2] and holds the difference
    assert -0.4 - 1e-12 <= row["low"] <= row["difference"] <= row["high"] <= -0.2 + 1e-12
    again = groups(df, 500, 7, 0.9).iloc[0]
    assert (again["low"], again["high"]) == (row["low"], row["high"])


def test_the_plan_on_its_test_config(tmp_path, monkeypatch):
    project = Project.load([], workdir(tmp_path, monkeypatch))
    plan = project.plan("sensitivity")
    selected = {(f.type, f.prompt) for f in plan.judgments}
    # UMBRELA (32) has a graded file only
    assert selected == {(t, p) for t in ("binary", "graded", "pairwise") for p in ("0", "16")} | {
        ("graded", "32")
    }
    assert [f.kind for f in plan.support] == ["prompts", "pairs"]
    downloads = plan.downloads()
    assert len(downloads.files) == len(plan.downloaded()) == 9
    assert type(downloads).from_param(downloads.param()) == downloads
    selection = plan.selection()
    assert type(selection).from_param(selection.param()) == selection
    assert selection.tables == ("dl21", "fx") and selection.published == (("dl21", "dl21"),)
    # the live judges: the embedded model with three prompt x type on the fixture
    assert [(j.rule, j.wc) for j in plan.llm_jobs()] == [
        ("sensitivity_judge", {"dataset": "fx", "model": "smollm2", "prompt": "short", "type": "binary"}),
        (
            "sensitivity_pairwise",
            {"dataset": "fx", "model": "smollm2", "prompt": "short", "type": "pairwise"},
        ),
        ("sensitivity_judge", {"dataset": "fx", "model": "smollm2", "prompt": "written", "type": "graded"}),
    ]
    # fx is no published dataset's table: its pairs are formed from its grades
    assert plan.pairwise_datasets() == ["fx"] and plan.pair_list_input("fx") == []
    judge = plan.judge("smollm2", "written", "graded")
    assert judge.labels == ("0", "1", "2", "3") and "Query: {query}" in judge.template
    assert type(judge).from_param(judge.param()) == judge  # the rule's param carries it whole
    assert plan.text_datasets() == ["fx"]


@pytest.mark.parametrize(
    "override, message",
    [
        (
            {"prompts": ["0", "99"]},
            r"config key 'sensitivity\.published\.prompts\[1\]': no published judgments with prompt '99'",
        ),
        (
            {"datasets": {"dl20": "dl20"}},
            r"config key 'sensitivity\.published\.datasets\.dl20': 'dl20' is not a key",
        ),
    ],
)
def test_a_bad_published_selection_names_the_key(tmp_path, monkeypatch, override, message):
    wd = workdir(tmp_path, monkeypatch)
    extra = tmp_path / "extra.yaml"
    import yaml

    extra.write_text(yaml.safe_dump({"sensitivity": {"published": override}}), encoding="utf-8")
    with pytest.raises(InputError, match=message):
        Project.load([str(extra)], wd)


@pytest.mark.parametrize(
    "prompts, message",
    [
        (
            {"x": {"binary": "peras/wo_cot"}},
            r"'sensitivity\.prompts\.x\.binary': .*wo_cot\.yaml declares labels",
        ),
        ({"x": {"group": "human"}}, r"'sensitivity\.prompts\.x': names no template"),
    ],
)
def test_a_bad_live_prompt_names_the_key(tmp_path, monkeypatch, prompts, message):
    import yaml

    wd = workdir(tmp_path, monkeypatch)
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump({"sensitivity": {"prompts": prompts}}), encoding="utf-8")
    with pytest.raises(InputError, match=message):
        Project.load([str(extra)], wd)


def test_the_estimate_counts_each_live_request(tmp_path, monkeypatch):
    from judgelab.wiring.estimate import estimate

    wd = workdir(tmp_path, monkeypatch)
    table, _ = estimate(Project.load([], wd), directory=wd)
    # 2 jobs (a binary and a graded prompt) x the fixture's 4 pairs kept (per_grade 1); the
    # pairwise prompt: 2 pairs formed (per_query 2; query 102's grades 3, 1, 0) x 2 orders
    assert table[["dataset", "model", "stage", "jobs", "calls"]].values.tolist() == [
        ["fx", "smollm2", "judge", 2, 8],
        ["fx", "smollm2", "pairwise", 1, 4],
    ]


def test_nothing_selected_is_nothing_to_do(tmp_path, monkeypatch):
    wd = workdir(tmp_path, monkeypatch)
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        "sensitivity: {judges: [], published: {models: [mistral], types: [graded], prompts: ['23']}}\n"
    )
    with pytest.raises(NothingToDo, match="no published judgment file"):
        Project.load([str(extra)], wd)


def test_the_manifest_is_the_sources(shared_data):
    """Every row of resources/sensitivity/published.tsv is a file of the shared copy's MANIFEST.tsv
    with the same size and digest, and every file of it but the readme is a row."""
    rows = read_manifest(ROOT / "resources" / "sensitivity" / "published.tsv")
    source = pd.read_csv(shared_data / "prompt-sensitivity" / "MANIFEST.tsv", sep="\t", dtype=str)
    source = source[source["file"] != "readme.md"]
    assert {(r.file, str(r.bytes), r.sha256, r.url) for r in rows} == set(
        source[["file", "bytes", "sha256", "source_url"]].itertuples(index=False, name=None)
    )


def qrels_frame(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep=r"\s+", header=None, names=["qid", "it", "docid", "grade"], dtype=str)


@pytest.mark.parametrize("kind", ["binary", "graded"])
@pytest.mark.slow  # reads 53 published files twice (about 1.5 s)
def test_published_gpt4o_dl21_kappa_per_prompt_equals_sklearn(shared_data, kind):
    """For every GPT-4o DL21 file of the type: the study's kappa against scikit-learn's
    ``cohen_kappa_score`` on the file joined with the qrels by pandas, the same drop rule (labels
    outside the scale dropped, a pair's first line counts)."""
    qrels = qrels_frame(shared_data / "trec-dl" / "qrels.dl21-passage.txt")
    grades = {(q, d): int(g) for q, d, g in zip(qrels["qid"], qrels["docid"], qrels["grade"])}
    files = sorted((shared_data / "prompt-sensitivity" / "Judgements" / "gpt-4o" / kind).glob("*_dl21_*.txt"))
    assert len(files) == {"binary": 26, "graded": 27}[kind]
    scale = ["0", "1"] if kind == "binary" else ["0", "1", "2", "3"]
    for f in files:
        ours = pointwise_row(kind, read_pointwise(f, kind, grades), 1)["kappa"]
        judged = pd.read_csv(f, sep=r"\s+", header=None, names=["qid", "it", "docid", "label"], dtype=str)
        judged = judged.drop_duplicates(["qid", "docid"], keep="first")
        judged = judged[judged["label"].isin(scale)]
        joined = judged.merge(qrels[["qid", "docid", "grade"]], on=["qid", "docid"], how="inner")
        human = joined["grade"].astype(int)
        if kind == "binary":
            human = (human >= 2).astype(int)
        expected = cohen_kappa_score(human, joined["label"].astype(int))
        assert ours == pytest.approx(expected, abs=1e-12), f.name


def test_the_prompt_groups(shared_data):
    groups_ = read_prompts(shared_data / "prompt-sensitivity" / "prompts.json")
    counts = pd.Series(groups_).value_counts().to_dict()
    assert counts == {"human": 16, "LLM": 16, "umbrela": 1} and groups_["32"] == "umbrela"
    assert np.all([groups_[str(i)] == "human" for i in range(16)])


def test_the_published_scale_config(monkeypatch):
    """config/published-sensitivity.yaml: every prompt with files of all three models and
    UMBRELA's, three types, DL20 and DL21; no model call."""
    monkeypatch.chdir(ROOT)
    project = Project.load(["config/published-sensitivity.yaml"], ROOT)
    plan = project.plan("sensitivity")
    assert project.studies == ["sensitivity"] and project.llm_jobs() == []
    assert len(plan.judgments) == 474 and len(plan.downloaded()) == 477
    per_type = {
        t: {f.prompt for f in plan.judgments if f.type == t} for t in ("binary", "graded", "pairwise")
    }
    assert per_type["graded"] == per_type["binary"] | {"32"} and per_type["pairwise"] == per_type["binary"]
    assert len(per_type["binary"]) == 26


def test_the_paper_config(monkeypatch):
    """config/paper-sensitivity.yaml: the three published models live, the authors' prompts with
    published judgments of all three models (the ids of config/published-sensitivity.yaml, the
    manifest's) and UMBRELA's graded, binary, graded and pairwise on DL20 and DL21; the published files beside
    them with the same selection (so one download serves both configs)."""
    from conftest import paper_config_files

    monkeypatch.chdir(ROOT)
    project = Project.load(paper_config_files("paper-sensitivity"), ROOT)
    published = Project.load(["config/published-sensitivity.yaml"], ROOT).plan("sensitivity")
    plan = project.plan("sensitivity")
    ids = [str(i) for i in project.config["sensitivity"]["published_prompts"]["ids"]]
    assert (
        ids == [str(i) for i in published.published["prompts"]] and plan.downloads() == published.downloads()
    )
    all_three = set.intersection(
        *({f.prompt for f in plan.manifest if f.kind == "judgments" and f.model == m} for m in MODELS)
    )
    assert set(ids) == all_three and len(ids) == 27  # 13 human-written, 13 LLM-written, UMBRELA's
    cells = {(p, t) for _, _, p, t in plan.live_cells}
    # UMBRELA's prompt (32): graded only (its binary entry asks for 0-3; it has no pairwise text)
    types = ("binary", "graded", "pairwise")
    assert cells == {(p, t) for p in ids if p != "32" for t in types} | {("32", "graded")}
    assert len(project.llm_jobs()) == 3 * 2 * (53 + 26)  # models x datasets x (pointwise + pairwise)
    assert {project.config["models"][j.model]["backend"] for j in project.llm_jobs()} == {"openai"}


def test_the_download_checks_each_copy_of_the_mirror(tmp_path):
    """The download job takes the mirror's copy at the file's path in the repository, its size and
    SHA-256 checked: a copy that is not the published file stops the job naming the mirror's file,
    and nothing is left under its output."""
    import hashlib

    from judgelab.data.sources import DownloadError
    from judgelab.studies.sensitivity.jobs import download_job
    from judgelab.studies.sensitivity.settings import Downloads

    mirror = tmp_path / "mirror"
    (mirror / "Judgements").mkdir(parents=True)
    body = b"2082 0 d1 1\n"
    (mirror / "Judgements" / "a.txt").write_bytes(body)
    good = ("Judgements/a.txt", len(body), hashlib.sha256(body).hexdigest(), "https://example.org/a.txt")
    out = tmp_path / "out" / "a.txt"
    download_job(Downloads((good,)), [str(out)], mirror=str(mirror))
    assert out.read_bytes() == body
    (mirror / "Judgements" / "a.txt").write_bytes(b"2082 0 d1 0\n")  # same size, other bytes
    other = tmp_path / "out" / "b.txt"
    with pytest.raises(DownloadError, match=r"^sensitivity\.published\.mirror: the copy .*a\.txt of "):
        download_job(Downloads((good,)), [str(other)], mirror=str(mirror))
    assert not other.exists()


def test_a_published_prompt_text_keeps_every_other_brace():
    from judgelab.llm.prompts import fill
    from judgelab.studies.sensitivity.plan import literal_template

    text = 'Format {query:"", doc: ""}.\nQuery: {query}\nPassage: {Document} {document}'
    filled = fill(literal_template(text), query="q {x}", document="d {query}")
    assert filled == 'Format {query:"", doc: ""}.\nQuery: q {x}\nPassage: {Document} d {query}'


def test_the_authors_prompts_judged_live(tmp_path, monkeypatch, shared_data):
    """The authors' prompts.json as live prompts: a type whose text lacks a placeholder is left out
    for that type only, by id, in a notice; the system text is the system message."""
    import yaml

    wd = workdir(tmp_path, monkeypatch)
    extra = tmp_path / "extra.yaml"
    spec = {
        "file": str(shared_data / "prompt-sensitivity" / "prompts.json"),
        "ids": ["4", "7", "23", "27", "32"],
    }
    extra.write_text(yaml.safe_dump({"sensitivity": {"published_prompts": spec}}), encoding="utf-8")
    project = Project.load([str(extra)], wd)
    plan = project.plan("sensitivity")
    assert [n for n in project.notices if "published prompt" in n] == [
        "sensitivity: published prompt 4's graded text has no {document}: left out for graded",
        "sensitivity: published prompt 23's binary text has no {query} or {document}: left out for binary",
        "sensitivity: published prompt 23's graded text has no {query} or {document}: left out for graded",
        "sensitivity: published prompt 23's pairwise text has no {query} or {documentA} or {documentB}: "
        "left out for pairwise",
        "sensitivity: published prompt 27's graded text has no {query} or {document}: left out for graded",
        "sensitivity: published prompt 32 is UMBRELA's, a graded prompt (its binary entry asks for a 0-3 "
        "score): left out for binary",
        "sensitivity: published prompt 32's pairwise text has no {query} or {documentA} or {documentB}: "
        "left out for pairwise",
    ]
    published = [(p, t) for d, m, p, t in plan.live_cells if p in spec["ids"]]
    assert published == [
        ("4", "binary"),
        ("4", "pairwise"),
        ("7", "binary"),
        ("7", "graded"),
        ("7", "pairwise"),
        ("27", "binary"),
        ("27", "pairwise"),
        ("32", "graded"),
    ]
    judge = plan.judge("smollm2", "7", "graded")
    assert judge.placement == "system" and "{query:" in judge.persona
    assert type(judge).from_param(judge.param()) == judge
    assert dict(plan.selection().groups)["7"] == "human"


def test_a_copy_that_is_not_the_published_prompts_is_an_error(tmp_path, monkeypatch):
    import yaml

    wd = workdir(tmp_path, monkeypatch)
    (wd / "prompts.json").write_text('{"0": {"participant_name": "human-0"}}', encoding="utf-8")
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump({"sensitivity": {"published_prompts": {"file": "prompts.json"}}}))
    with pytest.raises(InputError, match=r"'sensitivity\.published_prompts\.file': .*is not the published"):
        Project.load([str(extra)], wd)
