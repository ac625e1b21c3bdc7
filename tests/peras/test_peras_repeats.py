"""PERAS self-consistency (``peras.repeats``): a judge that parses asks every request k times as k
cached requests, through the real OpenAI request building against the counting fake server; the
embedded model read from the logits makes one call per pair and draws its k labels; the plan's
check, jobs and estimate; the consistency table of hand-made repeats."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import ROOT
from fake_openai import FakeOpenAI, ServerThread
from test_api_backends import openai_spec, sample_pairs

from judgelab.cache.store import RequestCache
from judgelab.data.tables import read_judgments, write_dataset
from judgelab.errors import InputError
from judgelab.llm.backends import make_backend
from judgelab.llm.backends.base import Request
from judgelab.llm.judge import Judge
from judgelab.llm.prompts import load_template
from judgelab.llm.session import JobContext
from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import consistency_job, judge_job, read_tsv_repeats, repeats_job
from judgelab.wiring.estimate import estimate
from judgelab.wiring.facade import Project


def cache_rows(path) -> int:
    with RequestCache(path) as cache:
        return cache.stats()["entries"]


def judge_then_repeat(tmp_path, judge: Judge, samples: int, n: int = 3) -> pd.DataFrame:
    table = tmp_path / "pairs.tsv"
    write_dataset(sample_pairs().head(n), table)
    context = JobContext(str(tmp_path / "cache" / "requests.sqlite"))
    outputs = {"repeats": str(tmp_path / f"r{samples}.tsv"), "majority": str(tmp_path / f"m{samples}.tsv")}
    with script_logging(str(tmp_path / "jobs.log")):
        judge_job(str(table), str(tmp_path / "j.tsv"), judge, context.named("judge"))
        repeats_job(str(table), str(tmp_path / "j.tsv"), outputs, judge, samples, context.named("repeats"))
    return read_tsv_repeats(outputs["repeats"])


def test_a_parsing_judge_asks_k_cached_samples_and_k_can_grow(tmp_path):
    fake = FakeOpenAI()
    with ServerThread(fake.app()) as srv:
        judge = Judge(
            "fake",
            openai_spec(srv.base_url, temperature=0.7),
            template=load_template("peras/wo_cot"),
            max_tokens=8,
        )
        got = judge_then_repeat(tmp_path, judge, 3)
        assert fake.arrivals == 9 and set(fake.served.values()) == {3}  # 3 pairs x 3 samples
        assert cache_rows(tmp_path / "cache" / "requests.sqlite") == 9  # 3 distinct entries per request
        assert sorted(got["sample"].unique()) == [0, 1, 2] and len(got) == 9
        assert not got.loc[got["sample"] > 0, "cache_hit"].astype(bool).any()
        # samples 1 and 2 go to the client together (one provider batch in batch mode)
        assert "repeats: 6 requests, 0 cached, 6 to send" in (tmp_path / "jobs.log").read_text()
        judge_then_repeat(tmp_path, judge, 3)
        assert fake.arrivals == 9  # a rerun sends nothing
        got = judge_then_repeat(tmp_path, judge, 4)
        assert fake.arrivals == 12 and set(fake.served.values()) == {4}  # one more request per pair
        assert got.loc[got["sample"] < 3, "cache_hit"].astype(bool).all()
    # the fake server answers a prompt the same every time: no flip, the majority is the label
    majority = read_judgments(tmp_path / "m4.tsv")
    assert majority["label"].tolist() == read_judgments(tmp_path / "j.tsv")["label"].tolist()


@pytest.mark.slow
def test_the_embedded_model_draws_k_labels_from_one_call_per_pair(tmp_path):
    judge = Judge(
        "smollm2",
        {"backend": "local", "temperature": 1.0},
        template="Query: {query}\nPassage: {document}\nRelevance grade (0-3):",  # short: cheap to evaluate
        max_tokens=8,
        answer="logits",
    )
    first = judge_then_repeat(tmp_path, judge, 3, n=2)
    assert cache_rows(tmp_path / "cache" / "requests.sqlite") == 2  # the judge job's, one per pair
    assert (first["parse_rule"] == "draw").all() and set(first["label"]) <= {0, 1, 2, 3}
    outputs = {"repeats": str(tmp_path / "again.tsv"), "majority": str(tmp_path / "again-m.tsv")}
    repeats_job(str(tmp_path / "pairs.tsv"), str(tmp_path / "j.tsv"), outputs, judge, 3)  # no context
    again = read_tsv_repeats(outputs["repeats"])
    assert again["label"].tolist() == first["label"].tolist()  # seeded: the same draws
    # answers read as text: at a temperature above 0 the embedded model samples its answer tokens,
    # seeded by the request and its sample index (the same sample draws the same answer)
    backend = make_backend({"backend": "local", "temperature": 1.0}, "smollm2")
    try:
        asked = [
            Request.from_messages([{"role": "user", "content": "Is the sky blue?"}], 6, sample=s)
            for s in (0, 1)
        ]
        drawn = [backend.complete(r).text for r in (*asked, *asked)]
        assert drawn[:2] == drawn[2:] and drawn[0] != drawn[1]
        backend.temperature = 0.0  # greedy: every sample the same answer
        assert backend.complete(asked[0]).text == backend.complete(asked[1]).text
    finally:
        backend.close()


def load(tmp_path, monkeypatch, models: dict, peras: dict) -> Project:
    monkeypatch.chdir(ROOT)
    cfg = {
        "models": models,
        "judges": list(models),
        "datasets": {"dl19": {"source": "sample", "format": "trec"}},
        "personas": {"include": ["default"], "generation": {"enabled": False}},
        "peras": {
            "datasets": ["dl19"],
            "templates": {"wo_cot": {"template": "peras/wo_cot", "max_tokens": 8}},
            "classifier": {"dataset": None},
            **peras,
        },
        "overrating": {"enabled": False},
        "perturbations": {"enabled": False},
        "simulation": {"enabled": False},
        "ranking": {"enabled": False},
    }
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(cfg))
    return Project.load([f], ROOT)


def test_repeats_at_temperature_0_on_a_logits_judge_is_an_error_naming_the_key(tmp_path, monkeypatch):
    with pytest.raises(InputError, match=r"peras\.repeats.*models\.tiny\.temperature"):
        load(tmp_path, monkeypatch, {"tiny": {"backend": "local"}}, {"repeats": 3})
    # above 0, or parsing the answers, it runs (the config is checked when loaded); k = 1 schedules
    # no repeats job
    warm = load(tmp_path, monkeypatch, {"tiny": {"backend": "local", "temperature": 0.5}}, {"repeats": 3})
    cells = warm.plan("peras").repeat_cells()
    assert cells and {c["reading"] for c in cells} == {"logits"}
    assert not [j for j in warm.llm_jobs() if j.rule == "peras_repeats"]  # draws call nothing
    parse = load(tmp_path, monkeypatch, {"tiny": {"backend": "local"}}, {"repeats": 3, "answer": "parse"})
    assert len([j for j in parse.llm_jobs() if j.rule == "peras_repeats"]) == len(cells)
    one = load(tmp_path, monkeypatch, {"tiny": {"backend": "local"}}, {})
    assert one.plan("peras").repeat_cells() == [] and not any(
        "consistency" in t for t in one.targets("peras")
    )


def test_a_temperature_that_would_not_be_sent_is_an_error(tmp_path, monkeypatch):
    gpt = {"backend": "openai", "model": "o3", "send_sampling": False, "temperature": 0.7}
    with pytest.raises(InputError, match=r"models\.gpt\.temperature"):
        load(tmp_path, monkeypatch, {"gpt": gpt}, {})


def test_the_estimate_counts_k_requests_per_pair_of_a_parsing_judge(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    gpt = {"backend": "openai", "model": "gpt-4o-mini", "temperature": 0.7}
    project = load(tmp_path, monkeypatch, {"gpt": gpt}, {"repeats": 3})
    cache = tmp_path / "none.sqlite"  # nothing cached
    table, _ = estimate(project, directory=ROOT, cache_path=cache)
    rows = table.set_index("stage")
    n = rows.loc["peras_judge", "calls"]
    assert n > 0
    assert rows.loc["peras_repeats", "calls"] == 2 * n  # samples 1 and 2: pairs x k in all
    assert rows.loc["peras_repeats", "output_tokens_max"] == 2 * n * 8
    local = load(tmp_path, monkeypatch, {"tiny": {"backend": "local", "temperature": 0.7}}, {"repeats": 3})
    stages = set(estimate(local, directory=ROOT, cache_path=cache)[0]["stage"])
    assert "peras_repeats" not in stages  # logits: the judge job's one call per pair


def test_the_consistency_table_of_hand_made_repeats(tmp_path):
    pairs = tmp_path / "pairs.tsv"
    table = sample_pairs().head(4)
    write_dataset(table, pairs)
    grades = table["grade"].astype(int).tolist()
    # four pairs x three repeats: pair 0 agrees with people every time, pair 1 flips, pairs 2-3 are
    # right twice of three
    labels = [[grades[0]] * 3, [0, 3, 3], [grades[2], grades[2], (grades[2] + 1) % 4], [grades[3]] * 2 + [0]]
    rows = [
        {"dataset": "dl19", "qid": q, "docid": d, "sample": s, "label": v}
        for (q, d), ls in zip(zip(table["qid"], table["docid"]), labels)
        for s, v in enumerate(ls)
    ]
    rep = tmp_path / "rep.tsv"
    pd.DataFrame(rows).to_csv(rep, sep="\t", index=False)
    maj = tmp_path / "maj.tsv"
    majority = [grades[0], 3, grades[2], grades[3]]
    pd.DataFrame(
        {"dataset": "dl19", "qid": table["qid"], "docid": table["docid"], "label": majority, "answer": ""}
    ).to_csv(maj, sep="\t", index=False)
    cell = {"dataset": "dl19", "model": "m", "template": "t", "persona": "default", "reading": "parse"}
    out = {"tsv": str(tmp_path / "c.tsv"), "md": str(tmp_path / "c.md")}
    df = consistency_job([str(pairs)], [str(rep)], [str(maj)], [cell], out)
    row = df.iloc[0]
    flips = sum(len(set(ls)) > 1 for ls in labels)
    assert (row.repeats, row.n_pairs, row.n_complete) == (3, 4, 4)
    assert row.flip_rate == pytest.approx(flips / 4)
    assert row.majority_n_labelled == 4
    assert "flip_rate" in (tmp_path / "c.md").read_text()


def test_the_majority_of_k_is_one_more_judge_of_the_metrics_tables(tmp_path, monkeypatch):
    """With k > 1 every repeated judge x template has a majority judge, ``<judge>+majority@<k>``,
    right after it in the metrics groups (its majority tables, no confidence); at k = 1 the groups
    are PERAS's as they were."""
    one = load(tmp_path, monkeypatch, {"tiny": {"backend": "local"}}, {})
    plan = one.plan("peras")
    assert plan.majority_judges == {} and plan.metric_groups == plan.groups
    three = load(tmp_path, monkeypatch, {"tiny": {"backend": "local", "temperature": 0.7}}, {"repeats": 3})
    plan = three.plan("peras")
    assert plan.majority_judges == {"tiny+majority@3": "tiny"}
    twins = [[g, (g[0], "tiny+majority@3", g[2])] for g in plan.groups]
    assert list(plan.metric_groups) == [g for pair in twins for g in pair]  # each after its judge's
    assert plan.metric_groups[("dl19", "tiny+majority@3", "wo_cot")] == ["default"]
    judged = plan.metric_inputs("judgments", "dl19", "tiny+majority@3", "wo_cot")
    assert judged == [
        three.path("repeats_majority", dataset="dl19", model="tiny", template="wo_cot", persona="default")
    ]
    assert plan.metric_inputs("confidence", "dl19", "tiny+majority@3", "wo_cot") == []
    assert plan.group("dl19", "tiny+majority@3", "wo_cot").personas == ("default",)
    # the majority's name is no other judge's
    with pytest.raises(InputError, match=r"peras\.repeats.*'tiny\+majority@3'"):
        load(
            tmp_path,
            monkeypatch,
            {"tiny": {"backend": "local", "temperature": 0.7}, "tiny+majority@3": {"backend": "local"}},
            {"repeats": 3},
        )


