"""PERAS jobs: judgment, confidence, metrics (with the calibration of every job), imported
judges, significance, figures and the RQ3 classifiers. One function per workflow job; plain paths and values in, files out.

The analysis libraries (scikit-learn, statsmodels, xgboost, lightgbm, matplotlib) are imported
inside the jobs that use them: a judgment job does not pay seconds of imports for them."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import cast

import pandas as pd

from judgelab.analysis import render
from judgelab.analysis.calibration import CalibrationSettings
from judgelab.analysis.committee import Committee
from judgelab.data.imported import ImportReading
from judgelab.data.labels import GRADE_LABELS
from judgelab.data.tables import (
    concat_ids_tables,
    label_tables,
    labels_with_confidence,
    read_confidence,
    read_dataset,
    read_ids_table,
    read_judgments,
    write_tsv,
)
from judgelab.errors import InputError
from judgelab.llm.judge import Judge
from judgelab.llm.judging import judge_table
from judgelab.llm.session import JobContext
from judgelab.project.repeats import read_repeats as read_tsv_repeats
from judgelab.project.repeats import repeat_labels, sampling_note
from judgelab.studies.peras.confidence import run_confidence
from judgelab.studies.peras.settings import ClassifierSettings, FigureSettings, Group, SignificanceSettings

log = logging.getLogger("judgelab")


# --------------------------------------------------------------------------------------------
# Judgment and confidence


def judge_job(
    pairs: str, judgments: str, judge: Judge, context: JobContext, persona_file: str | None = None
) -> pd.DataFrame:
    """One dataset x model x template x persona: every pair judged (PERAS section 4.2) by
    ``judge`` (``persona_file``: a generated persona's instruction, when the judge's persona is
    one); the job stops when too few answers parse (the judge's coverage floor)."""
    result = judge_table(read_dataset(pairs), judge.resolved(persona_file), context)
    write_tsv(result, judgments)
    return result


def confidence_job(
    pairs: str,
    judgments: str,
    confidence: str,
    judge: Judge,
    context: JobContext,
    persona_file: str | None = None,
) -> pd.DataFrame:
    """The confidence follow-up (PERAS Appendix A) for every pair whose label parsed, asked by the
    confidence judge (``judge``: the judgment's model and persona, the confidence template)."""
    table = read_dataset(pairs)
    judged = read_judgments(judgments)
    with judge.session(context) as client:
        result = run_confidence(table, judged, judge.resolved(persona_file), client, desc=context.desc)
    write_tsv(result, confidence)
    return result


# --------------------------------------------------------------------------------------------
# Metrics


def _labelled(grades: pd.DataFrame, judgments: str, confidence: str | None) -> pd.DataFrame:
    """The human grade, label, confidence and (where the judgment table has it) ``truncated`` of
    every pair (``confidence`` None: a judge that states none, e.g. a majority of repeats)."""
    judged = read_judgments(judgments)
    if confidence is None:
        labelled = judged[["qid", "docid", "label"]].assign(
            confidence=pd.array([pd.NA] * len(judged), dtype="Float64")
        )
    else:
        labelled = labels_with_confidence(judged, read_confidence(confidence))
    if "truncated" in judged.columns:
        labelled = labelled.merge(judged[["qid", "docid", "truncated"]], on=["qid", "docid"], how="left")
    merged = grades.merge(labelled, on=["qid", "docid"], how="inner", validate="one_to_one")
    if len(merged) != len(grades):
        raise ValueError(f"{judgments} does not cover the dataset's {len(grades)} pairs")
    return merged


def _metrics_row(grades: pd.DataFrame, judgments: str, confidence: str) -> dict:
    from judgelab.studies.peras.metrics import job_metrics

    return job_metrics(_labelled(grades, judgments, confidence))


#: The metrics also given on the common support (the pairs every persona of the group answered),
#: as ``common_<metric>`` beside each persona's own parsed pairs.
COMMON_METRICS = ("n_parsed", "kappa", "qwk", "macro_f1", "alpha", "n_confidence", "RO", "RU", "HMR")


def on_support(metrics: pd.DataFrame, support: str) -> pd.DataFrame:
    """The metrics table as ``peras.support`` reads it: ``parsed`` as it is (each persona on its
    own parsed pairs, the paper's reading), ``common`` with every :data:`COMMON_METRICS` column
    replaced by its ``common_*`` figure (every persona on the pairs all personas answered)."""
    if support == "common":
        return metrics.assign(
            **{k: metrics[f"common_{k}"] for k in COMMON_METRICS if f"common_{k}" in metrics.columns}
        )
    if support != "parsed":
        raise InputError(f"unknown support {support!r} (parsed or common)", key="peras.support")
    return metrics


def _common_rows(tables: Sequence[pd.DataFrame]) -> list[dict]:
    """Each persona's metrics (``tables``: one :func:`_labelled` table per persona) on the pairs
    whose label parsed for every persona of the group (``common_n_parsed`` of them: the same pairs
    for all), so persona contrasts are not confounded by which answers parsed."""
    from judgelab.studies.peras.metrics import common_support, job_metrics

    keys = ["qid", "docid"]
    common = common_support(tables, keys)
    rows = []
    for t in tables:
        m = job_metrics(t.merge(common, on=keys, how="inner"))
        rows.append({f"common_{k}": m[k] for k in COMMON_METRICS})
    return rows


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
    pairs: str, judgments: Sequence[str], confidence: Sequence[str], group: Group, metrics: str
) -> pd.DataFrame:
    """Metrics of every persona's job of one dataset x model x template (one row per persona),
    each on the pairs its answers parsed and, as ``common_<metric>``, on the common support (the
    pairs every persona answered: :data:`COMMON_METRICS`); ``judgments`` and ``confidence`` are in
    the order of the group's personas. No ``confidence`` table at all: a judge that states none
    (a majority of repeats, ``<judge>+majority@<k>``): its RO, RU, HMR are n/a."""
    personas = group.personas
    stated: Sequence[str | None] = confidence if len(confidence) else [None] * len(judgments)
    if not len(judgments) == len(stated) == len(personas):
        raise ValueError("one judgments and one confidence table per persona expected")
    from judgelab.studies.peras.metrics import job_metrics

    grades = read_dataset(pairs)[["qid", "docid", "grade"]]
    tables = [_labelled(grades, j, c) for j, c in zip(judgments, stated)]
    df = pd.DataFrame(
        [
            {**group.ids, "persona": p, **job_metrics(t), **k}
            for p, t, k in zip(personas, tables, _common_rows(tables))
        ]
    )
    write_tsv(df, metrics)
    log.info(
        "%d personas; parse coverage %s; common support %d pairs",
        len(df),
        dict(zip(df["persona"], df["coverage"].round(3))),
        int(df["common_n_parsed"].iloc[0]) if len(df) else 0,
    )
    return df


