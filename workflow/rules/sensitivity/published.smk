# The published files (resources/sensitivity/published.tsv) fetched, their digests checked, and
# each judgment file against the human labels.


rule sensitivity_download:
    output:
        published=SENSITIVITY.downloaded(),
    log:
        PROJECT.log("sensitivity/download"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        downloads=SENSITIVITY.downloads().param(),
    script:
        "../../scripts/sensitivity/download.py"


rule sensitivity_agreement:
    input:
        judgments=[SENSITIVITY.file_path(f) for f in SENSITIVITY.judgments],
        prompts=SENSITIVITY.prompts_file(),
        pairs=[SENSITIVITY.file_path(f) for f in SENSITIVITY.pair_lists()],
        qrels=[
            path("dataset", dataset=SENSITIVITY.published_datasets[d]) for d in SENSITIVITY.qrel_datasets()
        ],
    output:
        **{e: path("sensitivity_agreement", ext=e) for e in ("tsv", "tex", "html")},
        md=report(
            path("sensitivity_agreement", ext="md"),
            caption="../../report/sensitivity/agreement.rst",
            category="Prompt sensitivity",
        ),
    log:
        PROJECT.log("sensitivity/agreement"),
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(20, 2000),
    params:
        selection=SENSITIVITY.selection().param(),
    script:
        "../../scripts/sensitivity/agreement.py"
