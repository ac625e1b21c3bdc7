# judgelab: LLM relevance judges as a cached, reproducible Snakemake graph.
# Shared stages (datasets, personas) and one rules file per study live in workflow/rules/; the code
# they run is the judgelab package (workflow/src/judgelab). Configuration: config/config.yaml,
# documented in config/README.md and validated against workflow/schemas/config.schema.yaml.

from snakemake.utils import min_version

from judgelab.project import Project

min_version("8.0")


configfile: "config/config.yaml"


# Validates the config against the schema (filling the schema's defaults), resolves every name it
# uses and answers every question the rules ask (personas, raw files, judges, result paths).
# Prompts, personas and the bundled sample are read from this workflow's own resources/.
PROJECT = Project(config, workflow.basedir)


report: "workflow/report/workflow.rst"


# API keys: only the variables of the API models this run calls (none for the local default).
# Snakemake stops before any job when one is unset, naming it; jobs read the key from their
# environment, so it is never a param, an input or a log line.
envvars:
    *PROJECT.api_key_envvars(),


# Bedrock models: region and credentials from the AWS chain, checked before any job.
PROJECT.check_credentials()


wildcard_constraints:
    dataset="[^/]+",
    model="[^/]+",
    template="[^/]+",
    persona="[^/]+",


include: "workflow/rules/common.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/personas.smk"
include: "workflow/rules/peras.smk"
include: "workflow/rules/overrating.smk"
include: "workflow/rules/perturbations.smk"
include: "workflow/rules/simulation.smk"
include: "workflow/rules/ranking.smk"


localrules:
    all,


rule all:
    default_target: True
    input:
        PROJECT.all_targets(),
