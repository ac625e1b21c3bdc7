"""Evaluator simulation (PersonaJudge) jobs. One function per workflow job: its input and output
paths, and one settings value per concern (:mod:`.settings`: the selection, the cell's judge, the
design, a stage's options), built by the study's plan; files out (no Snakemake import: each
workflow script is one :func:`judgelab.project.runner.run` call).

Per evaluator set (a dataset of evaluator judgments, ``{dataset}`` of the paths; the study's plan
:mod:`judgelab.studies.simulation` names the files):

1. :func:`download_job` - fetch the public file (PandaLM's ``testset-v1.json``).
2. :func:`prepare_job` - load and check the records, split every evaluator's items into a
   demonstration pool and a validation set of whole leakage groups: ``records.jsonl``,
   ``splits.tsv``, ``evaluators.tsv``, ``split_report.tsv``; :func:`annotators_job` - what the
   data can support (``annotators.tsv``).
3. :func:`predict_job` - one per cell (evaluator set x model x demonstration type x shot count;
   the Base Judge is type ``base`` with 0 shots): the two-round cascade of the cell's judge
   (:class:`~.settings.CascadeJudge`) on every validation item:
   ``predictions/{model}/{demo_type}/{shots}.tsv`` and the demonstrations drawn.
4. :func:`baselines_job` - random, oracle consensus, global and per-evaluator majority.
5. :func:`metrics_job` - accuracy, deviation metrics, confusion matrices, per-class P/R/F1,
   label distributions, the cross-evaluator control, evaluator traits, correlations, the design.
6. :func:`stats_job` - Friedman, RM-ANOVA, Wilcoxon with Holm, Benjamini-Hochberg, t tests over
   evaluators, beside the item-level tests; the count of configurations above the Base Judge.
7. :func:`figures_job` - the figures of one evaluator set (PNG + PDF); :func:`cross_task_figure_job`
   - Figure 3 over the evaluator sets of two tasks.
8. :func:`tables_job` - the tables shaped like the paper's (TSV + Markdown) over all evaluator sets.

The tables these jobs hand on are the study's own (readers and writers in
:mod:`judgelab.studies.simulation`: ``read_jsonl``, ``read_splits``, ``read_predictions``); the analysis
libraries (scipy, statsmodels, matplotlib) are imported inside the jobs that use them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from judgelab.data.tables import read_tsv, write_tsv
from judgelab.errors import InputError
from judgelab.llm.judging import require_coverage
from judgelab.llm.session import JobContext
from judgelab.studies.simulation import baselines as bl
from judgelab.studies.simulation.cascade import BASE, read_predictions, simulate
from judgelab.studies.simulation.data import (
    download_records,
    load_records,
    read_jsonl,
    select_task,
    unsupported_reason,
    write_jsonl,
)
from judgelab.studies.simulation.plan import METRIC_FILES, REPORT_FIGURES, REPORT_TABLES, STATS_FILES
from judgelab.studies.simulation.settings import (
    BaselineSettings,
    CascadeJudge,
    Design,
    MetricSettings,
    Selection,
    StatsSettings,
    TableSettings,
)
from judgelab.studies.simulation.splits import (
    evaluator_summary,
    make_splits,
    read_splits,
    split_report,
    write_splits,
)

log = logging.getLogger("judgelab")

#: keys of an evaluator set's config entry (``simulation.datasets.<name>.<key>``) that the
#: library's errors name by their short key ``simulation.<key>``
DATASET_KEYS = ("format", "evaluators", "pool", "validation", "split", "group_by", "seed", "task")
DESIGN_COLUMNS = ["model", "demo_type", "shots", "status", "reason"]


def _dataset_key(exc: InputError, name: str | None) -> InputError:
    """``exc`` naming the evaluator set's full config key (``simulation.datasets.<name>.pool``)
    instead of the library's short one (``simulation.pool``); other errors unchanged."""
    short = (exc.key or "").removeprefix("simulation.")
    if not name or exc.key is None or short not in DATASET_KEYS:
        return exc
    message = str(exc).removeprefix(f"config key '{exc.key}': ")
    return InputError(message, key=f"simulation.datasets.{name}.{short}")


# --------------------------------------------------------------------------------------------
# Data


