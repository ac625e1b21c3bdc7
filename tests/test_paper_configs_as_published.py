"""The paper configs are the published experiments (issue 18): each config/paper-*.yaml is loaded as
`snakemake --configfile` loads it (merged over config/config.yaml), and the jobs it resolves - the
plans' LLM jobs and the values the rules pass as their params (template text, labels, answer bound,
persona, answer reading, model entry) - are checked against a table of what the papers state:
When LLM Judges Inflate Scores (sections 2 and 3) for paper-overrating and paper-perturbations; for
paper-peras and paper-simulation (being changed for issues 20 and 19) only the per-model
chat-template switch and that their judge jobs resolve.

The one thing When LLM Judges Inflate Scores leaves to us here - section 3's original labels and
answer bound - must be section 2's graded run: the two configs resolve the same graded job (same
params, same file), so Table 1, the transition matrices and Figures 1 and 3 rest on one set of
labels per judge.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
import yaml
from conftest import ROOT, paper_config_files

from judgelab.llm.prompts import load_template
from judgelab.llm.readings import pointwise_requests
from judgelab.wiring.facade import Project

SEEDS = ROOT.parent / "shared" / "seeds"
SEED_000 = SEEDS / "000_43f052d8f685e3d2.txt"
SEED_004_TEXT = SEEDS / "004_e51b999c1f5f88d3.txt"

PAPER_CONFIGS = (
    "paper-overrating",
    "paper-perturbations",
    "paper-ranking",
    "paper-peras",
    "paper-simulation",
    "paper-sensitivity",
)

# -- what the overrating paper states ------------------------------------------------------------

#: Section 2.1: "Llama-3.2-3B, Gemma-3-4B, Mistral-7B, and Qwen-3-8B" (the served Hugging Face ids),
#: shown as Gemma, Llama, Mistral, Qwen in Tables 1 and 2.
SEED_004_JUDGES = {
    "llama-3.2-3b": ("meta-llama/Llama-3.2-3B-Instruct", "Llama"),
    "gemma-3-4b": ("google/gemma-3-4b-it", "Gemma"),
    "mistral-7b": ("mistralai/Mistral-7B-Instruct-v0.3", "Mistral"),
    "qwen3-8b": ("Qwen/Qwen3-8B", "Qwen"),
}

PUBLISHED = {
    # "TREC Deep Learning (DL) Track passage ranking tasks from 2019-2020", all judged pairs
    "datasets": ["dl19", "dl20"],
    # "binary relevance (0 ...) and graded relevance (0 ... 3)"; "variations of the UMBRELA prompt"
    "scales": {"binary": ("0", "1"), "graded": ("0", "1", "2", "3")},
    # "We sampled 20 pairs per query from each of the following settings"
    "per_setting": 20,
    # not stated for the pairs; the TREC binarisation (grade >= 2) everywhere else in section 2
    "relevant_min": 2,
    # "the softmax probabilities": the label token's probability in the full distribution
    "confidence": "full",
    # section 3.1: "(at maximum) 20 passages per predicted relevance label (0-3) for each LLM"
    "per_label": 20,
    # "We use Gemini-2.5-Flash to generate ... and to verify"
    "rewriter": "gemini-2.5-flash",
    "variants": ["PSV", "ACV", "SUM", "EXP"],
    "insertions": ["SEM", "LEX", "QRY"],
}

#: Models that think before they answer unless told not to, and the switch their entry must carry:
#: (pattern on the model id, path of the key in the entry, value). Claude 3.5 / 3.7 Sonnet think only
#: when extended thinking is requested, GPT-4o-mini never; DeepSeek-R1 always reasons and has no
#: switch (its study's answer bound must leave room: checked below).
THINKING_SWITCHES = [
    (r"(?i)qwen3", ("extra_body", "chat_template_kwargs", "enable_thinking"), False),
    (r"(?i)gemini-2\.5", ("extra_body", "reasoning_effort"), "none"),
]


def load(name: str, monkeypatch) -> Project:
    monkeypatch.chdir(ROOT)
    return Project.load(paper_config_files(name), ROOT)


def own_models(name: str) -> dict:
    """The model entries the paper file itself defines."""
    return yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text(encoding="utf-8"))["models"]


def dig(entry: dict, path: tuple[str, ...]):
    for k in path:
        if not isinstance(entry, dict) or k not in entry:
            return None
        entry = entry[k]
    return entry


def one_pair() -> pd.DataFrame:
    return pd.DataFrame(
        {"dataset": ["dl19"], "qid": ["1"], "query": ["do goldfish grow"], "docid": ["d"], "passage": ["p"]}
    )


def umbrela_table3() -> str:
    """UMBRELA as printed in PERAS Table 3 (its lines, without the rendering's blank lines)."""
    if not SEED_000.exists():
        pytest.skip(f"{SEED_000} is absent")
    lines = SEED_000.read_text(encoding="utf-8").splitlines()
    start = lines.index(
        "Given a query and a passage, you must provide a score on an integer scale of 0 to 3 "
        "with the following meanings:"
    )
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("Final score must be"))
    return "\n".join(x for x in lines[start : end + 1] if x.strip())