def aggregate_metrics_job(tables: Sequence[str], table: str) -> pd.DataFrame:
    """Every group's metrics in one table."""
    df = concat_ids_tables(tables)
    write_tsv(df, table)
    log.info("%d jobs; mean parse coverage %.3f", len(df), df["coverage"].mean())
    return df


def calibration_job(
    pairs: Sequence[str],
    judgments: Sequence[str],
    confidence: Sequence[str],
    cells: Sequence[Mapping[str, str]],
    settings: CalibrationSettings,
    outputs: Mapping[str, str],
) -> pd.DataFrame:
    """Calibration of every judge job (``cells``: dataset, model, template, persona, in the order
    of ``judgments`` and ``confidence``; ``pairs``: the dataset tables): the label-token
    distribution as P(relevant) (p2 + p3) against the human binary relevance, with the expected
    grade's MAE, and the verbal confidence / 100 as the probability that label = grade
    (:mod:`judgelab.analysis.calibration`). ``outputs``: calibration (the table), reliability (its
    bins), png and pdf (the reliability diagrams, equal-width bins)."""
    from judgelab.analysis.calibration import write_calibration

    if not len(judgments) == len(confidence) == len(cells):
        raise ValueError("one judgments and one confidence table per calibration cell expected")
    tables = [read_dataset(p) for p in pairs]
    grades = pd.concat(tables, ignore_index=True)[["dataset", "qid", "docid", "grade"]]

    def judges():
        for cell, j, c in zip(cells, judgments, confidence):
            judged = read_judgments(j)
            conf = read_confidence(c)[["qid", "docid", "confidence"]]
            on = grades[grades["dataset"] == cell["dataset"]].drop(columns="dataset")
            table = on.merge(
                judged[["qid", "docid", "label", *(f"p{g}" for g in GRADE_LABELS)]],
                on=["qid", "docid"],
                how="inner",
                validate="one_to_one",
            ).merge(conf, on=["qid", "docid"], how="left", validate="one_to_one")
            if len(table) != len(on):
                raise ValueError(f"{j} does not cover the dataset's {len(on)} pairs")
            table["confidence"] = table["confidence"].astype("Float64") / 100.0
            yield dict(cell), table, GRADE_LABELS, "verbal_confidence"

    return write_calibration(
        judges(), settings.bins, outputs, ["dataset", "model", "template"], "persona", "PERAS - reliability"
    )