def download_job(url: str, raw: str, fmt: str = "pandalm") -> None:
    """Fetch ``url`` (PandaLM: :data:`~judgelab.studies.simulation.data.PANDALM_URL`; ``file://``
    works) to ``raw`` and check that it loads in format ``fmt``."""
    download_records(raw, url, fmt)


def prepare_job(
    source: str,
    records: str,
    splits: str,
    evaluators: str,
    selection: Selection,
    report: str | None = None,
    dataset: str | None = None,
) -> pd.DataFrame:
    """Load and check the records of ``source`` (in the selection's format; only the selection's
    evaluators if it names any; only the records of its task where the file's records name their
    task), split each evaluator's items into whole leakage groups (``group_by``; the order
    interleaved by neutral labels with ``balance_neutral``), and write the normalised
    ``records``, the ``splits`` table, the per-evaluator summary (``evaluators``) and the split
    report (``report``, :func:`~.splits.split_report`). ``dataset``: the evaluator set, so that
    a config error names its full key."""
    sel = selection
    try:
        recs = select_task(load_records(source, sel.format), sel.task, source)
        if sel.evaluators:
            known = {r.evaluator for r in recs}
            unknown = sorted(set(sel.evaluators) - known)
            if unknown:
                raise InputError(
                    f"evaluators {unknown} are not in {source} (it has {sorted(known)})",
                    key="simulation.evaluators",
                )
            keep = set(sel.evaluators)
            recs = [r for r in recs if r.evaluator in keep]
        table = make_splits(
            recs,
            pool=int(sel.pool),
            validation=int(sel.validation),
            seed=int(sel.seed),
            mode=sel.split,
            group_by=sel.group_by,
            balance_neutral=bool(sel.balance_neutral),
        )
    except InputError as exc:
        raise _dataset_key(exc, dataset) from None
    group_by = sel.group_by
    summary = evaluator_summary(recs, table, int(sel.min_neutral))
    write_jsonl(recs, records)
    write_splits(table, splits)
    write_tsv(summary, evaluators)
    grouping = split_report(recs, table, group_by)
    if report:
        write_tsv(grouping, report)
    grouped = grouping.set_index("measure")["count"]
    log.info(
        "leakage groups (group_by %s): %d groups for %d items; %d identical-content groups, %d "
        "swapped-twin pairs, %d shared contexts",
        group_by,
        grouped[f"leakage groups (group_by {group_by})"],
        grouped["items"],
        grouped["identical-content groups"],
        grouped["swapped-response twin pairs"],
        grouped["contexts shared by several items"],
    )
    log.info(
        "%s: %d records, %d evaluators, %d items; pool %d / validation %d per evaluator; direction-only: %s",
        source,
        len(recs),
        summary.shape[0],
        len({r.item for r in recs}),
        sel.pool,
        sel.validation,
        list(summary.loc[summary["direction_only"], "evaluator"]),
    )
    return summary


# --------------------------------------------------------------------------------------------
# Prediction


def predict_job(
    records: str,
    splits: str,
    predictions: str,
    demos: str,
    judge: CascadeJudge,
    demo_type: str,
    shots: int,
    context: JobContext,
) -> pd.DataFrame:
    """One cell: the cascade of ``judge`` (its model, prompt texts and cascade settings:
    :class:`~.settings.CascadeJudge`; ``answer: auto`` resolved for its model) with ``shots``
    demonstrations of type ``demo_type`` (wildcards: text) on every evaluator's validation
    items, in the job's model session (``context``); the job stops when too few validation
    items have an answered label (the judge's coverage floor:
    :func:`judgelab.llm.judging.require_coverage`)."""
    recs = read_jsonl(records)
    if demo_type != BASE:
        reason = unsupported_reason(demo_type, recs)
        if reason:
            raise InputError(
                f"demonstration type {demo_type} is not supported by {records}: {reason}",
                key="simulation.demo_types",
            )
    judge, desc = judge.resolved(), context.desc
    with judge.session(context) as client:
        preds, drawn = simulate(
            recs, read_splits(splits), client, judge, demo_type=demo_type, shots=int(shots), desc=desc
        )
    if len(preds):
        require_coverage(
            preds["answered"],
            preds["r2_answer"].where(preds["r2_answer"].notna(), preds["r1_answer"]),
            coverage=judge.coverage,
            model=judge.model,
            backend=judge.backend,
            bound=judge.cascade.request_max_tokens(),
            what=desc,
            truncated=preds["truncated"],
        )
    write_tsv(preds, predictions)
    write_tsv(drawn, demos)
    return preds


