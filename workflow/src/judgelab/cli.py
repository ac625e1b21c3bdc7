"""``judgelab``: the library's main operations from the shell (the workflow runs the same code).

judgelab download dl19 --out data/dl19            # raw files from the public sources [--no-texts]
judgelab prepare dl19 --qrels .. --topics .. --texts .. --out dl19.tsv [--per-grade 10]  # --texts optional
judgelab peras judge dl19.tsv --persona LA --template peras/wo_cot --out j.tsv   # a study's job by hand
judgelab peras confidence dl19.tsv j.tsv --persona LA --out c.tsv
judgelab peras metrics dl19.tsv j.tsv c.tsv
judgelab personas                                  # the Table 1 conditions
judgelab cut-sample ../shared/data/trec-dl --out resources/sample
judgelab cache [stats]                             # request-cache statistics
judgelab cache check                               # intact? does the named file alone hold every answer?
judgelab cache merge                               # fold a shards-mode cache's shards into its file
judgelab cache salvage [BROKEN NEW]                # copy the intact answers of a damaged cache
judgelab estimate --configfile config/paper-peras.yaml   # calls, tokens, cost: nothing sent
judgelab published [--source S] [--method M] [--tsv]      # the published judges: catalog, downloaded?
judgelab published --sources                       # each source's paper, repository, licence
judgelab endpoints --url-dir endpoints --model NAME=SERVED --out config/endpoints.yaml
judgelab annotate serve pairs.tsv --out labels --annotator ana   # label pairs in a browser
judgelab annotate agreement labels/ana.qrels labels/bob.qrels     # the annotators' agreement
judgelab annotate choose dl21.tsv --run r1 --run r2 --labels j.tsv --topics 5 --out pairs.tsv
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path

from judgelab.errors import InputError, JudgelabError


def _model_spec(args) -> dict:
    spec = {"backend": "local", "model_path": args.model_path, "n_ctx": args.n_ctx, "threads": args.threads}
    return spec


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model-path", default=None, help="GGUF file (default: the embedded SmolLM2)")
    p.add_argument("--n-ctx", type=int, default=2048)
    p.add_argument("--threads", type=int, default=1)
    _add_cache_args(p)
    p.add_argument("--placement", choices=["user", "system"], default="user")
    p.add_argument("--persona", default="default", help="persona id of the persona file")
    p.add_argument("--persona-file", default="peras_table1")


DEFAULT_CACHE = ".judgelab-cache/requests.sqlite"


def _add_config_args(p: argparse.ArgumentParser) -> None:
    """A command that reads the run's config as `snakemake -d DIR --configfile F` does."""
    p.add_argument(
        "--configfile",
        action="append",
        default=[],
        help="config file merged over DIR/config/config.yaml (repeatable)",
    )
    p.add_argument("-d", "--directory", default=".", help="working directory of the run (default .)")


def _add_cache_args(p: argparse.ArgumentParser, default=DEFAULT_CACHE) -> None:
    """--cache, --cache-mode, --cache-lease: the config keys cache, cache_mode, cache_lease."""
    p.add_argument("--cache", default=default, help=f"the request cache file (default {DEFAULT_CACHE})")
    p.add_argument(
        "--cache-mode",
        choices=["auto", "wal", "shards"],
        default=None if default is not argparse.SUPPRESS else default,
        help="how the cache opens (config key cache_mode; default JUDGELAB_CACHE_MODE, else auto)",
    )
    p.add_argument(
        "--cache-lease",
        type=float,
        default=None if default is not argparse.SUPPRESS else default,
        help="seconds a claim on a request in flight stays valid (config key cache_lease; default 60)",
    )


def _cache_config(args):
    from judgelab.cache.store import CacheConfig

    return CacheConfig(args.cache, args.cache_mode, args.cache_lease)


def _persona_text(args) -> str:
    from judgelab.llm.personas import load_persona_file

    personas = load_persona_file(args.persona_file)
    if args.persona not in personas:
        raise InputError(f"unknown persona {args.persona!r}; known: {sorted(personas)}")
    return personas[args.persona].instruction


