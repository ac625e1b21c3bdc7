# Helpers shared by the rules. Every question (which personas, which raw files, which judges,
# where a result goes) is answered by PROJECT (judgelab.config.Project); these only adapt its
# answers to Snakemake's input functions and params.
import json
import re

RESULTS = PROJECT.results
path = PROJECT.path


def model_param(wildcards):
    """The model entry as a deterministic string (a tracked param: editing it reruns its jobs)."""
    return PROJECT.model_param(wildcards.model)


def model_threads(wildcards):
    return PROJECT.model_threads(wildcards.model)


def api_jobs(backend):
    """Resource `<backend>_jobs`: 1 for a job calling that provider, so `--resources openai_jobs=N`
    (see profiles/) caps how many such jobs run at once, whatever their models."""
    return lambda wildcards: int(PROJECT.config["models"][wildcards.model]["backend"] == backend)


def names_re(names):
    """A wildcard constraint matching exactly these names (nothing when empty)."""
    return "|".join(re.escape(n) for n in names) or "(?!x)x"


def persona_param(wildcards):
    return PROJECT.persona_param(wildcards.persona)


def persona_input(wildcards):
    return PROJECT.persona_input(wildcards.persona)
