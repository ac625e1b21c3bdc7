# Helpers shared by the rules: configuration look-ups, persona and template texts, targets.
import json

from judgelab.backends.api import api_key_envvars
from judgelab.errors import InputError
from judgelab.imported import judge_groups, resolve_imported
from judgelab.personas import resolve_personas
from judgelab.prompts import load_template

RESULTS = config["results"]
DATASETS = list(config["datasets"])
MODELS = list(config["models"])
TEMPLATES = list(config["templates"])
PERSONAS = resolve_personas(config)
# Judges read from files (imported_judges); each becomes a pseudo model of the result paths.
IMPORTED = resolve_imported(config)
# Every dataset x model x template (live models, then imported judges) -> its personas, in order.
GROUPS = judge_groups(DATASETS, MODELS, TEMPLATES, list(PERSONAS), IMPORTED)
GEN = config["personas"]["generation"]

if GEN["model"] not in config["models"]:
    raise InputError(f"model {GEN['model']!r} is not in `models`", key="personas.generation.model")


# The text of every template, read once; rendered texts go into params so that editing a
# template or a persona reruns exactly the jobs that use it.
TEMPLATE_TEXT = {t: load_template(spec["template"]) for t, spec in config["templates"].items()}
CONFIDENCE_TEXT = load_template(config["confidence"]["template"])


def generated_persona_ids():
    """Personas that generate_persona writes: those of the persona file but the empty default."""
    return [p for p, pers in PERSONAS.items() if pers.origin == "paper" and pers.instruction.strip()]


def uses_generated(persona):
    return config["personas"]["source"] == "generated" and persona in generated_persona_ids()


def persona_param(wildcards):
    """The persona instruction as a plain string (empty when it comes from a generated file)."""
    return "" if uses_generated(wildcards.persona) else PERSONAS[wildcards.persona].instruction


def persona_input(wildcards):
    if uses_generated(wildcards.persona):
        return f"{RESULTS}/personas/generated/{GEN['model']}/{wildcards.persona}.json"
    return []


def model_param(wildcards):
    """The model entry as a deterministic string (part of the params Snakemake tracks)."""
    return json.dumps(config["models"][wildcards.model], sort_keys=True)


def model_threads(wildcards):
    return int(config["models"][wildcards.model].get("threads", 1))


def job_path(stage, ext="tsv"):
    return f"{RESULTS}/{stage}/{{dataset}}/{{model}}/{{template}}/{{persona}}.{ext}"


def job_targets(stage, ext="tsv"):
    """The stage's file of every job, live models and imported judges (see GROUPS)."""
    return [job_path(stage, ext).format(dataset=d, model=m, template=t, persona=p)
            for (d, m, t), personas in GROUPS.items() for p in personas]


def all_targets():
    targets = [f"{RESULTS}/metrics/metrics.tsv", f"{RESULTS}/personas/personas.tsv"]
    targets += analysis_targets()  # significance, figures, classifiers: workflow/rules/analysis.smk
    return targets


# -- datasets ---------------------------------------------------------------------------------


def raw_files(wildcards):
    """The raw qrels/topics/texts of a dataset, by its `source`."""
    d = config["datasets"][wildcards.dataset]
    if d["source"] == "sample":
        folder = f"resources/sample/{wildcards.dataset}"
        ext = "jsonl" if d["format"] == "llmjudge" else "tsv"
        return {"qrels": f"{folder}/qrels.txt", "topics": f"{folder}/topics.txt",
                "texts": f"{folder}/texts.{ext}"}
    if d["source"] == "download":
        folder = f"{RESULTS}/raw/{wildcards.dataset}"
        return {k: f"{folder}/{k}.raw" for k in ("qrels", "topics", "texts")}
    missing = [k for k in ("qrels", "topics", "texts") if not d.get(k)]
    if missing:
        raise InputError(f"source 'files' needs {missing}", key=f"datasets.{wildcards.dataset}")
    return {k: d[k] for k in ("qrels", "topics", "texts")}


def download_urls(wildcards):
    from judgelab.datasets import source_urls

    d = config["datasets"][wildcards.dataset]
    return json.dumps(source_urls(wildcards.dataset, d.get("urls")), sort_keys=True)


def selection_param(wildcards):
    d = config["datasets"][wildcards.dataset]
    keys = ("format", "queries", "max_queries", "per_grade", "seed", "docid_map")
    return json.dumps({k: d.get(k) for k in keys}, sort_keys=True)


# -- personas ---------------------------------------------------------------------------------


def generated_persona_files(wildcards=None):
    if not GEN["enabled"] and config["personas"]["source"] != "generated":
        return []
    return expand(f"{RESULTS}/personas/generated/{GEN['model']}/{{persona}}.json",
                  persona=generated_persona_ids())