def test_the_majority_judge_row_and_its_place_in_table_7_by_hand(tmp_path):
    """A hand-made majority table (ties to the lower label, as committees) as a group of its own:
    its kappa is Cohen's, (p_o - p_e) / (1 - p_e) counted here, on the pairs the majority labelled;
    it states no confidence (RO, RU, HMR n/a) and Table 7 lists it as a judge of its own after the
    judge it votes for."""
    from collections import Counter

    from judgelab.analysis.consistency import majority, wide_labels
    from judgelab.data.tables import label_tables, write_tsv
    from judgelab.studies.peras.jobs import aggregate_metrics_job, group_metrics_job
    from judgelab.studies.peras.settings import Group
    from judgelab.studies.peras.tables import wide_table

    table = sample_pairs().head(6)
    pairs = tmp_path / "pairs.tsv"
    write_dataset(table, pairs)
    # three repeats per pair; pair 3 ties 1-1 with a missing third (lower label: 0), pair 5 has one
    # label of three (below the quorum of 2: unlabelled)
    labels = [[3, 3, 2], [0, 1, 0], [2, 2, 2], [0, 1, None], [1, 2, 1], [None, None, 3]]
    rows = [
        {"dataset": "dl19", "qid": q, "docid": d, "sample": s, "label": v}
        for (q, d), ls in zip(zip(table["qid"], table["docid"]), labels)
        for s, v in enumerate(ls)
    ]
    voted = majority(wide_labels(pd.DataFrame(rows).astype({"label": "Int64"})))
    expected = [3, 0, 2, 0, 1, None]
    by_pair = dict(zip(zip(voted["qid"], voted["docid"]), voted["label"]))
    got = [by_pair[(str(q), str(d))] for q, d in zip(table["qid"], table["docid"])]
    assert [None if pd.isna(v) else int(v) for v in got] == expected
    merged = table[["dataset", "qid", "docid"]].assign(
        label=pd.array(expected, dtype="Int64"), confidence=pd.array([pd.NA] * 6, dtype="Float64")
    )
    maj, _ = label_tables(merged, "majority of 3")
    write_tsv(maj, tmp_path / "maj.tsv")
    group = Group("dl19", "m+majority@3", "wo_cot", ("default",))
    out = tmp_path / "g.tsv"
    row = group_metrics_job(str(pairs), [str(tmp_path / "maj.tsv")], [], group, str(out)).iloc[0]
    grades = table["grade"].astype(int).tolist()
    kept = [i for i, v in enumerate(expected) if v is not None]
    a, b = [grades[i] for i in kept], [expected[i] for i in kept]
    n, ca, cb = len(kept), Counter(a), Counter(b)
    p_o = sum(x == y for x, y in zip(a, b)) / n
    p_e = sum(ca[g] * cb[g] for g in range(4)) / n**2
    want = (p_o - p_e) / (1 - p_e)
    assert row["kappa"] == pytest.approx(want)
    assert (row["n_pairs"], row["n_parsed"], row["n_confidence"]) == (6, 5, 0)
    assert pd.isna(row["RO"]) and pd.isna(row["HMR"])
    # beside the judge's own group, in the order of the groups: Table 7 lists both
    judge = tmp_path / "judge.tsv"
    pd.DataFrame(
        [
            {
                **group.ids,
                "model": "m",
                "persona": "default",
                **{k: row[k] for k in row.index if k not in group.ids and k != "persona"},
            }
        ]
    ).to_csv(judge, sep="\t", index=False)
    aggregate_metrics_job([str(judge), str(out)], str(tmp_path / "metrics.tsv"))
    wide = wide_table(pd.read_csv(tmp_path / "metrics.tsv", sep="\t"), "table7")
    assert wide.rows == [("m", "default"), ("m+majority@3", "default")]
    assert wide.values[("m+majority@3", "default", "dl19", "wo_cot", "kappa")] == pytest.approx(want)