def baselines_job(records: str, splits: str, baselines: str, settings: BaselineSettings) -> pd.DataFrame:
    """The reference predictors' labels for every validation item (``settings``: Random
    Selection's seed, the labels the majorities count)."""
    df = bl.reference_predictions(
        read_jsonl(records),
        read_splits(splits),
        seed=int(settings.seed),
        majority_source=settings.majority_source,
    )
    write_tsv(df, baselines)
    log.info(
        "reference predictors: %s",
        df.assign(ok=df["pred"] == df["gold"]).groupby("method")["ok"].mean().round(3).to_dict(),
    )
    return df


# --------------------------------------------------------------------------------------------
# Metrics, statistics, report


NONE = "-"  #: model / demonstration type of the reference predictors


def _long(predictions: Sequence[str], cells: Sequence[Mapping], baselines: str) -> pd.DataFrame:
    from judgelab.studies.simulation import metrics as sm

    if len(predictions) != len(cells):
        raise ValueError("one cell description per prediction table expected")
    parts = []
    for path, cell in zip(predictions, cells):
        p = read_predictions(path)[["evaluator", "item", "gold", "pred"]]
        parts.append(
            p.assign(
                method=sm.cell_method(cell["shots"]),
                model=cell["model"],
                demo_type=cell["demo_type"],
                shots=int(cell["shots"]),
            )
        )
    b = read_tsv(baselines, str)
    parts.append(
        b[["method", "evaluator", "item", "gold", "pred"]].assign(model=NONE, demo_type=NONE, shots=0)
    )
    return pd.concat(parts, ignore_index=True)[sm.CELL + ["evaluator", "item", "gold", "pred"]]


def _group_label(method: str, model: str, demo_type: str, shots: int) -> str:
    from judgelab.studies.simulation import metrics as sm
    from judgelab.studies.simulation.report import NAMES

    name = NAMES.get(method, method)
    if method == sm.PJ:
        return f"{name} | {model} | {demo_type} | {int(shots)}-shot"
    return f"{name} | {model}" if model != NONE else name


