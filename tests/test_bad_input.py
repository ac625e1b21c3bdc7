"""Bad input never passes silently (issue 8): each class of mistake goes through the real workflow
(a dry run where the error comes at parse or DAG time) or the CLI, ends with a non-zero exit code,
and the message names the config key or the file and line. Unparsable answers are not errors:
they are recorded as missing and counted, never turned into grades."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from fake_openai import ServerThread
from snakerun import ROOT, make_workdir, output, snakemake, snakemake_cmd
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from judgelab.cache.filehash import file_sha256
from judgelab.cache.store import RequestCache
from judgelab.cli import main as cli
from judgelab.llm.answers import parse_label

FX = ROOT / "tests" / "fixtures" / "trec"
WO_COT = (ROOT / "resources" / "prompts" / "peras" / "wo_cot.yaml").read_text(encoding="utf-8")


def peras_run(tmp_path: Path, override: dict | None = None) -> Path:
    """A run folder of `.test/peras` with ``override`` as `bad.yaml` (merged over its config)."""
    wd = make_workdir(tmp_path / "run", "peras")
    if override is not None:
        (wd / "bad.yaml").write_text(yaml.safe_dump(override), encoding="utf-8")
    return wd


def run(wd: Path, *args: str, **kw):
    extra = ["--configfile", str(wd / "bad.yaml")] if (wd / "bad.yaml").exists() else []
    return snakemake(wd, *args, *extra, cores=1, timeout=600, **kw)


def failed_with(res, message: str) -> str:
    text = output(res)
    assert res.returncode != 0, text[-3000:]
    assert message in text, text[-4000:]
    return text


# ------------------------------------------------------------------------------------------------
# 1. Every reference of the config is resolved before any job runs (the dry run fails, naming it)

IMPORTED = {"path": "imports/{persona}.qrels", "datasets": ["fx"], "personas": ["default", "LA"]}

CONFIG_CASES = {
    "significance reference not run": (
        {"peras": {"significance": {"reference": "HA"}}},
        "config key 'peras.significance.reference': persona 'HA' is not run",
    ),
    "significance reference missing from an imported judge": (
        {
            "peras": {"significance": {"reference": "default"}},
            "imported_judges": {"ext": {**IMPORTED, "personas": ["LA", "HN"]}},
        },
        "config key 'peras.significance.reference': persona 'default' is not among the personas of "
        "imported judge 'ext'",
    ),
    "figure persona not run": (
        {"peras": {"figures": {"confidence_personas": ["HN", "XX"]}}},
        "config key 'peras.figures.confidence_personas[1]': persona 'XX' is not run by any judge",
    ),
    "generator model unknown": (
        {"personas": {"generation": {"enabled": True, "model": "gpt-x"}}},
        "config key 'personas.generation.model': model 'gpt-x' is not a key of `models`",
    ),
    "generator template of the wrong kind": (
        {
            "personas": {
                "generation": {
                    "enabled": True,
                    "model": "smollm2",
                    "keywords_template": "peras/persona_instruction",
                }
            }
        },
        "persona_instruction.yaml: is a 'persona_instruction' template, but a 'persona_keywords' "
        "template is needed here (config key 'personas.generation.keywords_template')",
    ),
    "classifier dataset not judged": (
        {"peras": {"classifier": {"dataset": "dl21"}}},
        "config key 'peras.classifier.dataset': dataset 'dl21' is not among the datasets PERAS judges",
    ),
    "study that judges nothing": (
        {"peras": {"judges": []}},
        "config key 'peras': the study is enabled but judges nothing",
    ),
    "judge unknown": (
        {"judges": ["gpt-4o-mini"]},
        "config key 'judges[0]': model 'gpt-4o-mini' is not a key of `models`",
    ),
    "study judge unknown": (
        {"peras": {"judges": ["smollm2", "smollm3"]}},
        "config key 'peras.judges[1]': 'smollm3' is not a key of `models`",
    ),
    "study dataset unknown": (
        {"peras": {"datasets": ["fx", "dl19"]}},
        "config key 'peras.datasets[1]': 'dl19' is not a key of `datasets`",
    ),
    "imported judge dataset unknown": (
        {"imported_judges": {"ext": {**IMPORTED, "datasets": ["fx", "dl19"]}}},
        "config key 'imported_judges.ext.datasets[1]': dataset 'dl19' is not a key of `datasets`",
    ),
    "imported judge persona unknown": (
        {"imported_judges": {"ext": {**IMPORTED, "personas": ["default", "defualt"]}}},
        "config key 'imported_judges.ext.personas[1]': 'defualt' is not a persona of the persona file",
    ),
    "imported judge file missing": (
        {"imported_judges": {"ext": IMPORTED}},
        "config key 'imported_judges.ext.path': imported judge file imports/default.qrels does not exist",
    ),
    "judgment template missing": (
        {"peras": {"templates": {"wo_cot": {"template": "peras/wo_cto", "max_tokens": 4}}}},
        "config key 'peras.templates.wo_cot.template': no prompt template 'peras/wo_cto'",
    ),
    "confidence template of the wrong kind": (
        {"peras": {"confidence": {"template": "peras/wo_cot", "max_tokens": 4}}},
        "wo_cot.yaml: is a 'judgment' template, but a 'confidence' template is needed here "
        "(config key 'peras.confidence.template')",
    ),
    "persona file missing": (
        {"personas": {"file": "nope.yaml"}},
        "config key 'personas.file': no persona file 'nope.yaml'",
    ),
    "persona unknown": (
        {"personas": {"include": ["default", "XX"]}},
        "config key 'personas.include[1]': unknown persona 'XX'",
    ),
    "GGUF file missing": (
        {"models": {"big": {"backend": "local", "model_path": "models/big.gguf"}}, "judges": ["big"]},
        "config key 'models.big.model_path': GGUF file models/big.gguf does not exist",
    ),
    "model key the backend ignores": (
        {"models": {"smollm2": {"base_url": "http://127.0.0.1:8000/v1"}}},
        "config key 'models.smollm2.base_url': the local backend does not read `base_url`",
    ),
    "dataset file missing": (
        {"datasets": {"fx": {"qrels": "fixtures/trec/qrels.tsv"}}},
        "config key 'datasets.fx.qrels': qrels file fixtures/trec/qrels.tsv does not exist",
    ),
    "dataset key its source ignores": (
        {
            "datasets": {"dl19": {"source": "sample", "format": "trec", "qrels": "my/qrels.txt"}},
            "peras": {"datasets": ["fx"]},
        },
        "config key 'datasets.dl19.qrels': only read with source 'files'",
    ),
    "bundled sample unknown": (
        {"datasets": {"dl22": {"source": "sample", "format": "trec"}}},
        "config key 'datasets.dl22.source': no bundled sample 'dl22'",
    ),
    "download source unknown": (
        {"datasets": {"robust04": {"source": "download", "format": "trec"}}},
        "config key 'datasets.robust04.source': no public source is known for 'robust04'",
    ),
    "docid map missing": (
        {
            "datasets": {
                "lj": {
                    "source": "files",
                    "format": "llmjudge",
                    "qrels": "fixtures/llmjudge/qrels.txt",
                    "topics": "fixtures/llmjudge/queries.txt",
                    "texts": "fixtures/llmjudge/docs.jsonl",
                    "docid_map": "fixtures/llmjudge/docid_map.tsv",
                }
            }
        },
        "config key 'datasets.lj.docid_map': file fixtures/llmjudge/docid_map.tsv does not exist",
    ),
    "name that cannot be a path component": (
        {"personas": {"custom": {"my persona": "Be brief."}}},
        "config key 'personas.custom.my persona': the name 'my persona' becomes a path component",
    ),
    "calibration bins below 1": (
        {"calibration": {"bins": 0}},
        "config key 'calibration.bins': 0 is less than the minimum of 1",
    ),
    "encoding unknown": (
        {"datasets": {"fx": {"encoding": "utf-9"}}},
        "config key 'datasets.fx.encoding': unknown encoding 'utf-9'",
    ),
}


def snakefile_config_error(wd: Path) -> str:
    """What the Snakefile does with a run folder's config before it defines a rule, in this
    process: the run folder's config/config.yaml with bad.yaml merged over it (Snakemake's
    `--configfile`), validated, and every name it uses resolved (judgelab.wiring.facade.Project);
    the message of the error it raises."""
    from judgelab.errors import InputError
    from judgelab.project.config import load_config, user_layers
    from judgelab.wiring.facade import Project

    cwd = Path.cwd()
    os.chdir(wd)  # as `snakemake -d wd`: the config's relative paths are the run folder's
    try:
        with pytest.raises(InputError) as error:
            Project(
                load_config(["bad.yaml"], directory=wd, root=ROOT),
                ROOT,
                user_layers=user_layers("config/config.yaml", ROOT, configfiles=["bad.yaml"]),
            )
    finally:
        os.chdir(cwd)
    return str(error.value)


# the files a rule reads are checked when the rules ask for them, as Snakemake builds the graph
AT_GRAPH_BUILD = ["imported judge file missing", "dataset file missing", "docid map missing"]


@pytest.mark.parametrize("case", [c for c in CONFIG_CASES if c not in AT_GRAPH_BUILD])
def test_config_references_fail_naming_the_key(tmp_path, case):
    """Every case checked before the rules are defined, as the Snakefile meets it, in this process
    (a Snakemake start costs about 1.8 CPU s)."""
    override, message = CONFIG_CASES[case]
    wd = peras_run(tmp_path, override)
    assert message in snakefile_config_error(wd)
    assert not (wd / "results").exists()


# through the real workflow: the files checked as the graph is built, and one case of each other
# kind (the schema, a name, a template)
DRY_RUN_CASES = [
    *AT_GRAPH_BUILD,
    "calibration bins below 1",
    "judge unknown",
    "confidence template of the wrong kind",
]


@pytest.mark.slow
@pytest.mark.parametrize("case", DRY_RUN_CASES)
def test_config_references_fail_the_dry_run_naming_the_key(tmp_path, case):
    override, message = CONFIG_CASES[case]
    wd = peras_run(tmp_path, override)
    failed_with(run(wd, "-n", "all"), message)
    assert not (wd / "results").exists()


# ------------------------------------------------------------------------------------------------
# 2. Templates are checked when loaded: file (and line) and the missing or unknown placeholder


def _template(text: str) -> str:
    """wo_cot.yaml with its template text replaced."""
    head = WO_COT.split("template: |-")[0]
    return head + "template: |-\n" + "".join(f"  {line}\n" for line in text.split("\n"))


WO_COT_TEXT = yaml.safe_load(WO_COT)["template"]
WO_COT_LINE = WO_COT.split("\n").index("template: |-") + 1  # the file line of `template: |-`
QUERY_LINE = next(i for i, line in enumerate(WO_COT_TEXT.split("\n")) if "{query}" in line)

TEMPLATE_CASES = {
    "no {query}": (
        WO_COT_TEXT.replace("Query: {query} ", ""),
        "my.yaml: the judgment template lacks the placeholder(s) {query}",
    ),
    "misspelt placeholder": (
        WO_COT_TEXT.replace("{query}", "{qeury}"),
        f"my.yaml:{WO_COT_LINE + 1 + QUERY_LINE}: unknown placeholder {{qeury}}: a judgment template "
        "takes {document}, {query}; did you mean {query}?",
    ),
    "a single brace": (
        WO_COT_TEXT.replace("Passage: {document}", "Passage: {document"),
        f"my.yaml:{WO_COT_LINE + 1 + QUERY_LINE}: stray '{{' in the template",
    ),
    "JSON braces not escaped": (
        WO_COT_TEXT + '\nAnswer as {"score": 2}.',
        "is not a placeholder (a judgment template takes {document}, {query}); write {{ and }} for "
        "literal braces",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(TEMPLATE_CASES))
def test_bad_templates_fail_the_dry_run_naming_file_and_placeholder(tmp_path, case):
    text, message = TEMPLATE_CASES[case]
    wd = peras_run(tmp_path, {"peras": {"templates": {"wo_cot": {"template": "my.yaml", "max_tokens": 4}}}})
    (wd / "my.yaml").write_text(_template(text), encoding="utf-8")
    out = failed_with(run(wd, "-n", "all"), message)
    assert "config key 'peras.templates.wo_cot.template'" in out


@pytest.mark.slow
def test_labels_outside_the_grades_and_escaped_braces(tmp_path):
    wd = peras_run(tmp_path, {"peras": {"templates": {"wo_cot": {"template": "my.yaml", "max_tokens": 4}}}})
    (wd / "my.yaml").write_text(
        'labels: ["0", "1", "2", "3", "4"]\n' + _template(WO_COT_TEXT), encoding="utf-8"
    )
    failed_with(
        run(wd, "-n", "all"),
        "config key 'peras.templates.wo_cot.template': my.yaml declares "
        "labels ['4']: PERAS compares labels with the human grades",
    )
    # literal braces through the documented escape: accepted
    (wd / "my.yaml").write_text(_template(WO_COT_TEXT + '\nAnswer as {{"score": N}}.'), encoding="utf-8")
    res = run(wd, "-n", "all")
    assert res.returncode == 0, output(res)[-3000:]


# ------------------------------------------------------------------------------------------------
# 3. Answers outside the template's label set are missing and counted (a judge job through the
#    workflow against a local OpenAI-compatible server that answers these texts)

#: The fixture's passages (by their first words, d1..d8) and the answer the server gives for each.
ANSWERS = {
    "Goldfish keep": "Score: -1",
    "A study": "1st",
    "Goldfish are": "2",
    "The stock": "-1",
    "Wifi uses": "4",
    "Bananas": "Final score: 3",
    "The capital": "2nd",
    "Bluetooth was": "[0]",
}


def scripted_server(answers: dict[str, str]) -> Starlette:
    """Answers each prompt with the scripted text of the passage it contains."""

    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        prompt = body["messages"][-1]["content"]
        text = next(a for passage, a in answers.items() if passage in prompt)
        return JSONResponse(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
            }
        )

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@pytest.mark.slow
def test_out_of_range_and_ordinal_answers_are_missing_and_counted(tmp_path):
    with ServerThread(scripted_server(ANSWERS)) as srv:
        wd = make_workdir(tmp_path / "run", "api")
        (wd / "server.yaml").write_text(
            yaml.safe_dump({"models": {"gpt": {"base_url": srv.base_url, "logprobs": False}}})
        )
        res = snakemake(
            wd,
            "results/peras/judgments/fx/gpt/wo_cot/default.tsv",
            "--configfile",
            str(wd / "server.yaml"),
            cores=1,
            timeout=600,
            env={**os.environ, "JL_WF_KEY": "k"},
        )
        assert res.returncode == 0, output(res)[-4000:]
    table = pd.read_csv(
        wd / "results/peras/judgments/fx/gpt/wo_cot/default.tsv",
        sep="\t",
        dtype={"answer": str},
        keep_default_na=False,
        na_values=[""],
    )
    got = dict(zip(table["answer"], table["label"]))
    # only "2", "Final score: 3" and "[0]" are grades; the other five answers are missing
    assert {a: (None if pd.isna(v) else int(v)) for a, v in got.items()} == {
        "Score: -1": None,
        "1st": None,
        "2": 2,
        "-1": None,
        "4": None,
        "Final score: 3": 3,
        "2nd": None,
        "[0]": 0,
    }
    assert int(table["parsed"].sum()) == 3
    log = (wd / "results/logs/peras/judge/fx/gpt/wo_cot/default.log").read_text(encoding="utf-8")
    assert "8 pairs, 3 parsed, 5 missing (unparsable answers)" in log
    assert [parse_label(a) for a in ANSWERS.values()] == [None, None, 2, None, None, 3, None, 0]


# ------------------------------------------------------------------------------------------------
# 4. Data files: decoding errors at file:line, BOM, empty datasets, repeated pairs


def fixture_copy(tmp_path: Path) -> dict[str, Path]:
    d = tmp_path / "data"
    d.mkdir()
    return {
        k: Path(shutil.copy(FX / f, d / f))
        for k, f in (("qrels", "qrels.txt"), ("topics", "topics.txt"), ("texts", "texts.tsv"))
    }


def prepare(files: dict[str, Path], out: Path, *extra: str) -> int:
    return cli(
        [
            "prepare",
            "fx",
            "--qrels",
            str(files["qrels"]),
            "--topics",
            str(files["topics"]),
            "--texts",
            str(files["texts"]),
            "--out",
            str(out),
            *extra,
        ]
    )


def test_texts_not_utf8_name_file_and_line_and_an_explicit_encoding_reads_them(tmp_path, capsys):
    files = fixture_copy(tmp_path)
    lines = files["texts"].read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"Goldfish", "Goldfish café".encode("latin-1"))  # byte e9, line 3
    files["texts"].write_bytes(b"\n".join(lines))
    assert prepare(files, tmp_path / "t.tsv") == 2
    err = capsys.readouterr().err
    assert f"{files['texts']}:3: not valid utf-8: byte(s) e9 at column 16" in err
    # a file in another encoding reads with `encoding` (no guess): the whole file is latin-1 here
    assert prepare(files, tmp_path / "t.tsv", "--encoding", "latin-1") == 0
    assert "Goldfish café" in (tmp_path / "t.tsv").read_text(encoding="utf-8")


@pytest.mark.parametrize("which", ["qrels", "topics", "texts"])
def test_a_utf8_bom_is_dropped(tmp_path, capsys, which):
    files = fixture_copy(tmp_path)
    assert prepare(files, tmp_path / "plain.tsv") == 0
    files[which].write_bytes(b"\xef\xbb\xbf" + files[which].read_bytes())
    assert prepare(files, tmp_path / "bom.tsv") == 0, capsys.readouterr().err
    assert (tmp_path / "bom.tsv").read_bytes() == (tmp_path / "plain.tsv").read_bytes()


def test_empty_dataset_names_its_key_and_files(tmp_path, capsys):
    files = fixture_copy(tmp_path)
    files["qrels"].write_text("\n\n", encoding="utf-8")
    files["texts"].write_text("", encoding="utf-8")
    assert prepare(files, tmp_path / "t.tsv") == 2
    err = capsys.readouterr().err
    assert (
        f"config key 'datasets.fx': the dataset has no judged pair (qrels {files['qrels']}, "
        f"topics {files['topics']}, texts {files['texts']})"
    ) in err
    assert not (tmp_path / "t.tsv").exists()


def test_pair_repeated_with_different_texts_names_both_lines(tmp_path, capsys):
    files = fixture_copy(tmp_path)
    with open(files["qrels"], "a", encoding="utf-8") as fh:
        fh.write("101 Q0 d1 3\n")
    with open(files["texts"], "a", encoding="utf-8") as fh:
        fh.write("d1\tGoldfish stop growing at 5 cm.\n")
    assert prepare(files, tmp_path / "t.tsv") == 2
    t = files["texts"]
    assert (
        f"{t}:9: pair (qid 101, docid d1) is listed twice with different passage texts: {t}:1 and {t}:9"
    ) in capsys.readouterr().err
    # the same pair repeated with the same text is one pair
    lines = t.read_text(encoding="utf-8").split("\n")
    lines[8] = lines[0]
    t.write_text("\n".join(lines), encoding="utf-8")
    assert prepare(files, tmp_path / "t.tsv") == 0
    assert len(pd.read_csv(tmp_path / "t.tsv", sep="\t")) == 8


def test_llmjudge_passage_listed_twice_with_different_texts(tmp_path, capsys):
    lj = ROOT / "tests" / "fixtures" / "llmjudge"
    docs = tmp_path / "docs.jsonl"
    first = (lj / "docs.jsonl").read_text(encoding="utf-8").splitlines()[0]
    obj = json.loads(first)
    docs.write_text(
        (lj / "docs.jsonl").read_text(encoding="utf-8") + json.dumps({**obj, "doc": "another text"}) + "\n",
        encoding="utf-8",
    )
    n = len((lj / "docs.jsonl").read_text(encoding="utf-8").splitlines()) + 1
    rc = cli(
        [
            "prepare",
            "lj",
            "--format",
            "llmjudge",
            "--qrels",
            str(lj / "qrels.txt"),
            "--topics",
            str(lj / "queries.txt"),
            "--texts",
            str(docs),
            "--docid-map",
            str(lj / "docid_map.txt"),
            "--out",
            str(tmp_path / "t.tsv"),
        ]
    )
    assert rc == 2
    assert (
        f"{docs}:{n}: passage {obj['docid']} appears twice with different texts (line 1 and here)"
        in capsys.readouterr().err
    )


@pytest.mark.slow
def test_empty_dataset_through_the_workflow(tmp_path):
    wd = peras_run(tmp_path, {"datasets": {"fx": {"qrels": "empty/qrels.txt", "texts": "empty/texts.tsv"}}})
    (wd / "empty").mkdir()
    (wd / "empty" / "qrels.txt").write_text("\n", encoding="utf-8")
    (wd / "empty" / "texts.tsv").write_text("", encoding="utf-8")
    failed_with(
        run(wd, "results/datasets/fx.tsv"),
        "config key 'datasets.fx': the dataset has no judged pair (qrels empty/qrels.txt, "
        "topics fixtures/trec/topics.txt, texts empty/texts.tsv)",
    )
    assert not (wd / "results" / "datasets" / "fx.tsv").exists()


# ------------------------------------------------------------------------------------------------
# 5. Errors raised inside a job name the model's real key, not models.<name>


@pytest.mark.slow
def test_context_overflow_names_the_model_key(tmp_path):
    wd = peras_run(tmp_path, {"models": {"smollm2": {"n_ctx": 256}}, "personas": {"include": ["LA"]}})
    out = failed_with(
        run(wd, "results/peras/judgments/fx/smollm2/wo_cot/LA.tsv"),
        "config key 'models.smollm2.n_ctx': prompt of",
    )
    assert "<name>" not in out


# ------------------------------------------------------------------------------------------------
# 6. Resources resolve against the workflow being run: a second clone with an edited prompt


def copy_workflow(dest: Path) -> Path:
    """A second copy of the workflow (Snakefile, rules, scripts, schema, report, config, resources,
    profiles, envs) without the library: the judgelab package stays the installed one."""
    dest.mkdir(parents=True)
    shutil.copy(ROOT / "Snakefile", dest / "Snakefile")
    for d in ("config", "resources", "profiles", "envs"):
        shutil.copytree(ROOT / d, dest / d)
    for d in ("rules", "scripts", "schemas", "report"):
        shutil.copytree(ROOT / "workflow" / d, dest / "workflow" / d)
    return dest


@pytest.mark.slow
def test_a_second_clone_runs_its_own_edited_prompt(tmp_path):
    clone = copy_workflow(tmp_path / "clone")
    prompt = clone / "resources" / "prompts" / "peras" / "wo_cot.yaml"
    marker = "EDITED IN THE SECOND CLONE."
    text = prompt.read_text(encoding="utf-8")
    assert "How relevant is this passage" in text
    prompt.write_text(
        text.replace("How relevant is this passage", marker + " How relevant is this passage"),
        encoding="utf-8",
    )
    wd = peras_run(tmp_path, {"personas": {"include": ["default"]}, "datasets": {"fx": {"max_queries": 1}}})
    target = "results/peras/judgments/fx/smollm2/wo_cot/default.tsv"
    res = run(wd, target, snakefile=clone / "Snakefile")
    assert res.returncode == 0, output(res)[-4000:]
    with sqlite3.connect(wd / "cache" / "requests.sqlite") as db:
        requests = [json.loads(r) for (r,) in db.execute("SELECT request FROM responses")]
    assert len(requests) == 4  # the 4 pairs of query 101
    assert all(marker in r["messages"][-1]["content"] for r in requests)
    # the checkout's own workflow sees its unedited prompt: its judge job is out of date
    res = run(wd, "-n", target, "--rerun-triggers", "params")
    assert res.returncode == 0 and "rule peras_judge" in output(res), output(res)[-3000:]
    # everything the cache needs lives beside the configured cache file
    assert (wd / "cache" / "file-hashes.json").is_file()
    assert not (wd / ".judgelab-cache").exists()
    # `judgelab estimate -s <clone>/Snakefile` builds the clone's requests: all cached
    for snakefile, cached in ((clone / "Snakefile", "4"), (ROOT / "Snakefile", "0")):
        out = tmp_path / "estimate.tsv"
        assert (
            cli(
                [
                    "estimate",
                    "-s",
                    str(snakefile),
                    "-d",
                    str(wd),
                    "--configfile",
                    str(wd / "bad.yaml"),
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        judge = pd.read_csv(out, sep="\t", dtype=str).set_index("stage").loc["peras_judge"]
        assert (judge["calls"], judge["cached"]) == ("4", cached)


def test_file_hash_memo_lives_beside_the_cache(tmp_path, monkeypatch):
    from judgelab.llm.backends.local import LocalBackend
    from judgelab.llm.client import CachedClient

    monkeypatch.chdir(tmp_path)
    model = tmp_path / "m.bin"
    model.write_bytes(b"weights")
    with RequestCache(tmp_path / "elsewhere" / "requests.sqlite") as cache:
        backend = LocalBackend(model)  # the model loads at its first call: none here
        CachedClient(backend, cache)  # binds the backend to the cache: its state goes beside it
        digest = backend.identity()["model_sha256"]
    assert digest == file_sha256(model, None)
    memo = json.loads((tmp_path / "elsewhere" / "file-hashes.json").read_text())
    assert list(memo.values()) == [digest]
    assert not (tmp_path / ".judgelab-cache").exists()


def cached_answers(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db, timeout=30) as conn:
        try:
            return conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        except sqlite3.OperationalError:  # the table is not created yet
            return 0


@pytest.mark.slow
def test_after_a_killed_run_unlock_and_rerun_pays_nothing_twice(tmp_path):
    """README: after a kill, `snakemake --unlock`, then rerun with --rerun-incomplete."""
    wd = peras_run(tmp_path, {"personas": {"include": ["default"]}})  # the first LLM job: judge default
    db = wd / "cache" / "requests.sqlite"
    cmd = snakemake_cmd(wd, "all", "--configfile", str(wd / "bad.yaml"), cores=1)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while cached_answers(db) == 0:  # the first judge job has answers in the cache
            assert proc.poll() is None and time.monotonic() < deadline, "the run ended before the kill"
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the run and its job, as a power cut would
        proc.wait()
    paid = cached_answers(db)
    target = "results/peras/judgments/fx/smollm2/wo_cot/default.tsv"
    failed_with(run(wd, target), "--unlock")
    res = run(wd, "--unlock")
    assert res.returncode == 0, output(res)[-3000:]
    res = run(wd, target, "--rerun-incomplete")
    assert res.returncode == 0, output(res)[-3000:]
    log = (wd / "results/logs/peras/judge/fx/smollm2/wo_cot/default.log").read_text(encoding="utf-8")
    assert f"8 requests, {paid} cached, {8 - paid} to send" in log
    assert cached_answers(db) == 8