# -- every paper config ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", PAPER_CONFIGS)
def test_every_model_that_thinks_first_carries_its_switch(name, monkeypatch):
    project = load(name, monkeypatch)
    entries = own_models(name)
    assert entries
    checked = 0
    for key, entry in entries.items():
        resolved = project.config["models"][key]
        for pattern, path, value in THINKING_SWITCHES:
            if re.search(pattern, str(entry.get("model", ""))):
                assert dig(resolved, path) == value, (
                    f"{name}: models.{key}.{'.'.join(path)} must be {value!r}"
                )
                checked += 1
        if re.search(r"(?i)deepseek.*r1", str(entry.get("model", ""))):
            # no switch: the reasoning is spent from the answer bound of the study that calls it
            assert project.config["simulation"]["max_tokens"] >= 1024, name
    expected = {
        "paper-overrating": 1,
        "paper-perturbations": 2,
        "paper-ranking": 0,
        "paper-peras": 0,
        "paper-simulation": 0,
        "paper-sensitivity": 0,
    }
    assert checked == expected[name]


def test_every_paper_config_is_in_the_table():
    assert {p.stem for p in (ROOT / "config").glob("paper-*.yaml")} == set(PAPER_CONFIGS)


# -- When LLM Judges Inflate Scores, section 2 -----------------------------------------------------


def test_umbrela_is_seed_000_table_3_verbatim_and_the_graded_prompt_is_it_with_the_grade_names():
    table3 = umbrela_table3()
    assert load_template("peras/w_cot") == table3
    graded = load_template("overrating/graded")
    names = ("Non-relevant: ", "Related: ", "Highly relevant: ", "Perfectly relevant: ")
    stripped = graded
    for k, n in enumerate(names):
        stripped = stripped.replace(f"{k} = {n}", f"{k} = ")
    assert stripped == table3  # only the paper's grade names are added
    if SEED_004_TEXT.exists():  # the names are the overrating paper's (section 2.1)
        text = SEED_004_TEXT.read_text(encoding="utf-8")
        for k, n in enumerate(names):
            assert f"{k} “{n[:-2]}”" in text