# --------------------------------------------------------------------------------------------
# Committees


def committee_job(
    pairs: str, judgments: Sequence[str], committee: Committee, outputs: Mapping[str, str]
) -> pd.DataFrame:
    """A committee's judgment and confidence tables (``outputs``: judgments, confidence) from its
    members' judgment tables (``judgments``, in ``committee.members`` order: a judge committee's
    judges at one persona, or one judge's personas): per pair of the dataset table the label of
    :func:`judgelab.analysis.committee.committee_labels` (missing below the quorum), no label
    distribution and no confidence (a committee states none: its RO, RU, HMR are n/a)."""
    from judgelab.analysis import committee as com

    if len(judgments) != len(committee.members):
        raise ValueError("one judgments table per committee member expected")
    table = read_dataset(pairs)[["dataset", "qid", "docid"]]
    members = {m: read_judgments(p) for m, p in zip(committee.members, judgments)}
    for m, p in zip(committee.members, judgments):
        if len(members[m]) != len(table):
            raise ValueError(f"{p} does not cover the dataset's {len(table)} pairs")
    voted = com.committee_labels(members, committee.rule, committee.quorum or None)
    merged = table.merge(
        voted[["qid", "docid", "label"]], on=["qid", "docid"], how="left", validate="one_to_one"
    )
    merged["confidence"] = pd.array([pd.NA] * len(merged), dtype="Float64")
    j, c = label_tables(merged, f"committee:{committee.rule}")
    c["asked"] = False  # a committee is asked nothing
    write_tsv(j, outputs["judgments"])
    write_tsv(c, outputs["confidence"])
    labelled = voted["label"].notna()
    log.info(
        "%s (%s of %s, quorum %s): %d pairs, %d labelled (%s); members' labels all equal on %d",
        committee.name,
        committee.rule,
        ", ".join(committee.members),
        committee.quorum or "more than half",
        len(j),
        int(labelled.sum()),
        {int(k): int(v) for k, v in j["label"].value_counts().sort_index().items()},
        int((voted["labels"].map(lambda x: len(set(x.split())) == 1 and "-" not in x)).sum()),
    )
    return j


# --------------------------------------------------------------------------------------------
# Imported judges


