# Helpers shared by the rules. Every question (which personas, which raw files, which judges,
# where a result goes) is answered by PROJECT (judgelab.wiring.facade.Project); these only adapt its
# answers to Snakemake's input functions and params.
import json
import re

from snakemake.exceptions import WorkflowError

from judgelab.wiring.facade import API_BACKENDS

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


def _job_models(models):
    """The models of a job: ``models(wildcards)``, or the job's ``model`` wildcard."""
    return models if models is not None else (lambda wildcards: [wildcards.model])


def model_threads(models=None):
    """``threads:`` of a job that calls a model: the model's own `threads` (Project.job_threads).
    ``models``: a function of the wildcards giving the job's models (default: its `model`)."""
    of = _job_models(models)
    return lambda wildcards: reserved_threads(of(wildcards)) if of(wildcards) else 1


def model_job(runtime, models=None):
    """``resources:`` of a job that calls a model (write ``**model_job(minutes)`` in the rule):

    * ``<backend>_jobs``: 1 for a job calling that provider, so ``--resources openai_jobs=N`` (see
      profiles/) caps how many such jobs run at once, whatever their models;
    * ``runtime`` (minutes: the rule's, a day for a batch-API model) and ``mem_mb`` (a local
      GGUF model is held in memory, an API model is not), scaled by the attempt so a retried job
      gets more; cluster executors (profiles/slurm) read them, a local run ignores them.
    """
    of = _job_models(models)
    res = {
        f"{backend}_jobs": (lambda wildcards, b=backend: int(PROJECT.uses_backend(of(wildcards), b)))
        for backend in API_BACKENDS
    }
    res["runtime"] = lambda wildcards, attempt: PROJECT.job_runtime_min(of(wildcards), runtime) * attempt
    res["mem_mb"] = lambda wildcards, attempt: PROJECT.job_memory_mb(of(wildcards)) * attempt
    return res


def cpu_job(runtime, mem_mb):
    """``resources:`` of a CPU analysis job with more than the profile's default-resources
    (write ``**cpu_job(minutes, mb)``), scaled by the attempt."""
    return {
        "runtime": lambda wildcards, attempt: runtime * attempt,
        "mem_mb": lambda wildcards, attempt: mem_mb * attempt,
    }


def names_re(names):
    """A wildcard constraint matching exactly these names (nothing when empty)."""
    return "|".join(re.escape(n) for n in names) or "(?!x)x"


def published_download(wildcards):
    """The download param (a tracked param, sorted JSON) of a published judge's file: an error
    names the judge's datasets when it has no file for the one asked for."""
    PROJECT.catalog.file(wildcards.judge, wildcards.dataset)
    return json.dumps(PROJECT.published_download(wildcards.judge, wildcards.dataset), sort_keys=True)


def persona_param(wildcards):
    return PROJECT.persona_param(wildcards.persona)


def persona_input(wildcards):
    return PROJECT.persona_input(wildcards.persona)


def await_checkpoints(study):
    """Wait for the checkpoints whose output decides the study's model-calling jobs
    (StudyPlan.checkpoints): Snakemake evaluates the caller again once they have run."""
    for rule, wildcards in PROJECT.plan(study).checkpoints():
        getattr(checkpoints, rule).get(**wildcards)


def provenance_settings(wildcards):
    """The provenance job's param (the study's model-calling jobs), once they are known."""
    await_checkpoints(wildcards.study)
    return PROJECT.provenance_settings(wildcards.study).param()


def provenance_tables(wildcards):
    """The answer table (first output) of every model-calling job of the study, in plan order."""
    await_checkpoints(wildcards.study)
    return [
        expand(getattr(rules, job.rule).output[0], **{k: [v] for k, v in job.wildcards})[0]
        for job in PROJECT.provenance_jobs(wildcards.study)
    ]