def test_paper_overrating_is_section_2_as_published(monkeypatch):
    project = load("paper-overrating", monkeypatch)
    plan = project.plan("overrating")
    assert project.studies == ["overrating"]
    assert plan.datasets == PUBLISHED["datasets"]
    for d in PUBLISHED["datasets"]:
        ds = project.dataset(d)
        assert ds["source"] == "download" and ds["per_grade"] is None and ds["queries"] == []
    assert plan.judges == list(SEED_004_JUDGES)
    for key, (model_id, shown) in SEED_004_JUDGES.items():
        entry = project.config["models"][key]
        assert entry["model"] == model_id and entry["logprobs"] is True  # token confidence needs logprobs
        assert project.display_name(key) == shown
        assert "display_name" not in project.model_param(key)  # a name reruns no judge job
    jobs = plan.llm_jobs()
    cells = {(j.rule, tuple(sorted(j.wc.items()))) for j in jobs}
    want = {
        ("overrating_pointwise", tuple(sorted({"dataset": d, "model": m, "scale": s}.items())))
        for d in PUBLISHED["datasets"]
        for m in SEED_004_JUDGES
        for s in PUBLISHED["scales"]
    } | {
        ("overrating_pairwise", tuple(sorted({"dataset": d, "model": m}.items())))
        for d in PUBLISHED["datasets"]
        for m in SEED_004_JUDGES
    }
    assert cells == want and len(jobs) == len(want)
    for scale, labels in PUBLISHED["scales"].items():
        prompt = plan.prompts[scale]  # the rule's template and labels params
        assert prompt.labels == labels
        (req,) = pointwise_requests(one_pair(), prompt, max_tokens=plan.pointwise["max_tokens"])
        # no persona: one user message, the UMBRELA-derived template alone
        assert len(req.messages) == 1 and req.messages[0][0] == "user"
        assert req.messages[0][1].startswith("Given a query and a passage, you must provide a score")
        assert req.label_steps and req.max_tokens == 16
    assert plan.prompts["graded"].template == load_template("overrating/graded")
    assert plan.pairwise["per_setting"] == PUBLISHED["per_setting"]
    assert plan.sampling.relevant_min == PUBLISHED["relevant_min"]
    assert plan.confidence == PUBLISHED["confidence"]
    assert int(plan.pairwise["max_tokens"]) == 16


# -- When LLM Judges Inflate Scores, section 3 -----------------------------------------------------


def graded_job_params(project: Project, dataset: str, model: str) -> dict:
    """What the overrating_pointwise rule passes to the graded job (its param, the judge whole:
    model entry, template, labels, bound, coverage floor; and its output)."""
    ovr = project.plan("overrating")
    return {
        "judge": ovr.pointwise_judge(model, "graded").param(),
        "output": project.path("overrating_pointwise", dataset=dataset, model=model, scale="graded"),
    }


def test_paper_perturbations_is_section_3_with_section_2s_graded_labels(monkeypatch):
    section2 = load("paper-overrating", monkeypatch)
    project = load("paper-perturbations", monkeypatch)
    plan = project.plan("perturbations")
    assert project.studies == ["perturbations"]
    assert plan.original == "overrating"
    assert plan.datasets == PUBLISHED["datasets"] and plan.judges == list(SEED_004_JUDGES)
    assert int(plan.section["per_label"]) == PUBLISHED["per_label"]
    assert plan.rewriter == PUBLISHED["rewriter"] and plan.checker == PUBLISHED["rewriter"]
    assert plan.rewrite_variants == PUBLISHED["variants"] and plan.insertions == PUBLISHED["insertions"]
    assert project.config["models"]["gemini-2.5-flash"]["model"] == "gemini-2.5-flash"
    # the original judgments: the overrating study's graded job (off as a study, run for this one),
    # with the very params and output of section 2's: one job, one set of labels per judge
    originals = [j for j in plan.llm_jobs() if j.rule == "overrating_pointwise"]
    assert sorted((j.wc["dataset"], j.model, j.wc["scale"]) for j in originals) == sorted(
        (d, m, "graded") for d in PUBLISHED["datasets"] for m in SEED_004_JUDGES
    )
    assert not any(j.rule == "peras_judge" for j in plan.llm_jobs())  # no PERAS judgment (wo_cot) any more
    for d in PUBLISHED["datasets"]:
        for m in SEED_004_JUDGES:
            assert graded_job_params(project, d, m) == graded_job_params(section2, d, m)
            assert plan.judgments(d, m) == project.path(
                "overrating_pointwise", dataset=d, model=m, scale="graded"
            )
    # the re-judging: the same prompt, labels, bound and reading, no persona
    assert plan.judge_template_text == load_template("overrating/graded")
    assert plan.judge_labels == ["0", "1", "2", "3"] and plan.judge_max_tokens == 16
    assert plan.judge_persona is None
    assert {plan.judge_answer(m) for m in SEED_004_JUDGES} == {"parse"}
    pairs = one_pair()
    ovr = project.plan("overrating")
    for m in SEED_004_JUDGES:
        # an unchanged passage's re-judging request IS its original request (a cache hit)
        assert plan.judge_requests(pairs, m, "") == pointwise_requests(
            pairs, ovr.prompts["graded"], max_tokens=ovr.pointwise["max_tokens"]
        )
    assert plan.coverage().bound_key == "overrating.pointwise.max_tokens"
    assert plan.section["stopwords"] == "nltk_english" and plan.rewrite_filter == "per_variant"
    assert plan.pooled  # DL19 + DL20 pooled, as the paper's figures


