# Stage 1 - datasets: download (or take the bundled sample / given files), normalise, subset.


def raw_files(wildcards):
    """The raw qrels/topics/texts of a dataset, by its `source`."""
    d = config["datasets"][wildcards.dataset]
    if d["source"] == "sample":
        folder = f"resources/sample/{wildcards.dataset}"
        ext = "jsonl" if d["format"] == "llmjudge" else "tsv"
        return {"qrels": f"{folder}/qrels.txt", "topics": f"{folder}/topics.txt",
                "texts": f"{folder}/texts.{ext}"}
    if d["source"] == "download":
        folder = f"{RESULTS}/raw/{wildcards.dataset}"
        return {k: f"{folder}/{k}.raw" for k in ("qrels", "topics", "texts")}
    missing = [k for k in ("qrels", "topics", "texts") if not d.get(k)]
    if missing:
        raise InputError(f"source 'files' needs {missing}", key=f"datasets.{wildcards.dataset}")
    return {k: d[k] for k in ("qrels", "topics", "texts")}


def download_urls(wildcards):
    from judgelab.datasets import source_urls

    d = config["datasets"][wildcards.dataset]
    return json.dumps(source_urls(wildcards.dataset, d.get("urls")), sort_keys=True)


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


def selection_param(wildcards):
    d = config["datasets"][wildcards.dataset]
    keys = ("format", "queries", "max_queries", "per_grade", "seed", "docid_map")
    return json.dumps({k: d.get(k) for k in keys}, sort_keys=True)


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
