"""Published judges used by name (judgelab.data.published, Project.published_groups): a judge or a
group named in `published_judges.use` or a study's `imported_judges` becomes an imported judge
whose file is the download job's output, read with its dropped lines counted."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import ROOT, write_lines
from sklearn.metrics import cohen_kappa_score

from judgelab.data.imported import SourcePairs, judge_lines, read_judge
from judgelab.data.readers import read_qrels
from judgelab.errors import InputError
from judgelab.wiring.facade import Project

RUNS = {"dl21": {"source": "systems"}}


def project(**sections) -> Project:
    """A run on the bundled DL19 and DL21 samples with no live judge, plus ``sections``."""
    cfg = {
        "datasets": {
            "dl19": {"source": "sample", "format": "trec"},
            "dl21": {"source": "sample", "format": "trec"},
        },
        "models": {"smollm2": {"backend": "local"}},
        "judges": [],
        "peras": {"enabled": False},
        "overrating": {"enabled": False},
        "perturbations": {"enabled": False},
        "simulation": {"enabled": False},
        "ranking": {"enabled": False},
    }
    for k, v in sections.items():
        if isinstance(v, dict) and isinstance(cfg.get(k), dict):
            cfg[k] = {**cfg[k], **v}
        else:
            cfg[k] = v
    return Project(cfg, ROOT)


def test_a_judge_named_in_use_becomes_an_imported_judge_read_from_its_download():
    p = project(published_judges={"use": ["umbrela-zeroshot-gpt-4"]})
    judge = p.imported["umbrela-zeroshot-gpt-4"]
    assert judge.published and judge.scale == "graded"
    assert judge.datasets == ("dl19", "dl21")  # its dl20 file: no such dataset in the config
    assert p.imported_file("umbrela-zeroshot-gpt-4", "dl21", "imported", "default") == (
        "results/published/umbrela-zeroshot-gpt-4/dl21.txt"
    )
    reading = p.import_reading("umbrela-zeroshot-gpt-4", "dl21")
    assert reading.drop and reading.scale == "graded"
    download = p.published_download("umbrela-zeroshot-gpt-4", "dl21")
    assert download["url"].endswith("/Methods/Umbrela_zeroshot/gpt4/umbrella_gpt-4_zeroshot_dl21.txt")
    assert len(download["sha256"]) == 64 and "mirror" not in download  # moving a mirror reruns nothing
    assert (download["source"], download["file"]) == (
        "narabzad-2024",
        "Methods/Umbrela_zeroshot/gpt4/umbrella_gpt-4_zeroshot_dl21.txt",
    )


def test_a_group_in_a_study_list_takes_its_judges_of_the_studys_scales():
    p = project(ranking={"enabled": True, "runs": RUNS, "imported_judges": ["narabzad-2024"]})
    groups = p.published_groups["narabzad-2024"]
    # the source's label judges, and (the ranking study takes scores as gains) its score judges
    assert "umbrela-zeroshot-gpt-4" in groups and "binary-gpt-4o" in groups
    assert "exam-graded-max-gpt-4" in groups and "autonuggetizer-weighted-gpt-4o" in groups
    # the ranking study compares grades and scores: the group gives it no binary judge
    ranked = p.plan("ranking")
    assert "umbrela-zeroshot-gpt-4" in ranked.imported and "binary-gpt-4o" not in ranked.imported
    assert set(ranked.score_judges) == {n for n in ranked.imported if n != "umbrela-zeroshot-gpt-4"}
    assert ranked.score_judges["autonuggetizer-weighted-gpt-4o"] == (0.0, 1.66667)


def test_errors_name_the_key():
    cases = [
        ({"published_judges": {"use": ["exam-graded-max-gpt-4"]}}, "published_judges.use[0]", "gives scores"),
        (
            {"published_judges": {"use": ["llmjudge-Olz-exp"]}},
            "published_judges.use[0]",
            "none of the config",
        ),
        ({"published_judges": {"use": ["no-such-judge"]}}, "published_judges.use[0]", "groups: ["),
        ({"published_judges": {"use": ["autonuggetizer-vital"]}}, "published_judges.use[0]", "gives scores"),
        (
            {"ranking": {"enabled": True, "runs": RUNS, "imported_judges": ["binary-gpt-4"]}},
            "ranking.imported_judges[0]",
            "binary scale",
        ),
        (
            {"ranking": {"enabled": True, "runs": RUNS, "imported_judges": ["binary"]}},
            "ranking.imported_judges[0]",
            "no judge of the group 'binary'",
        ),
    ]
    for sections, key, words in cases:
        with pytest.raises(InputError) as err:
            p = project(**sections)
            _ = p.imported
            _ = p.plan("ranking").imported
        assert key in str(err.value) and words in str(err.value), (sections, str(err.value))


def test_a_config_imported_judge_keeps_its_name_before_the_catalog(tmp_path):
    f = write_lines(tmp_path, ["1 0 a 1"])
    p = project(imported_judges={"binary": {"path": str(f), "datasets": ["dl21"], "scale": "graded"}})
    p2 = project(
        imported_judges={"binary": {"path": str(f), "datasets": ["dl21"], "scale": "graded"}},
        ranking={"enabled": True, "runs": RUNS, "imported_judges": ["binary"]},
    )
    assert not p.imported["binary"].published
    assert p2.published_groups == {}  # `binary` is the config's judge, not the catalog's group


def test_dropped_lines_are_counted_and_kept_lines_read_as_before(tmp_path):
    source = SourcePairs(frozenset({("q1", "a"), ("q1", "b"), ("q2", "c")}), frozenset({"q1", "q2"}))
    lines = ["q1 0 a 3", "q1 0 b 5", "Q1 0 a 2", "q9 0 z 1", "q2 0 c 10", "q2 0 c 10"]
    f = write_lines(tmp_path, lines)
    every = judge_lines(f, source, scale="graded", drop=True)
    assert every[["qid", "docid", "label"]].values.tolist() == [["q1", "a", 3]]
    assert every.attrs == {"unknown": 2, "out_of_scale": 3}
    with pytest.raises(InputError, match="outside"):  # an imported judge's file: an error, as before
        judge_lines(f, source, scale="graded")
    pairs = pd.DataFrame({"dataset": "d", "qid": ["q1", "q1"], "docid": ["a", "b"]})
    counts = read_judge(f, pairs, source=source, scale="graded", drop=True).counts
    assert (counts.labelled, counts.in_selection, counts.unlabelled) == (1, 1, 1)
    assert (counts.unknown, counts.out_of_scale) == (2, 3)


def test_an_empty_or_all_dropped_file_is_an_error_naming_it(tmp_path):
    source = SourcePairs(frozenset({("q1", "a")}), frozenset({"q1"}))
    empty = write_lines(tmp_path, [], "empty.txt")
    other = write_lines(tmp_path, ["q7 0 x 1"], "other.txt")
    for f in (empty, other):
        with pytest.raises(InputError) as err:
            judge_lines(f, source, scale="graded", drop=True)
        assert str(f) in str(err.value) and "no label of this file is kept" in str(err.value)
    twice = write_lines(tmp_path, ["q1 0 a 1", "q1 0 a 2"], "twice.txt")
    with pytest.raises(InputError, match="twice"):
        judge_lines(twice, source, scale="graded", drop=True)


def test_llmjudge_submissions_through_the_catalog_read_as_the_imported_path(shared_data):
    """Every LLMJudge submission read as a published judge (drop) against the test qrels: the
    labels of a clean file equal the imported-judge reading's, so kappa is the same; the two
    files with labels outside 0-3 lose exactly those lines (RMITIR-llama70B two 5s, h2oloo-zeroshot2
    one 10), and keep every other pair of the 4,423."""
    root = shared_data / "published-judges" / "llmjudge-2024"
    qrels_path = shared_data / "llmjudge" / "llmjudge_test_qrel_idx.txt"
    human = {(q.qid, q.docid): q.grade for q in read_qrels(qrels_path)}
    source = SourcePairs(frozenset(human), frozenset(q for q, _ in human))
    catalog = project().catalog
    judges = catalog.groups["llmjudge-2024"]
    assert len(judges) == 33
    dropped = {}
    for name in judges:
        f = root / catalog.judges[name].files["llmjudge"].file
        every = judge_lines(f, source, scale="graded", drop=True)
        if every.attrs["unknown"] or every.attrs["out_of_scale"]:
            dropped[name] = (every.attrs["unknown"], every.attrs["out_of_scale"])
            assert len(every) + every.attrs["out_of_scale"] == len(human)
            continue
        plain = judge_lines(f, source, scale="graded")
        assert plain[["qid", "docid", "label"]].equals(every[["qid", "docid", "label"]])
        truth = [human[(q, d)] for q, d in zip(every["qid"], every["docid"])]
        assert len(truth) == len(human) == 4423
        kappa = cohen_kappa_score(truth, every["label"].astype(int).tolist())
        assert -1 <= kappa <= 1
    assert dropped == {"llmjudge-RMITIR-llama70B": (0, 2), "llmjudge-h2oloo-zeroshot2": (0, 1)}


def test_the_llmjudge_development_split_is_not_the_submissions_dataset():
    """LLMJudge's submissions label the test qrels: a config's `llmjudge` of `split: dev` (the PERAS
    paper's Table 4 set) is not theirs - naming one is an error naming the key."""
    with pytest.raises(InputError) as err:
        p = project(
            datasets={"llmjudge": {"source": "download", "format": "llmjudge", "split": "dev"}},
            published_judges={"use": ["llmjudge-Olz-exp"]},
        )
        _ = p.imported
    assert "published_judges.use[0]" in str(err.value) and "none of the config's datasets" in str(err.value)


#: What LLMJudge's organisers printed for the submissions (llm4eval/LLMJudge-benchmark,
#: codes/0-corr-analysis.ipynb at commit 86f57f60, the notebook's saved output, 6 decimals):
#: ordinal Krippendorff's alpha over the grades 0-3, and their column "kappa 01|23" - which holds
#: Krippendorff's alpha again, of both sides binarised at 2 (the notebook's Cohen's kappa lines are
#: commented out; it appends the alpha under every threshold). Every submission of ours the output
#: shows (it elides the rest).
LLMJUDGE_PRINTED = {
    "h2oloo-fewself": (0.495764, 0.428016),
    "h2oloo-zeroshot1": (0.481175, 0.385039),
    "h2oloo-zeroshot2": (0.389818, 0.317459),
    "TREMA-rubric0": (0.103604, -0.089472),
    "TREMA-sumdecompose": (0.392616, 0.343022),
    "willia-umbrela1": (0.491793, 0.393941),
    "willia-umbrela2": (0.455608, 0.329797),
    "willia-umbrela3": (0.453547, 0.331441),
}


def test_llmjudge_submissions_agree_with_what_the_organisers_printed(shared_data):
    """The judges stage's numbers (``agreement_rows``, the published files read with drop) equal
    the organisers' printed alphas (graded, and binarised at 2) at their rounding - but for the one file
    with a label outside 0-3: h2oloo-zeroshot2 labels one pair 10, which their notebook clips to
    3 and the catalog drops (a value outside the declared scale is no label); clipping it as
    they do gives their numbers."""
    from judgelab.analysis.standing import agreement_rows

    root = shared_data / "published-judges" / "llmjudge-2024" / "scores"
    qrels_path = shared_data / "llmjudge" / "llmjudge_test_qrel_idx.txt"
    human = {(q.qid, q.docid): q.grade for q in read_qrels(qrels_path)}
    pairs = pd.DataFrame([(q, d, g) for (q, d), g in human.items()], columns=["qid", "docid", "grade"])
    source = SourcePairs(frozenset(human), frozenset(q for q, _ in human))
    got = {}
    for run, (alpha, binary_alpha) in LLMJUDGE_PRINTED.items():
        read = judge_lines(root / f"{run}.txt", source, scale="graded", drop=True)
        labels = {run: read[["qid", "docid", "label"]]}
        binary = {run: read[["qid", "docid"]].assign(label=(read["label"].astype(int) >= 2).astype(int))}
        graded = agreement_rows(pairs, labels).iloc[0]
        binarised = agreement_rows(pairs, binary, {run: "binary"}).iloc[0]
        got[run] = (round(graded["alpha"], 6), round(binarised["alpha"], 6))
        if read.attrs["out_of_scale"]:
            assert got[run] != (alpha, binary_alpha)  # the dropped pair moves the values
            lines = [line.split() for line in (root / f"{run}.txt").read_text().split("\n") if line.strip()]
            every = pd.DataFrame(
                [(q, d, min(3, max(0, int(v)))) for q, _, d, v in lines], columns=["qid", "docid", "label"]
            )
            binary_every = every.assign(label=(every["label"] >= 2).astype(int))
            graded = agreement_rows(pairs, {run: every}).iloc[0]
            binarised = agreement_rows(pairs, {run: binary_every}, {run: "binary"}).iloc[0]
            got[run] = (round(graded["alpha"], 6), round(binarised["alpha"], 6))
    assert got == LLMJUDGE_PRINTED