# -- the two configs of issues 19 and 20: their judge jobs resolve ---------------------------------


def test_paper_scale_judge_jobs_resolve(monkeypatch):
    from judgelab.llm.judge import Judge
    from judgelab.llm.judging import judgment_requests

    project = load("paper-peras", monkeypatch)
    peras = project.plan("peras")
    judge_jobs = [j for j in project.llm_jobs() if j.rule == "peras_judge"]
    assert judge_jobs
    for job in judge_jobs:
        w = job.wc
        assert peras.answer(job.model) == "parse"  # API models: the label parsed from the text
        assert peras.coverage(w["template"]).bound_key == f"peras.templates.{w['template']}.max_tokens"
        (req,) = judgment_requests(
            one_pair(),
            Judge(
                "judge",
                template=peras.template_texts[w["template"]],
                persona=project.persona_text(w["persona"]),
                max_tokens=peras.max_tokens(w["template"]),
                placement=project.placement,
                answer=peras.answer(job.model),
            ),
        )
        assert req.max_tokens == peras.max_tokens(w["template"])


def test_paper_simulation_judge_jobs_resolve(monkeypatch):
    project = load("paper-simulation", monkeypatch)
    sim = project.plan("simulation")
    jobs = [j for j in project.llm_jobs() if j.rule == "simulation_predict"]
    assert jobs
    for job in jobs:
        settings = sim.settings(job.wc["dataset"], job.model)
        assert settings["answer"] == "parse"  # Bedrock gives no token probabilities
        assert sim.coverage().param()


@pytest.mark.slow
def test_the_pair_mix_of_the_full_dl19_and_dl20_by_relevance_threshold(shared_data):
    """The pairs paper-overrating judges (its comment): relevant = grade >= 2 gives 2,233 (DL19) and
    2,677 (DL20) pairs at 20 per setting and seed 0; grade >= 1 would give 2,563 and 3,078."""
    from judgelab.data.prepare import build_trec_table
    from judgelab.studies.overrating.pairwise import sample_pairs

    d = shared_data / "trec-dl"
    got = {}
    for name, topics in (("dl19", "topics.dl19-passage.txt"), ("dl20", "topics.dl20.txt")):
        table = build_trec_table(
            name, d / f"qrels.{name}-passage.txt", d / topics, d / f"qrels_text.{name}.tsv"
        )
        assert len(table) == {"dl19": 9260, "dl20": 11386}[name]  # shared/data/README.md
        got[name] = {rm: len(sample_pairs(table, 20, 0, rm)) for rm in (1, 2)}
    assert got == {"dl19": {1: 2563, 2: 2233}, "dl20": {1: 3078, 2: 2677}}
