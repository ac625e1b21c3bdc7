# judgelab: LLM relevance judges as a cached, reproducible Snakemake graph.
# Shared stages (datasets, personas) and one rules file per study live in workflow/rules/; the code
# they run is the judgelab package (workflow/src/judgelab). Configuration: config/config.yaml,
# documented in config/README.md and validated against workflow/schemas/config.schema.yaml.

import sys
import time
from pathlib import Path

from snakemake.utils import min_version

from judgelab.cache.store import default_cache_path
from judgelab.llm.backends.native import deaths_lines
from judgelab.project.config import user_layers
from judgelab.wiring.facade import Project
from judgelab.studies import STUDIES

min_version("8.0")


configfile: "config/config.yaml"


# Validates the config against the schema (filling the schema's defaults), resolves every name it
# uses and answers every question the rules ask (personas, raw files, judges, result paths).
# Prompts, personas and the bundled sample are read from this workflow's own resources/. A study
# that only the shipped defaults enable and that has nothing to do under the user's config (their
# --configfile, --config, a run folder's own config/config.yaml) is skipped, saying why.
PROJECT = Project(
    config,
    workflow.basedir,
    user_layers=user_layers(
        "config/config.yaml", workflow.basedir, overrides=workflow.config_settings.overwrite_config
    ),
)
for _study, _why in PROJECT.skipped.items():
    print(
        f"judgelab: study {_study} skipped: {_why.rstrip('.')} (only the shipped config/config.yaml "
        f"enables it; `{_study}: {{enabled: true}}` in your config makes this an error)",
        file=sys.stderr,
    )
# What planning left out and why (e.g. published judges that give scores where a study takes labels).
for _notice in PROJECT.notices:
    print(f"judgelab: {_notice}", file=sys.stderr)


report: "workflow/report/workflow.rst"


# Secrets (API keys, the AWS chain of Bedrock models) are never needed to parse or dry-run the
# workflow: `snakemake -n` of a paper config works without them. The variables of the API models
# this run calls that are set are passed on to the jobs (envvars: executors that do not inherit
# the environment); jobs read the key from their environment, so it is never a param, an input or
# a log line.
envvars:
    *PROJECT.api_key_envvars_set(),


# A run that has jobs to do stops here, before any job, naming a missing key variable or what the
# AWS chain lacks (onstart: not run by a dry run, by --touch or with --no-hooks; every job that
# calls a provider checks its own model's key again before its first call).
onstart:
    if not workflow.touch:
        PROJECT.check_secrets()


# A local model's native library that killed its job by a signal (SIGSEGV, SIGILL...) left a record
# beside the request cache (judgelab.llm.backends.native): one line each, naming the library, the
# likely cause and the command that fixes it, after Snakemake's own report of the failed jobs.
STARTED = time.time()


onerror:
    for _line in deaths_lines(Path(config.get("cache") or default_cache_path()).parent, STARTED):
        print(_line, file=sys.stderr)


wildcard_constraints:
    dataset="[^/]+",
    model="[^/]+",
    template="[^/]+",
    persona="[^/]+",


include: "workflow/rules/common.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/published.smk"
include: "workflow/rules/judges.smk"
include: "workflow/rules/personas.smk"
include: "workflow/rules/manifest.smk"
include: "workflow/rules/provenance.smk"


# one rules file per study, in the order of judgelab.studies.STUDIES
for _study in STUDIES:

    include: f"workflow/rules/{_study}/{_study}.smk"


localrules:
    all,


rule all:
    default_target: True
    input:
        PROJECT.all_targets(),
