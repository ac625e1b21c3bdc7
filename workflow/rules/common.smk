# Helpers shared by the rules: configuration look-ups, persona and template texts, targets.
import json

from judgelab.errors import InputError
from judgelab.personas import resolve_personas
from judgelab.prompts import load_template

RESULTS = config["results"]
DATASETS = list(config["datasets"])
MODELS = list(config["models"])
TEMPLATES = list(config["templates"])
PERSONAS = resolve_personas(config)
GEN = config["personas"]["generation"]

if GEN["model"] not in config["models"]:
    raise InputError(f"model {GEN['model']!r} is not in `models`", key="personas.generation.model")

# The text of every template, read once; rendered texts go into params so that editing a
# template or a persona reruns exactly the jobs that use it.
TEMPLATE_TEXT = {t: load_template(spec["template"]) for t, spec in config["templates"].items()}
CONFIDENCE_TEXT = load_template(config["confidence"]["template"])


wildcard_constraints:
    dataset="[^/]+",
    model="[^/]+",
    template="[^/]+",
    persona="[^/]+",


def generated_persona_ids():
    """Personas the generation rule writes: those of the persona file except the empty default."""
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
    return expand(job_path(stage, ext), dataset=DATASETS, model=MODELS, template=TEMPLATES,
                  persona=list(PERSONAS))


def all_targets():
    targets = [f"{RESULTS}/metrics/metrics.tsv", f"{RESULTS}/personas/personas.tsv"]
    return targets
