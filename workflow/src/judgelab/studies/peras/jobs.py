"""PERAS (seed 000) jobs: judgment, confidence, metrics, imported judges, significance, figures
and the RQ3 classifiers. One function per workflow job; plain paths and values in, files out.

The analysis libraries (scikit-learn, statsmodels, xgboost, lightgbm, matplotlib) are imported
inside the jobs that use them: a judgment job does not pay seconds of imports for them."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from judgelab.data.labels import GRADE_LABELS
from judgelab.data.tables import (
    concat_ids_tables,
    labels_with_confidence,
    read_confidence,
    read_dataset,
    read_ids_table,
    read_judgments,
    read_labelled,
    write_tsv,
)
from judgelab.llm.judging import judge_table
from judgelab.llm.personas import read_persona
from judgelab.llm.session import LLMSession
from judgelab.project.runner import as_value
from judgelab.studies.peras.confidence import run_confidence

log = logging.getLogger("judgelab")


# --------------------------------------------------------------------------------------------
# Judgment and confidence


def judge_job(
    pairs: str,
    out: str,
    *,
    persona: str,
    template: str,
    model: str | dict,
    max_tokens: int,
    placement: str,
    cache: str,
    threads: int | None = None,
    persona_file: str | None = None,
    desc: str = "judge",
    labels: str | Sequence[str] | None = None,
    model_name: str | None = None,
    answer: str = "parse",
    coverage: str | dict | None = None,
) -> pd.DataFrame:
    """One dataset x model x template x persona: every pair judged (seed 000 section 4.2).
    ``persona``: the instruction, or "" with ``persona_file`` (a generated persona); ``labels``:
    the template's label set (JSON or a list; default the grades 0-3); ``model_name``: the key of
    the model in ``models`` (named in errors); ``answer``: ``parse`` (the answer text) or
    ``logits`` (the first answer position's label distribution); ``coverage``: the job's
    coverage check (:class:`judgelab.llm.judging.Coverage`; None: none)."""
    result = judge_table(
        read_dataset(pairs),
        persona=read_persona(persona, persona_file),
        template=template,
        labels=as_value(labels) if labels else GRADE_LABELS,
        model=model,
        max_tokens=max_tokens,
        placement=placement,
        cache=cache,
        threads=threads,
        desc=desc,
        model_name=model_name,
        answer=answer,
        coverage=coverage,
    )
    write_tsv(result, out)
    return result


def confidence_job(
    pairs: str,
    judgments: str,
    out: str,
    *,
    persona: str,
    template: str,
    model: str | dict,
    max_tokens: int,
    placement: str,
    cache: str,
    threads: int | None = None,
    persona_file: str | None = None,
    desc: str = "confidence",
    model_name: str | None = None,
) -> pd.DataFrame:
    """The confidence follow-up (seed 000 Appendix A) for every pair whose label parsed."""
    table = read_dataset(pairs)
    judged = read_judgments(judgments)
    with LLMSession(model, cache, threads, desc, name=model_name) as client:
        result = run_confidence(
            table,
            judged,
            read_persona(persona, persona_file),
            template,
            client,
            max_tokens=int(max_tokens),
            placement=placement,
            desc=desc,
        )
    write_tsv(result, out)
    return result


# --------------------------------------------------------------------------------------------
# Metrics


def _metrics_row(grades: pd.DataFrame, judgments: str, confidence: str) -> dict:
    from judgelab.studies.peras.metrics import job_metrics

    merged = grades.merge(
        read_labelled(judgments, confidence), on=["qid", "docid"], how="inner", validate="one_to_one"
    )
    if len(merged) != len(grades):
        raise ValueError(f"{judgments} does not cover the dataset's {len(grades)} pairs")
    return job_metrics(merged)


def job_metrics_job(
    pairs: str, judgments: str, confidence: str, out: str, ids: dict[str, str]
) -> pd.DataFrame:
    """Metrics of one judgment job (one row)."""
    grades = read_dataset(pairs)[["qid", "docid", "grade"]]
    df = pd.DataFrame([{**ids, **_metrics_row(grades, judgments, confidence)}])
    write_tsv(df, out)
    log.info("%s", df.iloc[0].to_dict())
    return df


def group_metrics_job(
    pairs: str,
    judgments: list[str],
    confidence: list[str],
    personas: list[str],
    out: str,
    ids: dict[str, str],
) -> pd.DataFrame:
    """Metrics of every persona's job of one dataset x model x template (one row per persona);
    ``judgments`` and ``confidence`` are in the order of ``personas``."""
    if not len(judgments) == len(confidence) == len(personas):
        raise ValueError("one judgments and one confidence table per persona expected")
    grades = read_dataset(pairs)[["qid", "docid", "grade"]]
    df = pd.DataFrame(
        [
            {**ids, "persona": p, **_metrics_row(grades, j, c)}
            for p, j, c in zip(personas, judgments, confidence)
        ]
    )
    write_tsv(df, out)
    log.info("%d personas; parse coverage %s", len(df), dict(zip(df["persona"], df["coverage"].round(3))))
    return df


def aggregate_metrics_job(inputs: list[str], out: str) -> pd.DataFrame:
    df = concat_ids_tables(inputs)
    write_tsv(df, out)
    log.info("%d jobs; mean parse coverage %.3f", len(df), df["coverage"].mean())
    return df


# --------------------------------------------------------------------------------------------
# Imported judges


def import_job(
    pairs: str,
    judge_file: str,
    out_judgments: str,
    out_confidence: str,
    *,
    scale: str | None = None,
    confidence_scale: str | None = None,
    source: Mapping[str, str] | None = None,
    encoding: str | None = None,
    out_summary: str | None = None,
    ids: Mapping[str, str] | None = None,
) -> None:
    """An imported judge's qrels-format file -> the judgment and confidence tables of a live judge.
    ``scale`` / ``confidence_scale``: as the judge declares them (None: not declared; see
    :mod:`judgelab.data.imported`). ``source``: the dataset's raw ``qrels`` and ``topics`` (read with
    ``encoding``): the file may label their pairs outside the selection (skipped, counted in the
    import's table ``out_summary``, one row: ``ids``, then
    :data:`judgelab.data.imported.IMPORT_SUMMARY_COLUMNS`)."""
    from judgelab.data.imported import SourcePairs, import_judgments, read_judge

    table = read_dataset(pairs)
    known = SourcePairs.read(source["qrels"], source["topics"], encoding) if source else None
    judge = read_judge(judge_file, table, source=known, scale=scale, confidence_scale=confidence_scale)
    log.info("%s", judge.log_line())
    j, c = import_judgments(table, judge)
    write_tsv(j, out_judgments)
    write_tsv(c, out_confidence)
    if out_summary:
        write_tsv(judge.summary(**dict(ids or {})), out_summary)
    log.info(
        "%s: %d of %d pairs labelled, %d with a confidence",
        judge_file,
        int(j["parsed"].sum()),
        len(j),
        int(c["parsed"].sum()),
    )


def _by_persona(paths: Sequence[str], personas: Sequence[str]) -> dict[str, str]:
    """Map persona ids to their files (the file stem is the persona id)."""
    stems = {Path(p).stem: str(p) for p in paths}
    missing = [p for p in personas if p not in stems]
    if missing:
        raise ValueError(f"no file for personas {missing} among {sorted(stems)}")
    return {p: stems[p] for p in personas}


def _load_group(judgments: Sequence[str], confidence: Sequence[str], personas: Sequence[str]):
    jp, cp = _by_persona(judgments, personas), _by_persona(confidence, personas)
    return ({p: read_judgments(jp[p]) for p in personas}, {p: read_confidence(cp[p]) for p in personas})


# --------------------------------------------------------------------------------------------
# Classifiers


def classifier_job(
    pairs: str,
    judgments: Sequence[str],
    confidence: Sequence[str],
    personas: Sequence[str],
    settings: str | dict,
    out_features: str,
    out_trials: str,
    out_summary: str,
    out_missing: str,
) -> pd.DataFrame:
    from judgelab.studies.peras import classifiers as clf

    cfg = as_value(settings)
    table = read_dataset(pairs)
    j, c = _load_group(judgments, confidence, personas)
    feats = clf.build_features(table, j, c)
    write_tsv(feats, out_features)
    missing = clf.missing_summary(feats)
    write_tsv(missing, out_missing)
    log.info(
        "%d pairs, %d personas; missing labels %d, missing confidences %d (sentinel -1 + "
        "indicator columns: %s)",
        len(feats),
        len(personas),
        int(missing["missing_label"].sum()),
        int(missing["missing_confidence"].sum()),
        [c for c in clf.design_matrix(feats).columns if c.startswith("miss_")],
    )
    specs = clf.parse_specs(cfg.get("models"))
    t0 = time.perf_counter()
    trials, warned = clf.run_trials(
        feats,
        specs,
        trials=int(cfg["trials"]),
        train_fraction=float(cfg["train_fraction"]),
        seed=int(cfg["seed"]),
    )
    log.info(
        "%d trials x %d classifiers in %.1f s; train pairs per trial %s",
        int(cfg["trials"]),
        len(specs),
        time.perf_counter() - t0,
        sorted(set(trials["n_train"])),
    )
    for (name, cat), n in sorted(warned.items()):
        log.warning("%s raised %d %s over the trials", name, n, cat)
    write_tsv(trials, out_trials)
    summary = clf.summarize(trials, [s.name for s in specs])
    write_tsv(summary, out_summary)
    for _, r in summary[summary["kind"] != "persona"].iterrows():
        log.info(
            "%-14s %-8s %.3f (%.3f)%s",
            r["method"],
            r["metric"],
            r["mean"],
            r["sd"],
            f"  [{r['persona']}]" if r["kind"] == "oracle" else "",
        )
    return summary


def classifier_table_job(
    summaries: Sequence[str],
    ids: Sequence[Mapping[str, str]],
    out_tsv: str,
    out_md: str,
    out_tex: str,
    out_html: str,
) -> pd.DataFrame:
    from judgelab.studies.peras import classifiers as clf

    parts = []
    for path, idd in zip(summaries, ids):
        s = pd.read_csv(path, sep="\t", dtype={"persona": str, "method": str})
        for k in ("template", "model", "dataset"):
            s.insert(0, k, idd[k])
        parts.append(s)
    tidy = pd.concat(parts, ignore_index=True)
    write_tsv(tidy, out_tsv)
    wide = clf.table5_wide(tidy)
    Path(out_md).write_text(clf.render_markdown(wide), encoding="utf-8")
    Path(out_tex).write_text(clf.render_latex(wide), encoding="utf-8")
    Path(out_html).write_text(
        clf.render_html(
            wide,
            "Classifiers on persona features: mean (SD) over trials; Oracle = best single persona per metric",
        ),
        encoding="utf-8",
    )
    log.info("classifier table: %d rows", len(wide))
    return tidy


# --------------------------------------------------------------------------------------------
# Significance


def significance_job(
    pairs: str,
    judgments: Sequence[str],
    confidence: Sequence[str],
    personas: Sequence[str],
    settings: str | dict,
    out: str,
    ids: Mapping[str, str],
) -> pd.DataFrame:
    from judgelab.studies.peras import significance as sg

    cfg = as_value(settings)
    table = read_dataset(pairs)
    j, c = _load_group(judgments, confidence, personas)
    judged = {p: labels_with_confidence(j[p], c[p]) for p in personas}
    t0 = time.perf_counter()
    res = sg.persona_vs_reference(
        table,
        judged,
        reference=cfg["reference"],
        n_boot=int(cfg["n_boot"]),
        seed=int(cfg["seed"]),
        alpha=float(cfg["alpha"]),
    )
    for i, k in enumerate(("dataset", "model", "template")):
        res.insert(i, k, ids[k])
    write_tsv(res, out)
    log.info(
        "%d comparisons in %.2f s; %d significant after Holm",
        len(res),
        time.perf_counter() - t0,
        int(res["significant"].sum()) if len(res) else 0,
    )
    return res


def aggregate_significance_job(
    inputs: Sequence[str], metrics: str, out: str, out_joined: str, out_html: str | None = None
) -> None:
    from judgelab.studies.peras import significance as sg

    parts = [read_ids_table(p) for p in inputs]
    parts = [p for p in parts if len(p)]
    sig = (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame(columns=["dataset", "model", "template", "persona", "metric", "significant"])
    )
    write_tsv(sig, out)
    m = read_ids_table(metrics)
    joined = sg.join_metrics(m, sig)
    write_tsv(joined, out_joined)
    if out_html:
        Path(out_html).write_text(sg.render_html(joined), encoding="utf-8")
    log.info(
        "%d comparisons, %d significant after Holm",
        len(sig),
        int(sig["significant"].astype(bool).sum()) if len(sig) else 0,
    )


# --------------------------------------------------------------------------------------------
# Figures


def figures_job(
    pairs: str,
    judgments: Sequence[str],
    confidence: Sequence[str],
    metrics: str,
    significance: str | None,
    personas: Sequence[str],
    settings: str | dict,
    ids: Mapping[str, str],
    out: Mapping[str, str],
) -> None:
    """Radar charts (agreement, calibration), the inter-persona kappa heatmap and its table, and
    the confidence-by-grade chart of one dataset x model x template. ``out`` maps
    radar_agreement, radar_calibration, heatmap, confidence (PNG) and *_pdf, plus
    interpersona and confidence_table (TSV)."""
    from judgelab.studies.peras import figures as fg

    cfg = as_value(settings)
    name = f"{ids['dataset']} / {ids['model']} / {ids['template']}"
    table = read_dataset(pairs)
    j, c = _load_group(judgments, confidence, personas)
    met = pd.read_csv(metrics, sep="\t", dtype={"persona": str})
    met = met.set_index("persona").loc[list(personas)].reset_index()  # the personas' order
    sig = pd.read_csv(significance, sep="\t", dtype={"persona": str}) if significance else None
    reference = cfg["reference"]
    fg.radar(
        met,
        fg.AGREEMENT,
        f"Agreement with human grades - {name}",
        out["radar_agreement"],
        out["radar_agreement_pdf"],
        significance=sig,
        reference=reference,
    )
    fg.radar(
        met,
        fg.CALIBRATION,
        f"Confidence calibration - {name}",
        out["radar_calibration"],
        out["radar_calibration_pdf"],
        significance=sig,
        reference=reference,
        fixed_range={m: (0.0, 1.0) for m in fg.CALIBRATION},
    )
    base = table[["qid", "docid"]]
    labels = {
        p: base.merge(
            j[p][["qid", "docid", "label"]], on=["qid", "docid"], how="left", validate="one_to_one"
        )["label"]
        for p in personas
    }
    kappa = fg.interpersona_kappa(labels)
    write_tsv(kappa, out["interpersona"])
    fg.interpersona_heatmap(kappa, f"Inter-persona Cohen's κ - {name}", out["heatmap"], out["heatmap_pdf"])
    chosen = [p for p in cfg["confidence_personas"] or [] if p in personas] or list(personas[:2])
    conf_tab = fg.confidence_by_grade_table(table, {p: c[p] for p in chosen}, int(cfg["confidence_label"]))
    write_tsv(conf_tab, out["confidence_table"])
    fg.confidence_by_grade(
        conf_tab,
        f"Confidence of label-{int(cfg['confidence_label'])} predictions by human grade - {name}",
        out["confidence"],
        out["confidence_pdf"],
    )
    n_nan = int(met[fg.AGREEMENT + fg.CALIBRATION].isna().sum().sum())
    log.info("%s: figures written; %d undefined metric values shown as n/a", name, n_nan)


# --------------------------------------------------------------------------------------------
# Tables 4, 7 and 8


def _write_table(df: pd.DataFrame, render, out: Mapping[str, str]) -> None:
    """``df`` as the tsv, ``render(fmt)`` as the md, tex and html files of ``out``."""
    write_tsv(df, out["tsv"])
    for fmt in ("md", "tex", "html"):
        Path(out[fmt]).write_text(render(fmt), encoding="utf-8")


def table4_job(pairs: Sequence[str], out: Mapping[str, str]) -> pd.DataFrame:
    """Seed 000 Table 4 of the prepared datasets ``pairs`` (in that order): ``out`` maps tsv, md,
    tex, html."""
    from judgelab.studies.peras import tables as tb

    frames = {}
    for p in pairs:
        t = read_dataset(p)
        frames[str(t["dataset"].iloc[0]) if len(t) else Path(p).stem] = t
    t4 = tb.table4(frames)
    _write_table(t4, lambda fmt: tb.render_table4(t4, fmt), out)
    for r in t4.itertuples(index=False):
        log.info(
            "%s: %d topics, %d pairs, by grade %s",
            r.dataset,
            r.topics,
            r.pairs,
            [getattr(r, f"qrel_{g}") for g in GRADE_LABELS],
        )
    return t4


def wide_tables_job(metrics: str, reference: str, out: Mapping[str, Mapping[str, str]]) -> None:
    """Seed 000 Tables 7 and 8 (wide) from the long metrics table: ``out`` maps table7 and table8
    to their tsv, md, tex, html paths; ``reference`` is the persona the ``↑`` marks compare with."""
    from judgelab.studies.peras import tables as tb

    m = read_ids_table(metrics)
    for table, paths in out.items():
        w = tb.wide_table(m, table, reference)
        _write_table(
            tb.flat_wide(w), lambda fmt, w=w, table=table: tb.render_wide(w, fmt, tb.CAPTIONS[table]), paths
        )
        log.info(
            "%s: %d model x persona rows, %d columns, %d values above %s",
            table,
            len(w.rows),
            len(w.columns),
            len(w.better),
            reference,
        )
