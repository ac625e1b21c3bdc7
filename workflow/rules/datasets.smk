# Shared stage - datasets: download (or take the bundled sample / given files), normalise, subset.


# compute nodes of a cluster are often offline: downloads run on the submitting host
localrules:
    download_dataset,
    download_qrels_topics,


# A downloaded dataset's qrels, topics and passage texts; download_qrels_topics (first where both
# match): the qrels and topics of one whose passages no study reads (imported judges only:
# PROJECT.needs_texts)
ruleorder: download_qrels_topics > download_dataset


rule download_dataset:
    output:
        qrels=path("raw", kind="qrels"),
        topics=path("raw", kind="topics"),
        texts=path("raw", kind="texts"),
    log:
        PROJECT.log("download/{dataset}"),
    conda:
        "../../envs/judgelab.yaml"
    params:
        urls=lambda wc: json.dumps(PROJECT.download_urls(wc.dataset), sort_keys=True),
    script:
        "../scripts/download_dataset.py"


rule download_qrels_topics:
    output:
        qrels=path("raw", kind="qrels"),
        topics=path("raw", kind="topics"),
    log:
        PROJECT.log("download/{dataset}"),
    wildcard_constraints:
        dataset=names_re(PROJECT.downloads(texts=False)),
    conda:
        "../../envs/judgelab.yaml"
    params:
        urls=lambda wc: json.dumps(PROJECT.download_urls(wc.dataset), sort_keys=True),
    script:
        "../scripts/download_dataset.py"


rule prepare_dataset:
    input:
        unpack(lambda wc: PROJECT.raw_inputs(wc.dataset)),
        # datasets.<name>.reference: annotators' labels replacing the grades (empty: none)
        reference=lambda wc: PROJECT.reference_files(wc.dataset),
    output:
        table=path("dataset"),
    log:
        PROJECT.log("datasets/{dataset}"),
    conda:
        "../../envs/judgelab.yaml"
    resources:
        **cpu_job(30, 4000),
    params:
        selection=lambda wc: json.dumps(PROJECT.selection(wc.dataset), sort_keys=True),
        # the bundled sample by name and content, not as input files: a run folder moved
        # relative to the workflow has nothing to do
        bundled=lambda wc: PROJECT.raw_bundled(wc.dataset),
    script:
        "../scripts/prepare_dataset.py"