def design_table(cells: Sequence[Mapping], skipped: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The cells that ran and the demonstration types skipped, with the reason."""
    rows = [
        {
            "model": c["model"],
            "demo_type": c["demo_type"],
            "shots": str(int(c["shots"])),
            "status": "run",
            "reason": NONE,
        }
        for c in cells
    ]
    rows += [
        {"model": NONE, "demo_type": t, "shots": NONE, "status": "skipped", "reason": why}
        for t, why in (skipped or {}).items()
    ]
    return pd.DataFrame(rows, columns=DESIGN_COLUMNS)


def metrics_job(
    records: str,
    cell_predictions: Sequence[str],
    baselines: str,
    cells: Design,
    settings: MetricSettings,
    outputs: Mapping[str, str],
    splits: str | None = None,
) -> dict[str, pd.DataFrame]:
    """All metric tables of one evaluator set (``outputs``: the path of each of
    :data:`METRIC_FILES`, by its name without ``.tsv``). ``cells``: the evaluator set's design
    (not named ``design``: that is the design table's output), whose ``cells[i]`` (model,
    demo_type, shots) describes ``cell_predictions[i]`` and whose ``skipped`` are the
    demonstration types the data cannot support, with the reason (the design table);
    ``settings.metric`` decides the correlations and the control's scoring (``accuracy``: every
    judgment, a missing prediction wrong); ``settings.random_draws`` seeded draws of Random
    Selection (``settings.seed``); ``splits``: the split table, whose leakage groups go into the
    long table (``group``, the clusters of the item-level tests)."""
    from judgelab.studies.simulation import metrics as sm
    from judgelab.studies.simulation.report import NAMES

    metric, random_draws, seed = settings.metric, settings.random_draws, settings.seed
    if metric not in sm.METRICS:
        raise InputError(
            f"unknown metric {metric!r}; known: {', '.join(sm.METRICS)}", key="simulation.metric"
        )
    run, skipped = list(cells.cells), dict(cells.skipped)
    for t, why in skipped.items():
        log.warning("demonstration type %s skipped: %s", t, why)
    recs = read_jsonl(records)
    long = sm.with_consensus(_long(cell_predictions, run, baselines), recs)
    if splits is not None:
        sp = read_splits(splits)
        group = dict(zip(sp["item"], sp["group"])) if "group" in sp.columns else {}
        long["group"] = long["item"].map(group)
    out: dict[str, pd.DataFrame] = {"predictions": long}
    out["accuracy"] = sm.accuracy_table(long)
    out["accuracy_eligible"] = sm.accuracy_table(long[long["consensus"].notna()])
    out["deviation"] = sm.deviation_table(long, sm.CELL)
    pj = long[long["method"] == sm.PJ]
    pooled = [sm.deviation_table(long[long["method"] != sm.PJ], ["method", "model"])]
    if len(pj):
        pooled.append(sm.deviation_table(pj, ["method", "model"]))
        pooled.append(sm.deviation_table(pj.assign(model="all"), ["method", "model"]))
    out["deviation_pooled"] = pd.concat(pooled, ignore_index=True)
    labelled = long[long["method"] != "random"]
    labelled = labelled.assign(
        group=[
            _group_label(*k)
            for k in zip(labelled["method"], labelled["model"], labelled["demo_type"], labelled["shots"])
        ]
    )
    pooled_pj = pj.assign(group=[f"{NAMES[sm.PJ]} | {m} | all cells" for m in pj["model"]])
    all_models = pj.assign(group=f"{NAMES[sm.PJ]} | all models | all cells")
    both = pd.concat([labelled, pooled_pj, all_models], ignore_index=True)
    out["confusion"] = sm.confusion_table(both, ["group"])
    out["prf"] = sm.prf_table(both, ["group"])
    dist_src = pd.concat([long[long["method"] != sm.PJ], pj.assign(demo_type="all", shots=0)])
    out["distribution"] = sm.label_distribution(dist_src, ["method", "model"])
    answered_only = metric == "accuracy_answered"
    control_rows, control_items = [], []
    for (model, dt, shots), g in pj.groupby(["model", "demo_type", "shots"], sort=True):
        c = bl.cross_evaluator_control(g, answered_only=answered_only)
        control_items.append(c.assign(model=model, demo_type=dt, shots=int(shots)))
        for ev, ge in c.groupby("evaluator", sort=True):
            control_rows.append(
                {
                    "model": model,
                    "demo_type": dt,
                    "shots": int(shots),
                    "evaluator": ev,
                    "n_matched": len(ge),
                    "own_accuracy": ge["own_correct"].mean(),
                    "control_accuracy": ge["control_accuracy"].mean(),
                }
            )
    out["control"] = pd.DataFrame(
        control_rows,
        columns=["model", "demo_type", "shots", "evaluator", "n_matched", "own_accuracy", "control_accuracy"],
    )
    item_cols = ["model", "demo_type", "shots", *bl.CONTROL_COLUMNS]
    out["control_items"] = (
        pd.concat(control_items, ignore_index=True)[item_cols]
        if control_items
        else pd.DataFrame(columns=item_cols)
    )
    pairs = long[long["method"] == "random"][["evaluator", "item", "gold", "consensus"]]
    out["random_draws"] = bl.random_draws(pairs, draws=int(random_draws), seed=int(seed))
    out["traits"] = sm.evaluator_traits(recs)
    acc_pj = out["accuracy"][out["accuracy"]["method"] == sm.PJ].groupby("evaluator")[metric].mean()
    acc_pj = acc_pj.reindex(out["traits"]["evaluator"])
    out["correlations"] = sm.correlation_table(acc_pj, out["traits"])
    out["design"] = design_table(run, skipped)
    for name in METRIC_FILES:
        write_tsv(out[name[:-4]], outputs[name[:-4]])
    acc = out["accuracy"]
    log.info(
        "mean %s by method: %s (Random Selection: one draw; expected 1/3, %d draws: mean %.3f)",
        metric,
        acc.groupby("method")[metric].mean().round(3).to_dict(),
        int(random_draws),
        out["random_draws"].query("items == 'validation'").groupby("draw")["accuracy"].mean().mean(),
    )
    return out


def _read(path: str | Path) -> pd.DataFrame:
    """A table written by these jobs; a table without columns (no rows to report) is empty."""
    try:
        return read_tsv(
            path,
            {
                "evaluator": str,
                "item": str,
                "model": str,
                "demo_type": str,
                "method": str,
                "shots": str,
                "reason": str,
                "gold": str,
                "pred": str,
                "consensus": str,
                "group": str,
                "level": str,
                "level_x": str,
                "level_y": str,
                "note": str,
                "reading": str,
                "configuration": str,
            },
        )
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def _read_numeric(path: str | Path) -> pd.DataFrame:
    """:func:`_read` with ``shots`` as integers (the metric tables)."""
    df = _read(path)
    if "shots" in df.columns:
        df["shots"] = df["shots"].astype(int)
    return df


def stats_job(
    predictions: str,
    accuracy: str,
    accuracy_eligible: str,
    control: str,
    control_items: str,
    settings: StatsSettings,
    outputs: Mapping[str, str],
) -> dict[str, pd.DataFrame]:
    """The section 14 tests of one evaluator set, from its metric tables (``outputs``: the path
    of each of :data:`STATS_FILES`, by its name without ``.tsv``), each at the evaluator level
    (the paper's) and at the item level (judgments, the evaluator a stratum, the
    ``settings.cluster_by`` units kept together; ``settings.permutations`` seeded random
    permutations where a test is not exact); every row with its n, the smallest p it could reach
    and what it can say at ``settings.alpha``."""
    from judgelab.analysis.stats import add_reading
    from judgelab.studies.simulation import stats as st

    metric, alpha = settings.metric, settings.alpha
    acc, elig = _read_numeric(accuracy), _read_numeric(accuracy_eligible)
    control_table = _read_numeric(control)
    control_pairs = _read_numeric(control_items)
    items = st.item_scores(_read_numeric(predictions), metric, settings.cluster_by)
    kw = {"permutations": int(settings.permutations), "seed": int(settings.seed)}
    out = {
        "factors": st.factor_tests(acc, items, metric=metric, **kw),
        "pairwise": st.pairwise_tests(acc, items, metric=metric, alpha=alpha, **kw),
        "versus_base": st.versus_base(acc, items, metric=metric, alpha=alpha, **kw),
        "all_pairs": st.all_pairs(acc, items, metric=metric, alpha=alpha),
        "chance": st.chance_tests(acc, items, metric=metric, alpha=alpha, **kw),
        "alignment": st.alignment_tests(acc, elig, items, metric=metric, **kw),
        "control": (
            st.control_tests(control_table, control_pairs, st.clusters_of(items), **kw)
            if len(control_table)
            else pd.DataFrame()
        ),
    }
    out["improvements"] = st.improvements(out["versus_base"], alpha)
    out = {k: add_reading(v, alpha) if "test" in v.columns else v for k, v in out.items()}
    for name in STATS_FILES:
        write_tsv(out[name[:-4]], outputs[name[:-4]])
    imp = out["improvements"]
    if len(imp):
        top = imp.iloc[0]
        log.info("configurations above their Base Judge: %d of %d", top["improve"], top["configurations"])
    vb = out["versus_base"]
    for test, g in vb.groupby("test", sort=False) if len(vb) else []:
        log.info("vs the Base Judge, %s: %s", test, "; ".join(sorted(set(g["reading"]))))
    return out


def figures_job(
    accuracy: str,
    control: str,
    traits: str,
    confusion: str,
    outputs: Mapping[str, str],
    dataset: str,
    metric: str,
) -> None:
    """The figures of one evaluator set (``dataset``), from its metric tables: accuracy by shot
    count, the advantage over the cross-evaluator control, per-evaluator accuracy against the
    evaluator traits, the row-normalised confusion matrices, each evaluator's label distribution
    (Figure 9). ``outputs``: each of :data:`REPORT_FIGURES` (.png) and ``<figure>_pdf``."""
    from judgelab.studies.simulation import figures as fg
    from judgelab.studies.simulation import metrics as sm
    from judgelab.studies.simulation.report import NAMES

    out = outputs
    acc = _read_numeric(accuracy)
    fg.fig_shots(
        acc,
        f"{dataset}: accuracy by shot count",
        out["accuracy_by_shots"],
        out["accuracy_by_shots_pdf"],
        metric=metric,
    )
    fg.fig_control(
        _read_numeric(control),
        f"{dataset}: personalization advantage over the cross-evaluator control",
        out["control_advantage"],
        out["control_advantage_pdf"],
    )
    trait_table = _read(traits)
    per = acc[acc["method"] == sm.PJ].groupby("evaluator")[metric].mean().reindex(trait_table["evaluator"])
    fg.fig_evaluators(
        per,
        trait_table,
        f"{dataset}: per-evaluator accuracy",
        out["evaluator_traits"],
        out["evaluator_traits_pdf"],
    )
    conf = _read(confusion)
    groups = [
        g for g in conf["group"].unique() if g.endswith("all cells") or g.startswith(NAMES[sm.BASE_JUDGE])
    ]
    fg.fig_confusion(
        conf,
        groups,
        f"{dataset}: row-normalised confusion (rows gold)",
        out["confusion"],
        out["confusion_pdf"],
    )
    fg.fig_label_distribution(
        trait_table,
        f"{dataset}: each evaluator's preference distribution",
        out["label_distribution"],
        out["label_distribution_pdf"],
    )
    log.info("%s: %d figures in %s", dataset, len(REPORT_FIGURES), Path(out["confusion"]).parent)


def annotators_job(records: str, splits: str, annotators: str) -> pd.DataFrame:
    """What the evaluator set can support (:mod:`.annotators`): agreement of its annotators,
    their neutral and deviation rates, the deviating validation pairs."""
    from judgelab.studies.simulation.annotators import annotator_table

    table = annotator_table(read_jsonl(records), read_splits(splits))
    write_tsv(table, annotators)
    get = table.set_index(["scope", "evaluator_x", "measure"])["value"]
    kappas = table.loc[table["measure"] == "Cohen's kappa", "value"]
    log.info(
        "annotators: Cohen's kappa %s; Fleiss' kappa %.3f; deviating validation pairs %d of %d",
        "n/a" if kappas.empty else f"{kappas.min():.3f}-{kappas.max():.3f}",
        get[("set", "all", "Fleiss' kappa")],
        get[("validation", "all", "deviating validation pairs")],
        get[("validation", "all", "validation pairs")],
    )
    return table


def _cross_task_inputs(metrics_dirs: Mapping[str, str], tasks: Mapping[str, str], metric: str) -> dict:
    from judgelab.studies.simulation import metrics as sm

    out = {}
    for d, mdir in metrics_dirs.items():
        acc = _read_numeric(Path(mdir) / "accuracy.tsv")
        per = acc[acc["method"] == sm.PJ].groupby(["evaluator", "model", "demo_type", "shots"])[metric].mean()
        out[d] = (tasks[d], _read(Path(mdir) / "traits.tsv"), per.groupby("evaluator").mean())
    return out


def cross_task_figure_job(
    metrics_dirs: Mapping[str, str],
    tasks: Mapping[str, str],
    png: str,
    pdf: str,
    metric: str,
) -> pd.DataFrame:
    """Figure 3 (``png``, ``pdf``): for the evaluators who judged two tasks, the neutral rate and
    the PersonaJudge accuracy in one task against the other. ``metrics_dirs``: evaluator set ->
    the folder of its metric tables; ``tasks``: evaluator set -> its task."""
    from judgelab.studies.simulation import figures as fg
    from judgelab.studies.simulation import metrics as sm

    points, corr = sm.cross_task(_cross_task_inputs(metrics_dirs, tasks, metric))
    fg.fig_cross_task(points, corr, "Evaluators who judged two tasks (PersonaJudge Figure 3)", png, pdf)
    return points


def tables_job(
    metrics_dirs: Mapping[str, str],
    stats_dirs: Mapping[str, str],
    outputs: Mapping[str, str],
    settings: TableSettings,
    data_dirs: Mapping[str, str] | None = None,
    tasks: Mapping[str, str] | None = None,
) -> None:
    """The tables (:data:`REPORT_TABLES`, .tsv + .md with the caption above) over all evaluator
    sets, one block of rows per set (Table 1 ``factors``: one column per set). ``outputs``:
    each table's .tsv (by its name) and .md (``<name>_md``); ``metrics_dirs``, ``stats_dirs``:
    set -> the folder of its metric and statistics tables; ``data_dirs``: set -> the folder of
    its ``annotators.tsv`` and ``split_report.tsv``; ``tasks``: set -> its task (the cross-task
    table); ``settings``: the accuracy reported and the significance level of the readings."""
    from judgelab.studies.simulation import metrics as sm
    from judgelab.studies.simulation import report as rp

    metric, alpha = settings.metric, settings.alpha
    data_dirs = data_dirs or {}
    tasks = tasks or {}
    accs = {d: _read_numeric(Path(p) / "accuracy.tsv") for d, p in metrics_dirs.items()}
    tables: dict[str, list[pd.DataFrame]] = {t: [] for t in REPORT_TABLES}

    def add(name: str, dataset: str, df: pd.DataFrame) -> None:
        if len(df):
            tables[name].append(df.assign(dataset=dataset)[["dataset", *df.columns]])

    for d, mdir in metrics_dirs.items():
        m, s = Path(mdir), Path(stats_dirs[d])
        for name, file, shape in (
            ("annotators", "annotators.tsv", rp.annotators_report),
            ("splits", "split_report.tsv", lambda df: df),
        ):
            if d in data_dirs and (Path(data_dirs[d]) / file).exists():
                add(name, d, shape(_read(Path(data_dirs[d]) / file)))
        acc = accs[d]
        draws = _read(m / "random_draws.tsv")
        long = _read_numeric(m / "predictions.tsv")
        add("core", d, rp.core_table(acc, draws, metric))
        add("improvements", d, _read(s / "improvements.tsv"))
        add("evaluators", d, rp.evaluators_table(acc, metric))
        add(
            "baselines",
            d,
            rp.baselines_table(
                _read_numeric(m / "accuracy_eligible.tsv"), _read_numeric(m / "control.tsv"), draws, metric
            ),
        )
        add("deviation", d, rp.deviation_report(_read(m / "deviation.tsv")))
        add("confusion", d, rp.pooled_confusion(long))
        add("prf", d, rp.pooled_prf(long))
        add("confusion_cells", d, _read(m / "confusion.tsv"))
        add("prf_cells", d, _read(m / "prf.tsv"))
        add("distribution", d, rp.distribution_report(_read(m / "distribution.tsv")))
        for name in ("correlations", "design"):
            add(name, d, _read(m / f"{name}.tsv"))
        for name in ("factors", "pairwise", "versus_base", "chance", "alignment", "control"):
            add(f"stats_{name}", d, rp.stats_report(_read(s / f"{name}.tsv"), alpha))
        all_pairs = _read(s / "all_pairs.tsv")
        if len(all_pairs):
            add("stats_all_pairs", d, rp.all_pairs_summary(all_pairs, alpha))
    if tasks:
        _, corr = sm.cross_task(_cross_task_inputs(metrics_dirs, tasks, metric))
        tables["cross_task"] = [corr] if len(corr) else []
    factors = rp.factors_table(accs, metric)
    tables["factors"] = [factors] if len(factors) else []
    for name in REPORT_TABLES:
        if tables[name]:
            df = pd.concat(tables[name], ignore_index=True)
        elif name == "cross_task":
            df = pd.DataFrame(
                {
                    "note": [
                        "no evaluator judged two tasks (no two evaluator sets of different tasks share evaluators)"
                    ]
                }
            )
        else:
            df = pd.DataFrame({"note": ["no rows"]})
        stem = Path(outputs[name]).with_suffix("")
        if Path(outputs[f"{name}_md"]) != stem.with_suffix(".md"):
            raise ValueError(f"table {name}: its .tsv and .md must share a stem ({outputs[name]})")
        rp.write_table(df, stem, rp.CAPTIONS[name])
    log.info(
        "%d tables over %d evaluator sets in %s",
        len(REPORT_TABLES),
        len(metrics_dirs),
        Path(outputs[REPORT_TABLES[0]]).parent,
    )
