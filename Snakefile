# judgelab: LLM relevance judges as a cached, reproducible Snakemake graph.
# Stages live in workflow/rules/<stage>.smk; the code they run is the judgelab package
# (workflow/src/judgelab). Configuration: config/config.yaml, documented in config/README.md.

from snakemake.utils import min_version, validate

min_version("8.0")


configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/personas.smk"
include: "workflow/rules/judge.smk"
include: "workflow/rules/confidence.smk"
include: "workflow/rules/metrics.smk"


rule all:
    input:
        all_targets(),
    default_target: True
