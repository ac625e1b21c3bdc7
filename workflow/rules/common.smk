# Helpers shared by the rules. Every question (which personas, which raw files, which judges,
# where a result goes) is answered by PROJECT (judgelab.project.Project); these only adapt its
# answers to Snakemake's input functions and params.
import json
import re

from snakemake.exceptions import WorkflowError

RESULTS = PROJECT.results
path = PROJECT.path


def model_param(wildcards):
    """The model entry as a deterministic string (a tracked param: editing it reruns its jobs)."""
    return PROJECT.model_param(wildcards.model)


def _local_cores():
    """--cores of a run on this machine, or None (a cluster run: --jobs/an executor; no --cores)."""
    try:
        cores = workflow.cores
    except WorkflowError:
        return None
    if workflow.nodes is not None or not workflow.local_exec or not isinstance(cores, int):
        return None
    return cores


LOCAL_CORES = _local_cores()


def reserved_threads(models):
    """The threads a job of these models reserves from --cores (Project.job_threads)."""
    return PROJECT.job_threads(models, LOCAL_CORES)


def model_threads(wildcards):
    return reserved_threads([wildcards.model])


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
