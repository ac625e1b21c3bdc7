# Shared stage - published judges: a file of the catalog (resources/published/catalog.tsv and the
# config's published_judges.entries) downloaded from its URL, or copied from published_judges.mirror,
# its size and SHA-256 checked.


# compute nodes of a cluster are often offline: downloads run on the submitting host
localrules:
    download_published_judge,


rule download_published_judge:
    output:
        labels=path("published"),
    log:
        PROJECT.log("published/{judge}/{dataset}"),
    wildcard_constraints:
        judge=names_re(PROJECT.catalog.judges),
        dataset=names_re(sorted({d for j in PROJECT.catalog.judges.values() for d in j.files})),
    conda:
        "../../envs/judgelab.yaml"
    params:
        download=published_download,
    script:
        "../scripts/download_published_judge.py"
