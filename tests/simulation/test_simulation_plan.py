"""The simulation study's plan (judgelab.studies.simulation): cells and skipped demonstration
types, tracked params per cell, config checks naming the full key, and the requests
`judgelab estimate` counts (cache-aware round 2, the approximate PandaLM stand-in, the paper
config on Bedrock)."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import ROOT

from judgelab.cache.keys import request_key
from judgelab.cache.store import RequestCache
from judgelab.errors import InputError
from judgelab.llm.backends import make_backend
from judgelab.llm.backends.base import Completion
from judgelab.llm.client import cache_request
from judgelab.studies.simulation.cascade import CascadeSettings, build_requests, plan_evaluators
from judgelab.studies.simulation.data import load_records
from judgelab.studies.simulation.prompt import SimulationPrompt
from judgelab.studies.simulation.settings import CascadeJudge
from judgelab.studies.simulation.splits import make_splits
from judgelab.wiring.estimate import estimate
from judgelab.wiring.facade import Project

GPT = {"backend": "openai", "model": "gpt-4o-mini", "prices": {"input": 0.15, "output": 0.60}}
SAMPLE = ROOT / "resources" / "sample" / "pandalm" / "testset-v1.json"


def write_config(folder, simulation: dict, models: dict | None = None, judges=("gpt",)) -> None:
    cfg = {
        "results": "results",
        "cache": "cache/requests.sqlite",
        "datasets": {"dl19": {"source": "sample", "format": "trec"}},
        "models": models or {"gpt": GPT},
        "judges": list(judges),
        "peras": {"enabled": False},
        "simulation": {"enabled": True, **simulation},
    }
    (folder / "config").mkdir(exist_ok=True)
    (folder / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))


def jsonl_records(path, telemetry_every: int = 1) -> None:
    """Three evaluators x 12 items; reasoning on every record, telemetry on every n-th item."""
    lines = []
    for k in range(12):
        for e, ev in enumerate(("e1", "e2", "e3")):
            obj = {
                "evaluator": ev,
                "item": f"i{k}",
                "context": f"q{k}",
                "response_a": "a",
                "response_b": "b",
                "label": "ANB"[(k + e) % 3],
                "reasoning": [{"section": "final", "content": "ok"}],
            }
            if k % telemetry_every == 0:
                obj["telemetry"] = [{"t": 0, "event": "reveal", "target": "response_a"}]
            lines.append(json.dumps(obj))
    path.write_text("\n".join(lines) + "\n")


def test_default_config_cells_params_and_targets():
    project = Project.load([], ROOT)
    plan = project.plan("simulation")
    assert plan.datasets == ["pandalm"] and plan.judges == ["smollm2"]
    assert plan.cells("pandalm") == [
        {"model": "smollm2", "demo_type": "base", "shots": 0},
        {"model": "smollm2", "demo_type": "J", "shots": 1},
        {"model": "smollm2", "demo_type": "J", "shots": 2},
    ]
    assert [(j.rule, j.wildcards) for j in plan.llm_jobs()][1] == (
        "simulation_predict",
        (("dataset", "pandalm"), ("model", "smollm2"), ("demo_type", "J"), ("shots", "1")),
    )
    # answer auto: the embedded model's ratings come from the logits
    assert plan.settings("pandalm", "smollm2") == {
        "task": "helpfulness",
        "answer": "logits",
        "max_tokens": 64,
        "seed": 0,
        "min_neutral": 2,
    }
    # the cell's judge travels whole as the rule's param: model entry, prompt texts, settings, floor
    judge = plan.judge("pandalm", "smollm2", "J")
    assert CascadeJudge.from_param(judge.param()) == judge
    assert judge.cascade.to_json() == plan.settings("pandalm", "smollm2")
    assert judge.spec == project.model_entry("smollm2") and judge.coverage == plan.coverage()
    base, j = (json.loads(plan.judge("pandalm", "smollm2", t).param())["prompt"] for t in ("base", "J"))
    assert list(base["scales"]) == ["helpfulness"]  # only the set's task
    assert base["demonstration"] == "" and j["demonstration"].startswith("<demonstration_{n}>")
    assert j["telemetry"] == j["reasoning"] == ""  # type J shows neither
    full = SimulationPrompt.load()
    assert j["template"] == full.template and base["template"] == ""  # the Base Judge has its own
    assert base["base_judge"]["template"] == full.base_judge["template"]
    assert j["base_judge"]["template"] == ""
    assert (
        len(plan.targets()) == 23 * 2 + 5 * 2
    )  # tables (.tsv, .md), figures (.png, .pdf); one task: no cross-task figure
    assert not plan.cross_task and plan.tasks() == {"pandalm": "helpfulness"}
    assert "results/simulation/tables/baselines.md" in plan.targets()
    assert json.loads(plan.selection("pandalm").param()) == {
        "format": "pandalm",
        "evaluators": [],
        "pool": 20,
        "validation": 10,
        "split": "coordinated",
        "group_by": "context",
        "balance_neutral": True,
        "seed": 0,
        "min_neutral": 2,
        "task": "helpfulness",
    }


def test_a_config_without_the_section_does_not_run_the_study(tmp_path):
    cfg = {
        "datasets": {"dl19": {"source": "sample", "format": "trec"}},
        "models": {"gpt": GPT},
        "judges": ["gpt"],
    }
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    project = Project.load([], tmp_path)
    assert not project.enabled("simulation") and project.targets("simulation") == []
    assert project.config["simulation"]["datasets"]["pandalm"]["pool"] == 20  # schema defaults


def test_types_the_data_cannot_support_are_skipped_with_the_reason(tmp_path):
    jsonl_records(tmp_path / "recs.jsonl", telemetry_every=2)
    write_config(
        tmp_path,
        {
            "datasets": {
                "mine": {
                    "source": "files",
                    "format": "jsonl",
                    "path": str(tmp_path / "recs.jsonl"),
                    "pool": 4,
                    "validation": 4,
                }
            },
            "demo_types": ["J", "J+IT", "J+RR", "J+IT+RR"],
            "shots": [2],
        },
    )
    plan = Project.load([], tmp_path).plan("simulation")
    assert plan.types("mine") == ["J", "J+RR"]
    assert plan.skipped("mine") == {
        "J+IT": "J+IT needs telemetry on every record; 18 of 36 have it",
        "J+IT+RR": "J+IT+RR needs telemetry on every record; 18 of 36 have it",
    }
    assert [(c["demo_type"], c["shots"]) for c in plan.cells("mine")] == [("base", 0), ("J", 2), ("J+RR", 2)]
    assert plan.settings("mine", "gpt")["answer"] == "parse"  # auto: API models parse the text
    # the J+RR cell's prompt param holds the reasoning block, not the telemetry block
    p = json.loads(plan.judge("mine", "gpt", "J+RR").param())["prompt"]
    assert p["reasoning"].startswith("<retrospective_reasoning>") and p["telemetry"] == ""


TWO_TASKS = ROOT / "tests" / "fixtures" / "simulation" / "two_tasks.jsonl"


def test_two_evaluator_sets_of_one_two_task_file_run_every_type_and_the_cross_task_figure(tmp_path):
    sets = {
        name: {
            "source": "files",
            "format": "jsonl",
            "path": str(TWO_TASKS),
            "task": task,
            "pool": 6,
            "validation": 8,
        }
        for name, task in (("help", "helpfulness"), ("harm", "harmlessness"))
    }
    write_config(tmp_path, {"datasets": sets, "demo_types": ["J", "J+IT", "J+RR", "J+IT+RR"], "shots": [1]})
    project = Project.load([], tmp_path)
    plan = project.plan("simulation")
    assert plan.types("help") == plan.types("harm") == ["J", "J+IT", "J+RR", "J+IT+RR"]
    assert plan.tasks() == {"help": "helpfulness", "harm": "harmlessness"} and plan.cross_task
    assert {"results/simulation/figures/cross_task.png", "results/simulation/figures/cross_task.pdf"} <= set(
        plan.targets()
    )
    assert plan.selection("harm").task == "harmlessness"
    table, notes = estimate(project, directory=tmp_path)
    assert any("simulation harm: 70 records" in n for n in notes)  # only the harmlessness records
    # a task no record of the file names fails before any job, naming the key
    only_help = tmp_path / "help.jsonl"
    only_help.write_text("".join(line for line in TWO_TASKS.open() if '"task": "helpfulness"' in line))
    sets["harm"]["path"] = str(only_help)
    write_config(tmp_path, {"datasets": sets})
    with pytest.raises(
        InputError, match=r"config key 'simulation.datasets.harm.task': no record of task 'harmlessness'"
    ):
        Project.load([], tmp_path).llm_jobs()


def test_pandalm_sets_skip_signal_types_without_reading_the_file(tmp_path):
    write_config(
        tmp_path,
        {
            "datasets": {"pandalm": {"source": "download", "format": "pandalm"}},
            "demo_types": ["J+IT", "J", "J+RR"],
        },
    )
    plan = Project.load([], tmp_path).plan("simulation")
    assert plan.types("pandalm") == ["J"]
    assert set(plan.skipped("pandalm")) == {"J+IT", "J+RR"}
    assert plan.source_file("pandalm") == "results/simulation/pandalm/download.json"
    assert plan.download_url("pandalm").endswith("WeOpenML/PandaLM/main/data/testset-v1.json")


def download_set(tmp_path, demo_types, **extra) -> dict:
    """A config whose jsonl evaluator set ``dl`` the workflow downloads (from a file:// URL)."""
    jsonl_records(tmp_path / "recs.jsonl", telemetry_every=2)
    s = {"source": "download", "format": "jsonl", "url": (tmp_path / "recs.jsonl").as_uri(), "pool": 4}
    sets = {"dl": {**s, "validation": 4, **extra}}
    write_config(tmp_path, {"datasets": sets, "demo_types": demo_types, "shots": [1]})
    return s


def test_a_downloaded_jsonl_set_plans_its_cells_after_its_download_as_the_same_file_as_files(tmp_path):
    download_set(tmp_path, ["J", "J+IT", "J+RR"])
    project = Project.load([], tmp_path)
    plan = project.plan("simulation")
    raw = tmp_path / "results" / "simulation" / "dl" / "download.jsonl"
    # before the download: its download is a checkpoint the cells wait for; the jobs known so
    # far (the parse, the estimate) count every configured type, an upper bound
    assert plan.file_decides("dl") and not plan.types_known("dl")
    assert (
        plan.checkpoints()
        == plan.checkpoints("dl")
        == [("simulation_download", {"dataset": "dl", "ext": "jsonl"})]
    )
    assert project.plan("peras").checkpoints() == []
    assert [c["demo_type"] for c in plan.job_cells("dl")] == ["base", "J", "J+IT", "J+RR"]
    assert len(project.llm_jobs()) == 4 and project.targets("simulation")
    with pytest.raises(InputError) as err:
        plan.cells("dl")
    assert err.value.key == "simulation.datasets.dl.source" and "not downloaded yet" in str(err.value)
    assert "`snakemake" not in str(err.value)  # no command to suggest: one `snakemake all` does it
    # after it: the file's own types, as the same file as `source: files` gives them
    raw.parent.mkdir(parents=True)
    raw.write_bytes((tmp_path / "recs.jsonl").read_bytes())
    assert plan.types_known("dl") and plan.job_cells("dl") == plan.cells("dl")
    files = tmp_path / "files"
    files.mkdir()
    write_config(
        files,
        {
            "datasets": {
                "dl": {"source": "files", "format": "jsonl", "path": str(raw), "pool": 4, "validation": 4}
            },
            "demo_types": ["J", "J+IT", "J+RR"],
            "shots": [1],
        },
    )
    same = Project.load([], files).plan("simulation")
    assert plan.design("dl") == same.design("dl") and plan.selection("dl") == same.selection("dl")
    assert plan.skipped("dl") == {"J+IT": "J+IT needs telemetry on every record; 18 of 36 have it"}
    assert same.checkpoints() == []
    # a download the run replaces (another url) is read again
    jsonl_records(raw, telemetry_every=1)
    assert plan.types("dl") == ["J", "J+IT", "J+RR"] and plan.skipped("dl") == {}


def test_a_downloaded_set_asked_for_j_alone_needs_no_checkpoint(tmp_path):
    download_set(tmp_path, ["J"])
    plan = Project.load([], tmp_path).plan("simulation")
    assert not plan.file_decides("dl") and plan.checkpoints() == [] and plan.types_known("dl")
    assert [c["demo_type"] for c in plan.cells("dl")] == ["base", "J"] and plan.skipped("dl") == {}


def test_the_estimate_of_a_jsonl_set_not_downloaded_yet_counts_its_configured_sizes(tmp_path):
    download_set(tmp_path, ["J", "J+IT", "J+RR"], evaluators=["e1", "e2"])
    table, notes = estimate(Project.load([], tmp_path), directory=tmp_path)
    row = table.set_index("stage").loc["simulation"]
    assert (row.jobs, bool(row.exact)) == (4, False)  # the Base Judge and three types: an upper bound
    # 2 evaluators x 4 validation items per cell, each asked in one round (a direction-only
    # evaluator: too few neutral labels in its pool) or two
    assert 4 * 2 * 4 <= row.calls <= 4 * 2 * 4 * 2 and row.input_tokens > 0
    assert any(
        "simulation dl: 16 records, not downloaded yet (its size is unknown until then): its 2 "
        "configured evaluators x 8 items" in n
        for n in notes
    )
    # without `evaluators`: one stands in, the note says the counts are per evaluator
    download_set(tmp_path, ["J"])
    _, notes = estimate(Project.load([], tmp_path), directory=tmp_path)
    assert any("one evaluator (the file names them: counts are per evaluator)" in n for n in notes)


@pytest.mark.parametrize(
    "simulation, key, message",
    [
        ({"judges": ["nope"]}, "simulation.judges[0]", "'nope' is not a key of `models`"),
        (
            {"datasets": {"pandalm": {"source": "sample", "format": "pandalm", "task": "honesty"}}},
            "simulation.datasets.pandalm.task",
            "no scale block for task 'honesty'",
        ),
        (
            {"datasets": {"p": {"source": "files", "format": "jsonl"}}},
            "simulation.datasets.p.path",
            "source 'files' needs `path`",
        ),
        (
            {"datasets": {"p": {"source": "download", "format": "jsonl"}}},
            "simulation.datasets.p.url",
            "needs `url`",
        ),
        (
            {"datasets": {"nosample": {"source": "sample", "format": "pandalm"}}},
            "simulation.datasets.nosample.source",
            "no bundled sample",
        ),
        ({"demo_types": ["J", "J+XX"]}, "simulation.demo_types[1]", "'J+XX' is not one of"),
        ({"shots": [1, 1]}, "simulation.shots", "non-unique"),
        ({"answer": "guess"}, "simulation.answer", "'guess' is not one of"),
        ({"prompt": "simulation/nothing"}, "simulation.prompt", "no simulation prompt"),
    ],
)
def test_config_errors_name_the_full_key(tmp_path, simulation, key, message):
    write_config(tmp_path, simulation)
    with pytest.raises(InputError) as err:
        Project.load([], tmp_path)
    assert err.value.key == key and message in str(err.value)


def test_a_bad_jsonl_record_fails_before_any_job_with_file_and_line(tmp_path):
    jsonl_records(tmp_path / "recs.jsonl")
    lines = (tmp_path / "recs.jsonl").read_text().splitlines()
    lines[4] = lines[4].replace('"label": "', '"label": "X')
    (tmp_path / "recs.jsonl").write_text("\n".join(lines) + "\n")
    write_config(
        tmp_path,
        {
            "datasets": {
                "mine": {
                    "source": "files",
                    "format": "jsonl",
                    "path": str(tmp_path / "recs.jsonl"),
                    "pool": 4,
                    "validation": 4,
                }
            }
        },
    )
    project = Project.load([], tmp_path)
    with pytest.raises(InputError, match=r"recs\.jsonl:5: label 'X"):
        project.llm_jobs()


def sample_requests(plan, demo_type: str, shots: int, round_: int, only=None):
    records = load_records(SAMPLE, "pandalm")
    splits = make_splits(records, pool=20, validation=10, seed=0, group_by="context", balance_neutral=True)
    settings = CascadeSettings(**plan.settings("pandalm", "gpt"))
    texts = json.loads(plan.judge("pandalm", "gpt", demo_type).param())["prompt"]
    prompt = SimulationPrompt.from_mapping(texts, partial=True)
    plans, _ = plan_evaluators(records, splits, shots=shots, demo_type=demo_type, settings=settings)
    return build_requests(plans, prompt, round_, demo_type, settings, only)


#: every (evaluator, item) of the sample's validation sets (round 2 asked everywhere: the bound)
ALL = {(f"annotator{k}", str(i)) for k in (1, 2, 3) for i in range(1000)}


def test_estimate_counts_round_two_from_cached_round_one_answers(tmp_path):
    write_config(
        tmp_path,
        {
            "datasets": {"pandalm": {"source": "sample", "format": "pandalm", "pool": 20, "validation": 10}},
            "shots": [1],
        },
    )
    project = Project.load([], tmp_path)
    plan = project.plan("simulation")
    # nothing cached. Base Judge: round 1 for 3 evaluators x 10 items, one prompt per item (the
    # evaluators share their validation items), round 2 counted for all 30 (upper bound);
    # J 1-shot: 30 + 30, a prompt repeated where two evaluators drew the same demonstration
    # with the same label (they share their pool) - asked once
    j_prompts = [req for round_ in (1, 2) for _, req in sample_requests(plan, "J", 1, round_, ALL)]
    j_repeats = len(j_prompts) - len(set(j_prompts))
    assert 0 < j_repeats < 30
    table, notes = estimate(project, directory=tmp_path)
    row = table.set_index("stage").loc["simulation"]
    assert (row.jobs, row.calls, row.cached, row.exact) == (2, 120, 40 + j_repeats, True)
    assert row.to_send == 120 - 40 - j_repeats
    assert row.output_tokens_max == row.to_send * 64  # parse path: max_tokens per request sent
    assert any("simulation pandalm: 90 records from sample file" in n for n in notes)

    # an earlier run answered the Base Judge's round 1: "no preference" (1) for 4 items, a
    # preference (2) for 5, an unparsable answer for 1. Round 2 then asks exactly the 5 x 3
    # evaluators' preferred items; of those, 2 items' round-2 answers are cached too.
    backend = make_backend(dict(GPT), "gpt", need_key=False)
    r1 = sample_requests(plan, "base", 0, 1)
    items = sorted({k[1] for k, _ in r1})
    answer = {it: "<judgment>1</judgment>" for it in items[:4]}
    answer.update({it: "<judgment>2</judgment>" for it in items[4:9]})
    answer[items[9]] = "I cannot tell"
    preferred = {(ev, it) for (ev, it), _ in r1 if it in items[4:9]}
    r2 = sample_requests(plan, "base", 0, 2, preferred)
    with RequestCache(tmp_path / "cache" / "requests.sqlite") as cache:
        for (_ev, it), req in r1 + [(k, r) for k, r in r2 if k[1] in items[4:6]]:
            text = answer[it] if req in [r for _, r in r1] else "<judgment>1</judgment>"
            cache.put(
                request_key(cache_request(backend, req)),
                cache_request(backend, req),
                Completion(text=text).to_json(),
            )
    table, _ = estimate(project, directory=tmp_path)
    row = table.set_index("stage").loc["simulation"]
    base_calls, base_cached = 30 + 15, 30 + 15 - 3  # 3 round-2 prompts not cached (items 6-8)
    assert (row.calls, row.cached) == (base_calls + 60, base_cached + j_repeats)


def test_paper_config_runs_only_bedrock_models_and_counts_pandalm_by_its_known_size(monkeypatch, tmp_path):
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"):
        monkeypatch.delenv(var, raising=False)  # the estimate needs no credentials
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text((ROOT / "config" / "config.yaml").read_text())
    project = Project.load([ROOT / "config" / "paper-simulation.yaml"], tmp_path)
    bedrock = ["claude-3.5-sonnet-v2", "claude-3.7-sonnet", "deepseek-r1", "nova-premier"]
    assert project.used_models == bedrock and project.studies == ["simulation"]
    plan = project.plan("simulation")
    assert plan.types("pandalm") == ["J"] and len(plan.skipped("pandalm")) == 3
    assert len(project.llm_jobs()) == 4 * (1 + 4)  # per model: Base Judge + J x 1, 2, 4, 8 shots
    table, notes = estimate(project, directory=tmp_path)
    assert list(table["model"]) == bedrock and not table["exact"].any()
    assert (table["calls"] > 1000).all() and table["cost_usd"].notna().all()
    assert any("not downloaded yet: PandaLM's known size (999 items x 3 annotators" in n for n in notes)
