"""Live pairwise judging in the sensitivity study, without a workflow: the pairs (the authors'
pair list, or formed from the grades, seeded), the option an answer names, the outcome shares and
the ties by position by hand, the published prompts' pairwise texts, the plan on the pair list,
the estimate, and the requests through the real openai backend against the counting fake server
(both orders: two requests per pair; a rerun sends nothing)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from fake_openai import FakeOpenAI, ServerThread
from snakerun import make_workdir

from judgelab.data.tables import write_tsv
from judgelab.errors import InputError
from judgelab.llm.pairwise import read_choice
from judgelab.llm.prompts import fill
from judgelab.llm.session import JobContext
from judgelab.studies.sensitivity.jobs import Inputs, agreement_rows, pairs_job, pairwise_judge_job
from judgelab.studies.sensitivity.pairwise import (
    PLACEHOLDERS,
    formed_pairs,
    listed_pairs,
    pairwise_labels,
    pairwise_row,
)
from judgelab.studies.sensitivity.plan import literal_template
from judgelab.studies.sensitivity.settings import PairSampling, Selection
from judgelab.wiring.facade import Project


def table(rows: list[tuple[str, str, int]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "dataset": "fx",
            "qid": [q for q, _, _ in rows],
            "query": [f"query {q}" for q, _, _ in rows],
            "docid": [d for _, d, _ in rows],
            "passage": [f"passage {d}" for _, d, _ in rows],
            "grade": pd.array([g for _, _, g in rows], dtype="Int64"),
        }
    )


GRADED = table([("1", "a", 3), ("1", "b", 2), ("1", "c", 0), ("1", "d", 0), ("2", "e", 1), ("2", "f", 1)])


def test_formed_pairs_put_a_higher_grade_against_a_lower_seeded_and_capped():
    every = formed_pairs(GRADED, 100, 0)
    # query 1: a(3) > b(2), c(0), d(0); b(2) > c, d: 5 pairs; query 2: equal grades, no pair
    assert list(zip(every["hi_docid"], every["lo_docid"])) == [
        ("a", "b"),
        ("a", "c"),
        ("a", "d"),
        ("b", "c"),
        ("b", "d"),
    ]
    assert every["setting"].tolist() == ["3-2", "3-0", "3-0", "2-0", "2-0"]
    capped = formed_pairs(GRADED, 3, 7)
    assert len(capped) == 3 and (capped["hi_grade"] > capped["lo_grade"]).all()
    assert capped.equals(formed_pairs(GRADED, 3, 7))  # seeded
    draws = {
        tuple(formed_pairs(GRADED, 3, s)["lo_docid"] + formed_pairs(GRADED, 3, s)["hi_docid"])
        for s in range(8)
    }
    assert len(draws) > 1  # the seed moves the draw


def write(path: Path, lines: list[str]) -> str:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_a_listed_pair_puts_the_higher_grade_first(tmp_path):
    listed = write(tmp_path / "pairs.txt", ["1\ttop\tmid\ta\tb", "1\tmid\ttop\tc\ta", "9\ttop\tlow\tx\ty"])
    pairs = listed_pairs(listed, GRADED)
    # the second line lists the lower passage first: swapped, with its groups; query 9 is not in the table
    assert pairs[["qid", "setting", "hi_docid", "lo_docid", "hi_grade", "lo_grade"]].values.tolist() == [
        ["1", "top-mid", "a", "b", 3, 2],
        ["1", "top-mid", "a", "c", 3, 0],
    ]


@pytest.mark.parametrize(
    "line, message",
    [
        ("2\ttop\tmid\te\tf", r"query 2: passages e and f share grade 1 \(no human order\)"),
        ("1\ttop\tmid\ta\tzz", r"query 1 passage zz is not a judged pair of the dataset table"),
        ("1\ttop\ta\tb", r"4 fields, not 5"),
    ],
)
def test_a_bad_pair_list_line_names_the_file_and_line(tmp_path, line, message):
    listed = write(tmp_path / "pairs.txt", ["1\ttop\tmid\ta\tb", line])
    with pytest.raises(InputError, match=r"pairs\.txt:2: " + message):
        listed_pairs(listed, GRADED)


@pytest.mark.parametrize(
    "answer, labels, chosen, rule",
    [
        ("A", ("A", "B"), "A", "label-only"),
        ("Passage B", ("A", "B"), "B", "option-name"),
        ("‘Passage A’.", ("A", "B"), "A", "option-name"),
        ("passage_b", ("A", "B"), None, None),  # the label is case-sensitive
        ("Answer: B", ("A", "B"), "B", "final-score"),
        ("Document 2", ("1", "2"), "2", "single-number"),
        ("Passage_B", ("A", "B"), "B", "option-name"),
        ("Passage A or Passage B", ("A", "B"), None, None),
        ("A passage about goldfish", ("A", "B"), None, None),
    ],
)
def test_the_option_an_answer_names(answer, labels, chosen, rule):
    got = read_choice(answer, labels)
    assert (got.value, got.rule) == (chosen, rule)
    if chosen is not None:
        assert answer[got.start] == chosen


def test_the_option_names_of_a_prompt():
    assert pairwise_labels("Just answer 1 or 2.\nPassage 1:\n{documentA}", "") == ("1", "2")
    assert pairwise_labels("Document 1: {documentA}\nDocument 2: {documentB}", "") == ("1", "2")
    assert pairwise_labels("Document1: {documentA}\nOutput ‘Passage A’ or ‘Passage B’", "") == ("A", "B")
    assert pairwise_labels("Query: {query}", "Answer by “A” or “B”") == ("A", "B")


def test_a_published_pairwise_text_is_filled_literally():
    text = "{'Query':{query}, 'Passage_A':{documentA}, 'Passage_B':{documentB}}"
    filled = fill(
        literal_template(text, PLACEHOLDERS), query="q {documentB}", documentA="a {x}", documentB="b"
    )
    assert filled == "{'Query':q {documentB}, 'Passage_A':a {x}, 'Passage_B':b}"


def judged(rows: list[tuple[str, str, str | None]]) -> pd.DataFrame:
    """(pair's hi docid, order, preferred) -> a live pairwise table's columns the row reads."""
    return pd.DataFrame(
        {
            "qid": "1",
            "setting": "3-0",
            "hi_docid": [h for h, _, _ in rows],
            "lo_docid": [h + "-lo" for h, _, _ in rows],
            "order": [o for _, o, _ in rows],
            "preferred": [p for _, _, p in rows],
            "parsed": [p is not None for _, _, p in rows],
        }
    )


BY_HAND = judged(
    [
        ("p1", "hi_first", "hi"),
        ("p1", "lo_first", "hi"),  # agree
        ("p2", "hi_first", "lo"),
        ("p2", "lo_first", "lo"),  # disagree
        ("p3", "hi_first", "hi"),
        ("p3", "lo_first", "lo"),  # the first passage won in both orders
        ("p4", "hi_first", "lo"),
        ("p4", "lo_first", "hi"),  # the second won in both
        ("p5", "hi_first", "lo"),
        ("p5", "lo_first", "hi"),  # the second again
        ("p6", "hi_first", "hi"),
        ("p6", "lo_first", None),  # an order not read: no outcome
    ]
)


def test_the_shares_and_the_ties_by_position_by_hand():
    row = pairwise_row(BY_HAND, 6)
    assert (row["lines"], row["dropped"], row["n"], row["coverage"]) == (6, 1, 5, 5 / 6)
    assert (row["agree"], row["disagree"], row["tie"]) == (1 / 5, 1 / 5, 3 / 5)
    assert (row["first_both"], row["second_both"]) == (1 / 5, 2 / 5)


def test_the_agreement_table_holds_the_live_pairwise_row(tmp_path):
    """Through the file a pairwise job writes, and beside a dataset table's grades."""
    path = tmp_path / "pairwise.tsv"
    write_tsv(BY_HAND.assign(label=BY_HAND["preferred"].map({"hi": "A", "lo": "B"})), path)
    data = tmp_path / "fx.tsv"
    write_tsv(GRADED, data)
    selection = Selection((), (), ("fx",), live=(("fx", "m", "p", "pairwise"),), groups=(("p", "human"),))
    df = agreement_rows(Inputs(tables=[str(data)], live=[str(path)]), selection)
    row = df.iloc[0]
    assert (row["source"], row["type"], row["n"], row["dropped"]) == ("live", "pairwise", 5, 1)
    assert (row["agree"], row["tie"], row["first_both"], row["second_both"]) == (0.2, 0.6, 0.2, 0.4)


def workdir(tmp_path: Path, monkeypatch, extra: dict | None = None) -> tuple[Path, list[str]]:
    wd = make_workdir(tmp_path / "wd", "sensitivity")
    monkeypatch.chdir(wd)
    if not extra:
        return wd, []
    (wd / "extra.yaml").write_text(yaml.safe_dump(extra), encoding="utf-8")
    return wd, [str(wd / "extra.yaml")]


@pytest.mark.parametrize(
    "text, labels, message",
    [
        ("Query: {query}\nA: {documentA}", None, r"documentB"),
        ("Q {query} A {documentA} B {documentB}", ["A", "B", "C"], r"declares labels \['A', 'B', 'C'\]"),
    ],
)
def test_a_bad_pairwise_template_names_the_key(tmp_path, monkeypatch, text, labels, message):
    spec = {"kind": "sensitivity_pairwise", "template": text} | ({"labels": labels} if labels else {})
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    prompts = {"bad": {"pairwise": str(tmp_path / "bad.yaml")}}
    wd, extra = workdir(tmp_path, monkeypatch, {"sensitivity": {"prompts": prompts}})
    with pytest.raises(InputError, match=message):
        Project.load(extra, wd)
    with pytest.raises(InputError, match=r"sensitivity\.prompts\.bad\.pairwise"):
        Project.load(extra, wd)


#: the fixture's table as the pair list of a published dataset: fx stands in for DL21's qrels
LISTED = {"sensitivity": {"published": {"types": [], "datasets": {"dl21": "fx"}, "mirror": None}}}


def listed_workdir(tmp_path: Path, monkeypatch) -> tuple[Path, list[str]]:
    """The test workflow with :data:`LISTED`, its rankings of DL21 runs left out (no published
    DL21 labels remain to rank them by)."""
    wd, extra = workdir(tmp_path, monkeypatch, LISTED)
    cfg = yaml.safe_load((wd / "config" / "config.yaml").read_text(encoding="utf-8"))
    del cfg["sensitivity"]["rankings"]
    (wd / "config" / "config.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return wd, extra


def test_a_dataset_a_published_one_maps_to_takes_its_pair_list(tmp_path, monkeypatch):
    wd, extra = listed_workdir(tmp_path, monkeypatch)
    plan = Project.load(extra, wd).plan("sensitivity")
    assert plan.judgments == [] and [f.file for f in plan.support] == ["data/pairwise/pairs_dl21.txt"]
    assert plan.pair_list_input("fx") == ["results/sensitivity/published/data/pairwise/pairs_dl21.txt"]
    assert plan.downloaded() == plan.pair_list_input("fx")


def test_the_estimate_of_a_pair_list_not_here_yet(tmp_path, monkeypatch):
    from judgelab.wiring.estimate import estimate

    wd, extra = listed_workdir(tmp_path, monkeypatch)
    table, notes = estimate(Project.load(extra, wd), directory=wd)
    row = table[table["stage"] == "pairwise"].iloc[0]
    # the DL21 list's 1,590 pairs x 2 orders stand in, flagged not exact
    assert (row["calls"], bool(row["exact"])) == (3180, False)
    assert any("pairs_dl21.txt is not here yet" in n for n in notes)


@pytest.mark.slow  # a server thread and an estimate (about 2 s)
def test_the_fake_server_gets_both_orders_once(tmp_path, monkeypatch):
    """The real openai backend against the counting fake server: two requests per pair (its
    answers, a digit, read with the options 1/2), the same counted by the estimate; a rerun
    sends nothing and reads the same table from the cache."""
    from judgelab.wiring.estimate import estimate

    (tmp_path / "numbered.yaml").write_text(
        yaml.safe_dump(
            {
                "kind": "sensitivity_pairwise",
                "labels": ["1", "2"],
                "template": "Which is more relevant to {query}? 1: {documentA} 2: {documentB}",
            }
        ),
        encoding="utf-8",
    )
    server = FakeOpenAI()
    with ServerThread(server.app()) as srv:
        model = {"backend": "openai", "model": "gpt-4o", "base_url": srv.base_url, "api_key_env": None}
        config = {
            "models": {"fake": model | {"max_retries": 0, "timeout": 5}},
            "min_coverage": 0.0,
            "sensitivity": {
                "judges": ["fake"],
                "prompts": {"numbered": {"pairwise": str(tmp_path / "numbered.yaml")}},
                "pairwise": {"per_query": 3},
            },
        }
        wd, extra = workdir(tmp_path, monkeypatch, config)
        project = Project.load(extra, wd)
        plan = project.plan("sensitivity")
        judge = plan.judge("fake", "numbered", "pairwise")
        assert judge.answer == "parse" and judge.labels == ("1", "2")
        data = wd / "fx.tsv"
        write_tsv(GRADED, data)
        compared = wd / "pairs.tsv"
        pairs = pairs_job(str(data), str(compared), PairSampling(3, 0))
        cache = str(wd / "cache.sqlite")
        out = pairwise_judge_job(
            str(data), str(compared), str(wd / "j.tsv"), judge, JobContext(cache, desc="t")
        )
        assert server.arrivals == len(out) == 2 * len(pairs) == 6
        # each pair once in each order, the orders' prompts different
        assert (
            sorted(out.groupby(["hi_docid", "lo_docid"])["order"].apply(sorted).tolist())
            == [["hi_first", "lo_first"]] * 3
        )
        assert len(server.served) == 6 and set(server.served.values()) == {1}
        # the fake answers "0".."3": "1" and "2" are options, the others are not read
        read = out[out["parsed"]]
        assert set(read["label"]) <= {"1", "2"} and (out["answer"].isin(["1", "2"]) == out["parsed"]).all()
        assert (
            read["preferred"]
            == read.apply(
                lambda r: (
                    "hi"
                    if (r["passage_1"] if r["label"] == "1" else r["passage_2"]) == r["hi_docid"]
                    else "lo"
                ),
                axis=1,
            )
        ).all()
        again = pairwise_judge_job(
            str(data), str(compared), str(wd / "k.tsv"), judge, JobContext(cache, desc="t")
        )
        assert server.arrivals == 6 and again["cache_hit"].all()
        assert again.drop(columns="cache_hit").equals(out.drop(columns="cache_hit"))
        # the estimate builds the same requests: on this table the job's 6 are cached (the test
        # config's prompt `short` has a pairwise template too: 6 more, not sent)
        est, _ = estimate(project, directory=wd, tables={"fx": str(data)}, cache_path=cache)
        row = est[est["stage"] == "pairwise"].iloc[0]
        assert (row["jobs"], row["calls"], row["cached"], row["to_send"]) == (2, 12, 6, 6)


def test_the_authors_pairwise_prompts(tmp_path, monkeypatch, shared_data):
    """Every pairwise text of the published prompts.json: 23's (no placeholder) and UMBRELA's (none
    given) left out by id; the options 1/2 for the two prompts that number the passages and name
    no Passage A (0: "Just answer 1 or 2", 6: "Document 1", "Document 2"), A/B for the others."""
    spec = {"file": str(shared_data / "prompt-sensitivity" / "prompts.json"), "types": ["pairwise"]}
    wd, extra = workdir(tmp_path, monkeypatch, {"sensitivity": {"published_prompts": spec}})
    project = Project.load(extra, wd)
    plan = project.plan("sensitivity")
    authors = [p for p in plan.live_prompts if p.isdigit()]
    assert sorted(set(map(str, range(33))) - set(authors), key=int) == ["23", "32"]
    assert [n for n in project.notices if "pairwise" in n] == [
        f"sensitivity: published prompt {p}'s pairwise text has no {{query}} or {{documentA}} or "
        "{documentB}: left out for pairwise"
        for p in ("23", "32")
    ]
    numbered = sorted((p for p in authors if plan.live_prompts[p].pair_labels == ("1", "2")), key=int)
    assert numbered == ["0", "6"]
    judge = plan.judge("smollm2", "5", "pairwise")
    assert judge.placement == "system" and judge.labels == ("A", "B")
    assert "{documentA}" in judge.template and "{{'Query'" in judge.template
