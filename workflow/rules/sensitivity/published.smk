# The published files (resources/sensitivity/published.tsv) fetched, their digests checked (when
# the config selects any), and each published judgment file and each live judge's table against
# the human labels.


if SENSITIVITY.downloaded():

    # downloads run on the submitting host on a cluster (compute nodes are often offline)
    localrules:
        sensitivity_download,

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
        tables=[path("dataset", dataset=d) for d in SENSITIVITY.tables()],
        live=[SENSITIVITY.judgments_path(c) for c in SENSITIVITY.live_cells],
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
