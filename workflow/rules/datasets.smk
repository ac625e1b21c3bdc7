# Stage 1 - datasets: download (or take the bundled sample / given files), normalise, subset.


rule download_dataset:
    output:
        qrels=f"{RESULTS}/raw/{{dataset}}/qrels.raw",
        topics=f"{RESULTS}/raw/{{dataset}}/topics.raw",
        texts=f"{RESULTS}/raw/{{dataset}}/texts.raw",
    params:
        urls=download_urls,
    log:
        f"{RESULTS}/logs/download/{{dataset}}.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/download_dataset.py"


rule prepare_dataset:
    input:
        unpack(raw_files),
    output:
        table=f"{RESULTS}/datasets/{{dataset}}.tsv",
    params:
        selection=selection_param,
    log:
        f"{RESULTS}/logs/datasets/{{dataset}}.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/prepare_dataset.py"