def import_job(
    pairs: str,
    judge_file: str,
    outputs: Mapping[str, str],
    reading: ImportReading,
    wildcards: Mapping[str, str],
    qrels: str | None = None,
    topics: str | None = None,
) -> None:
    """An imported judge's qrels-format file -> the judgment and confidence tables of a live judge
    (``outputs``: judgments, confidence, summary). ``reading``: the scales the judge declares and
    the raw files' encoding (see :mod:`judgelab.data.imported`). ``qrels``, ``topics``: the
    dataset's raw files: the file may label their pairs outside the selection (skipped, counted in
    the summary: the job's ``wildcards``, then :data:`judgelab.data.imported.IMPORT_SUMMARY_COLUMNS`)."""
    from judgelab.data.imported import SourcePairs, import_judgments, read_judge

    table = read_dataset(pairs)
    known = SourcePairs.read(qrels, topics, reading.encoding) if qrels and topics else None
    judge = read_judge(
        judge_file,
        table,
        source=known,
        scale=reading.scale,
        confidence_scale=reading.confidence_scale,
        drop=reading.drop,
    )
    log.info("%s", judge.log_line())
    j, c = import_judgments(table, judge)
    write_tsv(j, outputs["judgments"])
    write_tsv(c, outputs["confidence"])
    if "summary" in outputs:
        write_tsv(judge.summary(**dict(wildcards)), outputs["summary"])
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
    group: Group,
    settings: ClassifierSettings,
    outputs: Mapping[str, str],
) -> pd.DataFrame:
    """The RQ3 classifiers on one group's persona features (``outputs``: features, missing,
    trials, summary)."""
    from judgelab.studies.peras import classifiers as clf

    personas = group.personas
    table = read_dataset(pairs)
    j, c = _load_group(judgments, confidence, personas)
    feats = clf.build_features(table, j, c)
    write_tsv(feats, outputs["features"])
    missing = clf.missing_summary(feats)
    write_tsv(missing, outputs["missing"])
    log.info(
        "%d pairs, %d personas; missing labels %d, missing confidences %d (sentinel -1 + "
        "indicator columns: %s)",
        len(feats),
        len(personas),
        int(missing["missing_label"].sum()),
        int(missing["missing_confidence"].sum()),
        [c for c in clf.design_matrix(feats).columns if c.startswith("miss_")],
    )
    specs = clf.parse_specs(settings.models)
    t0 = time.perf_counter()
    trials, warned = clf.run_trials(
        feats,
        specs,
        trials=int(settings.trials),
        train_fraction=float(settings.train_fraction),
        seed=int(settings.seed),
    )
    log.info(
        "%d trials x %d classifiers in %.1f s; train pairs per trial %s",
        int(settings.trials),
        len(specs),
        time.perf_counter() - t0,
        sorted(set(trials["n_train"])),
    )
    for (name, cat), n in sorted(warned.items()):
        log.warning("%s raised %d %s over the trials", name, n, cat)
    write_tsv(trials, outputs["trials"])
    summary = clf.summarize(trials, [s.name for s in specs])
    write_tsv(summary, outputs["summary"])
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
    summaries: Sequence[str], ids: Sequence[Mapping[str, str]], outputs: Mapping[str, str]
) -> pd.DataFrame:
    """PERAS Table 5 from every classifier group's summary (``ids``: each summary's dataset,
    model and template; ``outputs``: tsv, md, tex, html)."""
    from judgelab.studies.peras import classifiers as clf

    parts = []
    for path, idd in zip(summaries, ids):
        s = pd.read_csv(path, sep="\t", dtype={"persona": str, "method": str})
        for k in ("template", "model", "dataset"):
            s.insert(0, k, idd[k])
        parts.append(s)
    tidy = pd.concat(parts, ignore_index=True)
    write_tsv(tidy, outputs["tsv"])
    wide = clf.table5_wide(tidy)
    Path(outputs["md"]).write_text(clf.render_markdown(wide), encoding="utf-8")
    Path(outputs["tex"]).write_text(clf.render_latex(wide), encoding="utf-8")
    Path(outputs["html"]).write_text(
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
    group: Group,
    settings: SignificanceSettings,
    table: str,
) -> pd.DataFrame:
    """Every persona of one group against the reference persona (paired bootstrap, Holm), on
    each persona's parsed pairs (``support`` parsed: the published reading) and on the common
    support (``support`` common: the pairs every persona of the group answered; the same
    resamples, its own Holm family)."""
    from judgelab.studies.peras import significance as sg

    personas = group.personas
    pairs_table = read_dataset(pairs)
    j, c = _load_group(judgments, confidence, personas)
    judged = {p: labels_with_confidence(j[p], c[p]) for p in personas}
    t0 = time.perf_counter()
    res = sg.by_support(
        pairs_table,
        judged,
        reference=settings.reference,
        n_boot=int(settings.n_boot),
        seed=int(settings.seed),
        alpha=float(settings.alpha),
    )
    for i, (k, v) in enumerate(group.ids.items()):
        res.insert(i, k, v)
    write_tsv(res, table)
    for support in sg.SUPPORTS:
        part = res[res["support"] == support]
        log.info(
            "%s support: %d comparisons, %d significant after Holm",
            support,
            len(part),
            int(part["significant"].astype(bool).sum()) if len(part) else 0,
        )
    log.info("%d comparisons in %.2f s", len(res), time.perf_counter() - t0)
    return res