@contextlib.contextmanager
def _chdir(path: str | Path):
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _assignments(items: list[str], option: str, form: str) -> dict[str, str]:
    """``NAME=VALUE`` option values as a mapping; anything else is an error naming the option."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise InputError(f"{option} expects {form}, got {item!r}")
        out[name] = value
    return out


#: The commands named before they said their study: old name -> the study's command (still run,
#: after a one-line notice on stderr).
DEPRECATED = {
    "judge": ("peras", "judge"),
    "confidence": ("peras", "confidence"),
    "metrics": ("peras", "metrics"),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DEPRECATED:
        new = DEPRECATED[argv[0]]
        print(
            f"judgelab: `judgelab {argv[0]}` is deprecated, use `judgelab {' '.join(new)}` (same arguments)",
            file=sys.stderr,
        )
        argv = [*new, *argv[1:]]
    parser = argparse.ArgumentParser(
        prog="judgelab", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("download", help="download a dataset's raw files from its public sources")
    p.add_argument("dataset")
    p.add_argument("--out", required=True, help="folder for qrels.raw, topics.raw, texts.raw")
    p.add_argument(
        "--no-texts",
        action="store_true",
        help="qrels and topics only (a dataset that only imported judges label needs no passage texts)",
    )

    p = sub.add_parser("prepare", help="normalise raw files into one table, with an optional subset")
    p.add_argument("dataset")
    p.add_argument("--format", choices=["trec", "llmjudge"], default="trec")
    p.add_argument("--qrels", required=True)
    p.add_argument("--topics", required=True)
    p.add_argument(
        "--texts",
        help="judged-text file (trec) or passage JSONL (llmjudge); omitted: the passages stay empty",
    )
    p.add_argument("--docid-map")
    p.add_argument("--encoding", default="utf-8", help="text encoding of the raw files (default utf-8)")
    p.add_argument("--queries", nargs="*", default=[])
    p.add_argument("--max-queries", type=int)
    p.add_argument("--per-grade", type=int)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", required=True)

    p = sub.add_parser(
        "peras",
        help="PERAS's jobs by hand: judge, confidence, metrics",
        description="One PERAS job outside the workflow, with the embedded model or a GGUF file.",
    )
    peras = p.add_subparsers(dest="study_cmd", required=True)
    p = peras.add_parser("judge", help="judge every pair of a dataset table")
    p.add_argument("pairs")
    p.add_argument("--template", default="peras/wo_cot")
    p.add_argument("--max-tokens", type=int, default=8)
    p.add_argument("--out", required=True)
    _add_model_args(p)

    p = peras.add_parser("confidence", help="ask the confidence instruction for judged pairs")
    p.add_argument("pairs")
    p.add_argument("judgments")
    p.add_argument("--template", default="peras/confidence")
    p.add_argument("--max-tokens", type=int, default=8)
    p.add_argument("--out", required=True)
    _add_model_args(p)

    p = peras.add_parser("metrics", help="agreement and calibration of one judgment run")
    p.add_argument("pairs")
    p.add_argument("judgments")
    p.add_argument("confidence")

    p = sub.add_parser("personas", help="list the persona conditions of a persona file")
    p.add_argument("--persona-file", default="peras_table1")

    p = sub.add_parser("cut-sample", help="cut the bundled sample from the full TREC DL files")
    p.add_argument("trec_dir")
    p.add_argument("--out", default="resources/sample")
    p.add_argument("--datasets", nargs="*", default=["dl19", "dl20"])
    p.add_argument("--queries", type=int, default=3)
    p.add_argument("--per-grade", type=int, default=2)
    p.add_argument("--seed", type=int, default=13)

    p = sub.add_parser(
        "cache",
        help="request-cache statistics and maintenance",
        description="Without a command: the cache's statistics. `merge` folds the shards of a "
        "shards-mode cache (<cache>.d/) into its main file (run it when no job runs); `salvage` "
        "copies every answer that can still be read from a damaged cache file into another.",
    )
    _add_cache_args(p)
    cache_sub = p.add_subparsers(dest="cache_cmd")
    q = cache_sub.add_parser("stats", help="answers, size and mode of the cache (the default)")
    _add_cache_args(q, argparse.SUPPRESS)
    q = cache_sub.add_parser(
        "check",
        help="whether the cache is intact (SQLite's integrity check, every answer's digest) and the named "
        "file alone holds every answer (exit 0), the named file alone is not complete (1), or the cache "
        "is damaged (2); writes nothing",
    )
    _add_cache_args(q, argparse.SUPPRESS)
    q = cache_sub.add_parser("merge", help="fold the shards <cache>.d/*.sqlite into the cache file")
    _add_cache_args(q, argparse.SUPPRESS)
    q = cache_sub.add_parser(
        "salvage",
        help="copy the intact answers of a damaged cache file; without files: the cache (--cache) in "
        "place (moved aside to <cache>.broken with its -wal and -shm, salvaged into a new file)",
    )
    _add_cache_args(q, argparse.SUPPRESS)
    q.add_argument("damaged", nargs="?", help="a damaged cache file (read with its -wal)")
    q.add_argument("dest", nargs="?", help="the cache file to copy them into (e.g. the config's `cache`)")

    p = sub.add_parser(
        "estimate",
        help="calls, tokens and cost of a config before anything is spent",
        description="Builds the requests the jobs would send, looks them up in the "
        "request cache (hits are free) and prints calls, tokens and cost per dataset, "
        "model and stage. Reads the config as `snakemake -d DIR --configfile F` does.",
    )
    _add_config_args(p)
    p.add_argument(
        "-s",
        "--snakefile",
        default=None,
        help="the workflow's Snakefile, as given to snakemake -s: its folder's resources "
        "(prompts, personas, sample) and schema are used (default: DIR when it holds "
        "the workflow, else the checkout judgelab is installed from)",
    )
    p.add_argument("--cache", default=None, help="request cache (default: the config's `cache`)")
    p.add_argument(
        "--table",
        action="append",
        default=[],
        metavar="DATASET=PATH",
        help="use this prepared dataset table, or for an evaluator set of the simulation "
        "study its records file in the set's format (repeatable)",
    )
    p.add_argument(
        "--model",
        action="append",
        default=[],
        dest="models",
        help="only this model of the config (repeatable; default: all)",
    )
    p.add_argument("--out", help="also write the table as TSV here")

    p = sub.add_parser(
        "published",
        help="list the published judges a run can name (the catalog and the config's own entries)",
        description="Every published judge of the catalog (resources/published/catalog.tsv) and of "
        "the config's published_judges.entries: source, judge model, method, values, datasets, size, "
        "and whether its files are downloaded under the run's results folder (all, some, no). Reads "
        "the config as `snakemake -d DIR --configfile F` does; without one, the shipped catalog.",
    )
    _add_config_args(p)
    p.add_argument("--source", help="only the judges of this source (e.g. llmjudge-2024)")
    p.add_argument("--method", help="only the judges of this method (e.g. umbrela-zeroshot)")
    p.add_argument("--tsv", action="store_true", help="a tab-separated table (size in bytes)")
    p.add_argument("--sources", action="store_true", help="each source's paper, repository and licence")

    p = sub.add_parser(
        "endpoints",
        help="a config overlay pointing models at running vLLM / llama.cpp servers",
        description="Reads the URL files profiles/vllm/serve.sh writes, checks each server "
        "serves the model, and writes models.NAME: {backend: openai, model, base_url}.",
    )
    p.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="NAME=SERVED",
        help="config model name = the model id the server serves (repeatable)",
    )
    p.add_argument("--url-file", help="one server's URL file (for every --model)")
    p.add_argument("--url-dir", help="folder of NAME.url files, one per --model")
    p.add_argument("--out", required=True, help="the overlay YAML to write (use it as a --configfile)")

    p = sub.add_parser(
        "annotate",
        help="collect human labels in a browser page served on this machine; their agreement",
        description="`serve` shows the pairs of a pairs file one at a time on a local web page "
        "(127.0.0.1, a random token in its URL) and records each label, skip and undo in the "
        "annotator's journal and qrels file under --out; `agreement` compares annotators' qrels "
        "files. See docs/annotate.md.",
    )
    annotate = p.add_subparsers(dest="annotate_cmd", required=True)
    q = annotate.add_parser("serve", help="serve the labelling page for one annotator")
    q.add_argument("pairs", help="TSV with columns qid, docid, query, passage (a dataset table is one)")
    q.add_argument("--out", required=True, help="folder of the journal, qrels and log (<annotator>.*)")
    q.add_argument("--annotator", required=True, help="the annotator's name (names their files)")
    q.add_argument(
        "--template",
        default=None,
        help="judgment template whose labels and definitions are shown (default overrating/graded: "
        "UMBRELA's 0-3)",
    )
    q.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    q.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    q.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --host other than this machine's loopback (a warning: plain http)",
    )
    q = annotate.add_parser(
        "choose",
        help="write the pairs file of the next topics to label, chosen by a strategy",
        description="The pool of the dataset table's topics (every run's top --depth) and a judge's "
        "labels of it: --topics topics chosen by --strategy (random, stratified by the judge's "
        "label mix, or active), deterministic for --seed; each chosen topic's pool pairs with a known passage "
        "(at most --cap) into --out, the pairs file `judgelab annotate serve` reads.",
    )
    q.add_argument("dataset", help="the dataset table (results/datasets/<dataset>.tsv): topics, passages")
    q.add_argument("--run", action="append", required=True, dest="runs", help="a TREC run file (repeatable)")
    q.add_argument("--labels", required=True, help="the judge's labels: a judgment table or a qrels file")
    q.add_argument(
        "--strategy",
        choices=["random", "stratified", "active"],
        default=None,
        help="random, stratified by the judge's label mix, or active: proportional to the judge's "
        "shortfall (1 - the runs' mean --measure under its labels) with a --floor; default random, "
        "the DL21 simulation's choice (docs/annotate.md)",
    )
    q.add_argument(
        "--floor",
        type=float,
        default=None,
        help="active: the share of uniform probability, in (0, 1] (default 0.5)",
    )
    q.add_argument("--measure", default="nDCG@10", help="active: the runs' measure (default nDCG@10)")
    q.add_argument("--topics", type=int, required=True, help="how many topics to choose")
    q.add_argument("--depth", type=int, default=None, help="pool depth (default: ranking.pool_depth's, 10)")
    q.add_argument("--cap", type=int, default=None, help="pairs per topic at most (default 200)")
    q.add_argument("--seed", type=int, default=0)
    q.add_argument(
        "--exclude",
        action="append",
        default=[],
        help="a qrels file whose topics are not chosen again, e.g. an annotator's (repeatable)",
    )
    q.add_argument("--out", required=True, help="the pairs file to write")
    q = annotate.add_parser("agreement", help="kappa and alpha of annotators on the pairs they share")
    q.add_argument("qrels", nargs="+", help="the annotators' qrels files (<annotator>.qrels)")
    q.add_argument("--tsv", action="store_true", help="a tab-separated table instead of Markdown")

    args = parser.parse_args(argv)
    if args.cmd == "peras":
        args.cmd = f"peras {args.study_cmd}"
    try:
        return _run(args)
    except JudgelabError as exc:  # bad input, a provider's refusal, a failed download
        print(f"judgelab: error: {exc}", file=sys.stderr)
        return 2


def _run(args) -> int:
    if args.cmd == "annotate":  # before the imports the other commands need: it starts faster
        _annotate(args)
        return 0
    from judgelab.data.labels import GRADE_LABELS
    from judgelab.llm.judge import Judge
    from judgelab.llm.prompts import load_template, load_template_spec
    from judgelab.llm.session import JobContext
    from judgelab.project.runner import script_logging
    from judgelab.project.stages import prepare_dataset_job
    from judgelab.studies.peras.jobs import confidence_job, job_metrics_job, judge_job

    if args.cmd == "download":
        from judgelab.data.sources import download_dataset, source_urls

        urls = source_urls(args.dataset, texts=not args.no_texts)
        dest = {k: f"{args.out}/{k}.raw" for k in urls}
        download_dataset(urls, dest)
        print(json.dumps(dest, indent=1))
    elif args.cmd == "prepare":
        sel = {
            "format": args.format,
            "encoding": args.encoding,
            "queries": args.queries,
            "max_queries": args.max_queries,
            "per_grade": args.per_grade,
            "seed": args.seed,
            "docid_map": args.docid_map,
        }
        with script_logging(None):
            prepare_dataset_job(args.dataset, args.qrels, args.topics, sel, args.out, args.texts)
    elif args.cmd == "peras judge":
        template = load_template_spec(args.template, kind="judgment")
        judge = Judge(
            model="model",
            spec=_model_spec(args),
            template=template.text,
            labels=tuple(template.labels or GRADE_LABELS),
            persona=_persona_text(args),
            placement=args.placement,
            max_tokens=args.max_tokens,
        )
        with script_logging(None):
            judge_job(args.pairs, args.out, judge, JobContext(_cache_config(args), desc="judge"))
    elif args.cmd == "peras confidence":
        judge = Judge(
            model="model",
            spec=_model_spec(args),
            template=load_template(args.template, kind="confidence"),
            labels=(),
            persona=_persona_text(args),
            placement=args.placement,
            max_tokens=args.max_tokens,
        )
        with script_logging(None):
            confidence_job(
                args.pairs,
                args.judgments,
                args.out,
                judge,
                JobContext(_cache_config(args), desc="confidence"),
            )
    elif args.cmd == "peras metrics":
        import tempfile

        with tempfile.NamedTemporaryFile(suffix=".tsv") as tmp:
            df = job_metrics_job(args.pairs, args.judgments, args.confidence, tmp.name, ids={})
        print(df.T.to_string(header=False))
    elif args.cmd == "personas":
        from judgelab.llm.personas import load_persona_file

        for pid, p in load_persona_file(args.persona_file).items():
            print(f"{pid}\t{p.personality_type}\t{p.instruction[:70]}")
    elif args.cmd == "cut-sample":
        from judgelab.data.sample import cut_trec_sample

        for name in args.datasets:
            print(
                cut_trec_sample(
                    args.trec_dir,
                    name,
                    args.out,
                    n_queries=args.queries,
                    per_grade=args.per_grade,
                    seed=args.seed,
                )
            )
    elif args.cmd == "cache":
        if args.cache_cmd == "check":
            from judgelab.cache.tools import STATUS_EXIT, check

            summary = check(args.cache)
            print(json.dumps(summary, indent=1))
            return STATUS_EXIT[summary["status"]]
        if args.cache_cmd == "merge":
            from judgelab.cache.shards import merge_shards

            with script_logging(None):
                print(json.dumps(merge_shards(args.cache), indent=1))
        elif args.cache_cmd == "salvage":
            from judgelab.cache.tools import salvage, salvage_in_place

            if (args.damaged is None) != (args.dest is None):
                raise InputError("judgelab cache salvage takes both DAMAGED and DEST, or neither (in place)")
            with script_logging(None):
                done = (
                    salvage_in_place(args.cache) if args.damaged is None else salvage(args.damaged, args.dest)
                )
                print(json.dumps(done, indent=1))
        else:
            with _cache_config(args).open() as cache:
                print(json.dumps(cache.stats(), indent=1))
    elif args.cmd == "endpoints":
        from judgelab.llm.endpoints import write_overlay

        pairs = _assignments(args.model, "--model", "NAME=SERVED")
        data = write_overlay(pairs, args.out, url_file=args.url_file, url_dir=args.url_dir)
        for name, spec in data["models"].items():
            print(f"{name}: {spec['model']} at {spec['base_url']}")
    elif args.cmd == "published":
        _published(args)

    elif args.cmd == "estimate":
        from judgelab.wiring.estimate import estimate, format_report
        from judgelab.wiring.facade import Project

        tables = {
            name: str(Path(path).resolve())
            for name, path in _assignments(args.table, "--table", "DATASET=PATH").items()
        }
        root = Path(args.snakefile).resolve().parent if args.snakefile else None
        # the config's relative paths (persona file, templates, raw files) are relative to the
        # run's working directory, as in `snakemake -d DIR`; the options' paths to this one
        configfiles = [str(Path(f).resolve()) if Path(f).exists() else f for f in args.configfile]
        cache_path = str(Path(args.cache).resolve()) if args.cache else None
        if not Path(args.directory).is_dir():
            raise InputError(f"-d {args.directory}: no such directory")
        with _chdir(args.directory):
            project = Project.load(configfiles, ".", root)
            table, notes = estimate(
                project, cache_path=cache_path, directory=".", tables=tables, models=args.models
            )
        print(format_report(table, notes))
        if args.out:
            table.to_csv(args.out, sep="\t", index=False)
    return 0


def _annotate(args) -> None:
    """``judgelab annotate serve | agreement``."""
    if args.annotate_cmd == "serve":
        import logging

        from judgelab.annotate.server import serve

        logging.basicConfig(format="judgelab annotate: %(levelname)s: %(message)s")
        serve(args.pairs, args.out, args.annotator, args.template, args.host, args.port, args.allow_remote)
        return
    if args.annotate_cmd == "choose":
        _choose(args)
        return
    from judgelab.analysis.render import markdown_frame
    from judgelab.annotate.agreement import annotator_agreement

    table = annotator_agreement(args.qrels)
    print(table.to_csv(sep="\t", index=False, na_rep="n/a") if args.tsv else markdown_frame(table), end="")


def _choose(args) -> None:
    """``judgelab annotate choose``: the pool as the ranking study builds it, then the choice."""
    from judgelab.annotate.choose import (
        DEFAULT_CAP,
        DEFAULT_FLOOR,
        DEFAULT_STRATEGY,
        MIN_TOPICS,
        choose,
        read_labels,
    )
    from judgelab.data.readers import read_qrels, run_name
    from judgelab.data.tables import read_dataset, write_tsv
    from judgelab.schema import default
    from judgelab.studies.ranking.jobs import read_runs_checked
    from judgelab.studies.ranking.pool import pool_table

    table = read_dataset(args.dataset)
    files = {run_name(path): path for path in args.runs}
    if len(files) != len(args.runs):
        raise InputError(f"two run files of the same run name among {args.runs}")
    depth = args.depth if args.depth is not None else default("ranking.pool_depth")
    runs = read_runs_checked(files, table["qid"].unique())
    pool_ = pool_table(runs, table, depth)
    exclude = {q.qid for path in args.exclude for q in read_qrels(path)}
    strategy = args.strategy or DEFAULT_STRATEGY
    labels = read_labels(args.labels)
    topic_scores = None
    if strategy == "active":
        from judgelab.studies.ranking.scores import score_labels

        scored = score_labels(runs, labels, [args.measure], key="--measure")
        scored = scored[scored["topic"] != "all"]
        topic_scores = scored.groupby("topic")["value"].mean()
    if args.topics < MIN_TOPICS:
        print(
            f"warning: {args.topics} topics: in the DL21 simulation no strategy's 95% PPI interval covered "
            f"0.93 below {MIN_TOPICS} topics (docs/annotate.md)",
            file=sys.stderr,
        )
    chosen = choose(
        pool_,
        labels,
        args.topics,
        strategy,
        args.seed,
        args.cap if args.cap is not None else DEFAULT_CAP,
        exclude,
        topic_scores,
        args.floor if args.floor is not None else DEFAULT_FLOOR,
    )
    write_tsv(chosen, args.out)
    topics = list(dict.fromkeys(chosen["qid"]))
    print(f"{len(chosen)} pairs of {len(topics)} topics ({strategy}, seed {args.seed}): {' '.join(topics)}")


def _published(args) -> None:
    """``judgelab published``: the catalog of the run in ``args.directory`` (its config, or the
    shipped catalog when it has none), listed or its sources described."""
    from judgelab.data.published import (
        format_listing,
        format_sources,
        listing,
        load_catalog,
        write_listing_tsv,
    )
    from judgelab.schema import default
    from judgelab.wiring.facade import PACKAGE_ROOT, PATHS, Project

    if not Path(args.directory).is_dir():
        raise InputError(f"-d {args.directory}: no such directory")
    configfiles = [str(Path(f).resolve()) if Path(f).exists() else f for f in args.configfile]
    with _chdir(args.directory):
        if configfiles or Path("config/config.yaml").exists():
            project = Project.load(configfiles, ".")
            catalog, results = project.catalog, project.results
        else:  # no run here: the shipped catalog, the default results folder
            catalog, results = load_catalog(Path(PACKAGE_ROOT) / "resources"), default("results")

        def present(judge: str, dataset: str) -> bool:
            return Path(PATHS["published"].format(results=results, judge=judge, dataset=dataset)).is_file()

        if args.sources:
            print(format_sources(catalog))
            return
        rows = listing(catalog, present, source=args.source, method=args.method)
    print(
        write_listing_tsv(rows) if args.tsv else format_listing(rows, catalog.sources, f"{results}/published")
    )


if __name__ == "__main__":
    sys.exit(main())
