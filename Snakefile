# judgelab: LLM relevance judges as a cached, reproducible Snakemake graph.
# Stages live in workflow/rules/<stage>.smk; the code they run is the judgelab package
# (workflow/src/judgelab). Configuration: config/config.yaml, documented in config/README.md.

from snakemake.utils import min_version, validate

min_version("8.0")


configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"


# API keys: only the variables of the API models this config uses (none for the local default).
# Snakemake stops before any job when one is unset, naming it; jobs read the key from their
# environment, so it is never a param, an input or a log line.
envvars:
    *api_key_envvars(config),


wildcard_constraints:
    dataset="[^/]+",
    model="[^/]+",
    template="[^/]+",
    persona="[^/]+",


include: "workflow/rules/datasets.smk"
include: "workflow/rules/personas.smk"
include: "workflow/rules/judge.smk"
include: "workflow/rules/confidence.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/metrics.smk"
include: "workflow/rules/imported.smk"
include: "workflow/rules/significance.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/classifier.smk"


rule all:
    input:
        all_targets(),
    default_target: True