def aggregate_significance_job(
    tables: Sequence[str], metrics: str, table: str, joined: str, html: str | None = None
) -> None:
    """Every group's comparisons in one table, joined to the metrics (``html``: its page)."""
    from judgelab.studies.peras import significance as sg

    parts = [read_ids_table(p) for p in tables]
    parts = [p for p in parts if len(p)]
    sig = (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame(columns=["dataset", "model", "template", "persona", "metric", "significant"])
    )
    write_tsv(sig, table)
    m = read_ids_table(metrics)
    both = sg.join_metrics(m, sig)
    write_tsv(both, joined)
    if html:
        Path(html).write_text(sg.render_html(both), encoding="utf-8")
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
    group: Group,
    settings: FigureSettings,
    outputs: Mapping[str, str],
    significance: str | None = None,
) -> None:
    """Radar charts (agreement, calibration; on the support ``settings.support``, significance
    marks of the same support), the inter-persona kappa heatmap and its table, and
    the confidence-by-grade chart of one group. ``outputs`` maps radar_agreement,
    radar_calibration, heatmap, confidence (PNG) and *_pdf, plus interpersona and
    confidence_table (TSV); ``significance``: the group's comparisons, where it has any."""
    from judgelab.studies.peras import figures as fg

    out, personas, name = outputs, group.personas, group.name
    table = read_dataset(pairs)
    j, c = _load_group(judgments, confidence, personas)
    met = pd.read_csv(metrics, sep="\t", dtype={"persona": str})
    met = met.set_index("persona").loc[list(personas)].reset_index()  # the personas' order
    sig = pd.read_csv(significance, sep="\t", dtype={"persona": str}) if significance else None
    reference, support = settings.reference, settings.support
    met = on_support(met, support)
    if sig is not None and "support" in sig.columns:
        sig = sig[sig["support"] == support]
    scope = ""
    if support == "common":
        scope = f" (common support: {int(met['common_n_parsed'].iloc[0]) if len(met) else 0} pairs)"
    fg.radar(
        met,
        fg.AGREEMENT,
        f"Agreement with human grades - {name}{scope}",
        out["radar_agreement"],
        out["radar_agreement_pdf"],
        significance=sig,
        reference=reference,
    )
    fg.radar(
        met,
        fg.CALIBRATION,
        f"Confidence calibration - {name}{scope}",
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
    chosen = [p for p in settings.confidence_personas or [] if p in personas] or list(personas[:2])
    label = int(settings.confidence_label)
    conf_tab = fg.confidence_by_grade_table(table, {p: c[p] for p in chosen}, label)
    write_tsv(conf_tab, out["confidence_table"])
    fg.confidence_by_grade(
        conf_tab,
        f"Confidence of label-{label} predictions by human grade - {name}",
        out["confidence"],
        out["confidence_pdf"],
    )
    n_nan = int(met[fg.AGREEMENT + fg.CALIBRATION].isna().sum().sum())
    log.info("%s: figures written; %d undefined metric values shown as n/a", name, n_nan)


# --------------------------------------------------------------------------------------------
# Tables 4, 7 and 8


def table4_job(pairs: Sequence[str], outputs: Mapping[str, str]) -> pd.DataFrame:
    """PERAS Table 4 of the prepared datasets ``pairs`` (in that order): ``outputs`` maps tsv, md,
    tex, html."""
    from judgelab.studies.peras import tables as tb

    frames = {}
    for p in pairs:
        t = read_dataset(p)
        frames[str(t["dataset"].iloc[0]) if len(t) else Path(p).stem] = t
    t4 = tb.table4(frames)
    render.write_table(t4, lambda fmt: tb.render_table4(t4, fmt), outputs)
    for r in t4.itertuples(index=False):
        log.info(
            "%s: %d topics, %d pairs, by grade %s",
            r.dataset,
            r.topics,
            r.pairs,
            [getattr(r, f"qrel_{g}") for g in GRADE_LABELS],
        )
    return t4


def wide_tables_job(metrics: str, reference: str, outputs: Mapping[str, str], support: str) -> None:
    """PERAS Tables 7 and 8 (wide) from the long metrics table: ``outputs`` maps
    ``table7_<ext>`` and ``table8_<ext>`` (tsv, md, tex, html); ``reference`` is the persona the
    ``↑`` marks compare with; ``support`` (``peras.support``): ``parsed`` scores each persona on
    its own parsed answers (the paper's reading), ``common`` on the pairs every persona answered
    (the metrics table's ``common_*`` columns; the caption says so)."""
    from judgelab.studies.peras import tables as tb

    m = on_support(read_ids_table(metrics), support)
    caption_note = (
        " Common support: every persona scored on the pairs all personas of its judge answered."
        if support == "common"
        else ""
    )
    out = {t: {k: outputs[f"{t}_{k}"] for k in ("tsv", "md", "tex", "html")} for t in ("table7", "table8")}
    for table, paths in out.items():
        w = tb.wide_table(m, table, reference)
        caption = tb.CAPTIONS[table] + caption_note
        render.write_table(
            tb.flat_wide(w),
            # the defaults bind this table's w and caption; mypy cannot infer such a lambda's type
            cast(
                "Callable[[str], str]",
                lambda fmt, w=w, caption=caption: tb.render_wide(w, fmt, caption),
            ),
            paths,
        )
        log.info(
            "%s: %d model x persona rows, %d columns, %d values above %s",
            table,
            len(w.rows),
            len(w.columns),
            len(w.better),
            reference,
        )


# --------------------------------------------------------------------------------------------
# Self-consistency (peras.repeats; judgelab.analysis.consistency)


def repeats_job(
    pairs: str,
    judgments: str,
    outputs: Mapping[str, str],
    judge: Judge,
    samples: int,
    context: JobContext | None = None,
    persona_file: str | None = None,
) -> pd.DataFrame:
    """One judge job asked ``samples`` (k) times (``peras.repeats``): every pair's k labels
    (``outputs["repeats"]``) and their majority as a judgment table (``outputs["majority"]``). A
    judge read from the logits makes no call (its k labels are drawn from the judgment table's
    label distributions, :func:`judgelab.analysis.consistency.draw_label`); one that parses asks
    samples 1..k-1 (sample 0 is its judgment table's label) through ``context`` (rule
    ``peras_repeats``; the draws, rule ``peras_repeat_draws``, need none)."""
    from judgelab.analysis.consistency import majority, wide_labels

    table = read_dataset(pairs)
    judged = read_judgments(judgments)
    if len(judged) != len(table):
        raise ValueError(f"{judgments} does not cover the dataset's {len(table)} pairs")
    resolved = judge if judge.answer == "logits" else judge.resolved(persona_file)
    result = repeat_labels(table, judged, resolved, samples, context)
    write_tsv(result, outputs["repeats"])
    voted = majority(wide_labels(result))
    merged = table[["dataset", "qid", "docid"]].merge(
        voted[["qid", "docid", "label"]], on=["qid", "docid"], how="left", validate="one_to_one"
    )
    merged["confidence"] = pd.array([pd.NA] * len(merged), dtype="Float64")
    majority_table, _ = label_tables(merged, f"majority of {samples}")
    write_tsv(majority_table, outputs["majority"])
    log.info(
        "%d pairs x %s; %d labels missing; majority labelled %d pairs",
        len(table),
        sampling_note(judge, samples),
        int(result["label"].isna().sum()),
        int(majority_table["label"].notna().sum()),
    )
    return result


def consistency_job(
    pairs: Sequence[str],
    repeats: Sequence[str],
    majority: Sequence[str],
    cells: Sequence[Mapping[str, str]],
    outputs: Mapping[str, str],
) -> pd.DataFrame:
    """Self-consistency of every repeated judge job (``cells``: dataset, model, template, persona,
    reading, temperature, in the order of ``repeats`` and ``majority``): one row each, the flip
    rate, kappa and alpha between the repeats, each repeat's kappa with the human grades (mean,
    SD) and the majority's agreement with them (``outputs``: tsv, md)."""
    from judgelab.analysis.agreement import agreement
    from judgelab.analysis.consistency import flip_rate, repeat_alpha, repeat_kappa, wide_labels

    if not len(repeats) == len(majority) == len(cells):
        raise ValueError("one repeats and one majority table per cell expected")
    grades = pd.concat([read_dataset(p) for p in pairs], ignore_index=True)
    grades = grades[["dataset", "qid", "docid", "grade"]]
    rows = []
    for cell, rep, maj in zip(cells, repeats, majority):
        wide = wide_labels(read_tsv_repeats(rep))
        human = grades[grades["dataset"] == cell["dataset"]].set_index(["qid", "docid"])["grade"]
        per_sample = []
        for c in wide.columns:
            both = pd.concat([human, wide[c]], axis=1, join="inner").dropna()
            per_sample.append(agreement(both.iloc[:, 0], both.iloc[:, 1])["kappa"])
        voted = read_judgments(maj).set_index(["qid", "docid"])["label"]
        both = pd.concat([human, voted], axis=1, join="inner").dropna()
        agree = agreement(both.iloc[:, 0], both.iloc[:, 1])
        flips, complete = flip_rate(wide)
        rows.append(
            {
                **cell,
                "repeats": wide.shape[1],
                "n_pairs": len(wide),
                "n_complete": complete,
                "flip_rate": flips,
                "kappa_repeats": repeat_kappa(wide),
                "alpha_repeats": repeat_alpha(wide),
                "kappa_mean": float(pd.Series(per_sample, dtype=float).mean()),
                "kappa_sd": float(pd.Series(per_sample, dtype=float).std(ddof=1)),
                "majority_n_labelled": len(both),
                "majority_kappa": agree["kappa"],
                "majority_alpha": agree["alpha"],
            }
        )
    df = pd.DataFrame(rows)
    write_tsv(df, outputs["tsv"])
    Path(outputs["md"]).write_text(render.markdown_frame(df), encoding="utf-8")
    log.info("self-consistency of %d judge jobs; flip rates %s", len(df), df["flip_rate"].round(3).tolist())
    return df
