# Ranking stage 1 - runs: per dataset with `source: systems`, one job per system ranking the
# dataset table's passages (judgelab.studies.ranking.systems); with `source: download`, one job
# per run file. Runs of `source: files` are the user's files (no job). One job per run, so a new
# run adds its own jobs and leaves the others' files untouched.


# compute nodes of a cluster are often offline: downloads run on the submitting host
localrules:
    ranking_download_run,


rule ranking_system:
    input:
        pairs=path("dataset"),
    output:
        run=path("ranking_run"),
    log:
        PROJECT.log("ranking/{dataset}/runs/{run}"),
    wildcard_constraints:
        dataset=RANKING_SYSTEMS_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the run's name, the ranker's entry, its candidates and depth
        system=lambda wc: RANKING.system(wc.run).param(),
    script:
        "../../scripts/ranking/system.py"


rule ranking_download_run:
    output:
        run=path("ranking_run"),
    log:
        PROJECT.log("ranking/{dataset}/download/{run}"),
    wildcard_constraints:
        dataset=RANKING_DOWNLOAD_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        url=lambda wc: RANKING.run_url(wc.dataset, wc.run),
    script:
        "../../scripts/ranking/download.py"
