# Shared stage - the run's manifest: which package, commit, dependencies, model files and config
# produced the result folder (judgelab.project.manifest).


localrules:
    manifest,


rule manifest:
    output:
        manifest=path("manifest"),
    log:
        PROJECT.log("manifest"),
    conda:
        "../../envs/judgelab.yaml"
    params:
        settings=lambda wc: PROJECT.manifest_settings().param(),
    script:
        "../scripts/manifest.py"
