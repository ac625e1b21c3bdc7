"""Evaluator simulation (seed 001, PersonaJudge) jobs. One function per workflow job; plain paths
and values in, files out (no Snakemake import).

Per evaluator set (a dataset of evaluator judgments, ``{dataset}`` of the paths; the study's plan
:mod:`judgelab.studies.simulation` names the files):

1. :func:`download_job` - fetch the public file (PandaLM's ``testset-v1.json``).
2. :func:`prepare_job` - load and check the records, split every evaluator's items into a
   demonstration pool and a validation set of whole leakage groups: ``records.jsonl``,
   ``splits.tsv``, ``evaluators.tsv``, ``split_report.tsv``; :func:`annotators_job` - what the
   data can support (``annotators.tsv``).
3. :func:`predict_job` - one per cell (evaluator set x model x demonstration type x shot count;
   the Base Judge is type ``base`` with 0 shots): the two-round cascade on every validation
   item: ``predictions/{model}/{demo_type}/{shots}.tsv`` and the demonstrations drawn.
4. :func:`baselines_job` - random, oracle consensus, global and per-evaluator majority.
5. :func:`metrics_job` - accuracy, deviation metrics, confusion matrices, per-class P/R/F1,
   label distributions, the cross-evaluator control, evaluator traits, correlations, the design.
6. :func:`stats_job` - Friedman, RM-ANOVA, Wilcoxon with Holm, Benjamini-Hochberg, t tests over
   evaluators, beside the item-level tests; the count of configurations above the Base Judge.
7. :func:`figures_job` - the figures of one evaluator set (PNG + PDF); :func:`cross_task_figure_job`
   - Figure 3 over the evaluator sets of two tasks.
8. :func:`tables_job` - the seed-shaped tables (TSV + Markdown) over all evaluator sets.

The tables these jobs hand on are the study's own (readers and writers in
:mod:`judgelab.studies.simulation`: ``read_jsonl``, ``read_splits``, ``read_predictions``); the analysis
libraries (scipy, statsmodels, matplotlib) are imported inside the jobs that use them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from judgelab.data.tables import write_tsv
from judgelab.errors import InputError
from judgelab.llm.judging import require_coverage
from judgelab.llm.session import LLMSession
from judgelab.project.runner import as_value
from judgelab.studies.simulation import baselines as bl
from judgelab.studies.simulation.cascade import BASE, CascadeSettings, read_predictions, simulate
from judgelab.studies.simulation.data import (
    download_records,
    load_records,
    read_jsonl,
    select_task,
    unsupported_reason,
    write_jsonl,
)
from judgelab.studies.simulation.plan import METRIC_FILES, REPORT_FIGURES, REPORT_TABLES, STATS_FILES
from judgelab.studies.simulation.prompt import SimulationPrompt
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


def download_job(url: str, out: str, fmt: str = "pandalm") -> None:
    """Fetch ``url`` (PandaLM: :data:`~judgelab.studies.simulation.data.PANDALM_URL`; ``file://``
    works) to ``out`` and check that it loads in format ``fmt``."""
    download_records(out, url, fmt)


def prepare_job(
    source: str,
    fmt: str,
    out_records: str,
    out_splits: str,
    out_evaluators: str,
    out_report: str | None = None,
    *,
    pool: int,
    validation: int,
    seed: int,
    split: str = "coordinated",
    group_by: str = "context",
    balance_neutral: bool = True,
    min_neutral: int = 2,
    evaluators: Sequence[str] | None = None,
    task: str | None = None,
    name: str | None = None,
) -> pd.DataFrame:
    """Load and check the records (only ``evaluators`` if given; only the records of ``task``
    where the file's records name their task), split each evaluator's items into whole leakage
    groups (``group_by``; the order interleaved by neutral labels with ``balance_neutral``), and
    write the normalised records, the split table, the per-evaluator
    summary and the split report (:func:`~.splits.split_report`). ``name``: the evaluator set,
    so that a config error names its full key."""
    try:
        records = select_task(load_records(source, fmt), task, source)
        if evaluators:
            known = {r.evaluator for r in records}
            unknown = sorted(set(evaluators) - known)
            if unknown:
                raise InputError(
                    f"evaluators {unknown} are not in {source} (it has {sorted(known)})",
                    key="simulation.evaluators",
                )
            keep = set(evaluators)
            records = [r for r in records if r.evaluator in keep]
        splits = make_splits(
            records,
            pool=int(pool),
            validation=int(validation),
            seed=int(seed),
            mode=split,
            group_by=group_by,
            balance_neutral=bool(balance_neutral),
        )
    except InputError as exc:
        raise _dataset_key(exc, name) from None
    summary = evaluator_summary(records, splits, int(min_neutral))
    write_jsonl(records, out_records)
    write_splits(splits, out_splits)
    write_tsv(summary, out_evaluators)
    report = split_report(records, splits, group_by)
    if out_report:
        write_tsv(report, out_report)
    grouped = report.set_index("measure")["count"]
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
        len(records),
        summary.shape[0],
        len({r.item for r in records}),
        pool,
        validation,
        list(summary.loc[summary["direction_only"], "evaluator"]),
    )
    return summary


# --------------------------------------------------------------------------------------------
# Prediction


def predict_job(
    records: str,
    splits: str,
    out_predictions: str,
    out_demos: str,
    *,
    model: str | dict,
    demo_type: str,
    shots: int,
    settings: str | dict,
    prompt: str | dict,
    cache: str,
    threads: int | None = None,
    desc: str | None = None,
    coverage: str | dict | None = None,
    model_name: str | None = None,
) -> pd.DataFrame:
    """One cell: the cascade on every evaluator's validation items. ``settings`` holds task,
    answer (auto, parse or logits), max_tokens, seed, min_neutral (:meth:`CascadeSettings.resolve`);
    ``prompt`` is the prompt's texts (:meth:`SimulationPrompt.texts_for`, a tracked parameter;
    a JSON string or the mapping); ``coverage``: the cell's coverage check
    (:func:`judgelab.llm.judging.require_coverage` on the answered items)."""
    recs = read_jsonl(records)
    if demo_type != BASE:
        reason = unsupported_reason(demo_type, recs)
        if reason:
            raise InputError(
                f"demonstration type {demo_type} is not supported by {records}: {reason}",
                key="simulation.demo_types",
            )
    desc = desc or f"{demo_type} {shots}-shot"
    session = LLMSession(model, cache, threads, desc, name=model_name)
    cfg = CascadeSettings.resolve(as_value(settings), session.spec)
    pr = SimulationPrompt.from_mapping(as_value(prompt), "<prompt parameter>", partial=True)
    with session as client:
        preds, demos = simulate(
            recs,
            read_splits(splits),
            client,
            demo_type=demo_type,
            shots=int(shots),
            settings=cfg,
            prompt=pr,
            desc=desc,
        )
    if len(preds):
        require_coverage(
            preds["answered"],
            preds["r2_answer"].where(preds["r2_answer"].notna(), preds["r1_answer"]),
            coverage=coverage,
            model=session.name,
            backend=session.spec.get("backend"),
            bound=cfg.request_max_tokens(),
            what=desc,
        )
    write_tsv(preds, out_predictions)
    write_tsv(demos, out_demos)
    return preds


def baselines_job(
    records: str, splits: str, out: str, *, seed: int = 0, majority_source: str = "all"
) -> pd.DataFrame:
    """The reference predictors' labels for every validation item."""
    df = bl.reference_predictions(
        read_jsonl(records), read_splits(splits), seed=int(seed), majority_source=majority_source
    )
    write_tsv(df, out)
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
    b = pd.read_csv(baselines, sep="\t", dtype=str, keep_default_na=False, na_values=[""])
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
    predictions: Sequence[str],
    cells: str | Sequence[Mapping],
    baselines: str,
    out_dir: str,
    skipped: str | Mapping[str, str] | None = None,
    *,
    splits: str | None = None,
    metric: str = "accuracy",
    random_draws: int = bl.RANDOM_DRAWS,
    seed: int = 0,
) -> dict[str, pd.DataFrame]:
    """All metric tables of one evaluator set (:data:`METRIC_FILES` in ``out_dir``).
    ``cells[i]`` (model, demo_type, shots) describes ``predictions[i]``; ``skipped``: the
    demonstration types the data cannot support, with the reason (the design table); ``metric``
    decides the correlations and the control's scoring (``accuracy``: every judgment, a missing
    prediction wrong); ``random_draws`` seeded draws of Random Selection (``seed``); ``splits``:
    the split table, whose leakage groups go into the long table (``group``, the clusters of the
    item-level tests)."""
    from judgelab.studies.simulation import metrics as sm
    from judgelab.studies.simulation.report import NAMES

    if metric not in sm.METRICS:
        raise InputError(
            f"unknown metric {metric!r}; known: {', '.join(sm.METRICS)}", key="simulation.metric"
        )
    cells, skipped = as_value(cells), as_value(skipped) or {}
    for t, why in skipped.items():
        log.warning("demonstration type %s skipped: %s", t, why)
    recs = read_jsonl(records)
    long = sm.with_consensus(_long(predictions, cells, baselines), recs)
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
    out["design"] = design_table(cells, skipped)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    for name in METRIC_FILES:
        write_tsv(out[name[:-4]], Path(out_dir) / name)
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
        return pd.read_csv(
            path,
            sep="\t",
            dtype={
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
            keep_default_na=False,
            na_values=[""],
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
    metrics_dir: str,
    out_dir: str,
    *,
    metric: str = "accuracy",
    alpha: float = 0.05,
    permutations: int = 10_000,
    seed: int = 0,
    cluster_by: str = "group",
) -> dict[str, pd.DataFrame]:
    """The section 14 tests of one evaluator set (:data:`STATS_FILES` in ``out_dir``), each at the
    evaluator level (the seed's) and at the item level (judgments, the evaluator a stratum, the
    ``cluster_by`` units kept together; ``permutations`` seeded random permutations where a test
    is not exact); every row with its n, the smallest p it could reach and what it can say at
    ``alpha``."""
    from judgelab.studies.simulation import stats as st

    m = Path(metrics_dir)
    acc, elig = _read_numeric(m / "accuracy.tsv"), _read_numeric(m / "accuracy_eligible.tsv")
    control = _read_numeric(m / "control.tsv")
    control_items = _read_numeric(m / "control_items.tsv")
    items = st.item_scores(_read_numeric(m / "predictions.tsv"), metric, cluster_by)
    kw = {"permutations": int(permutations), "seed": int(seed)}
    out = {
        "factors": st.factor_tests(acc, items, metric, **kw),
        "pairwise": st.pairwise_tests(acc, items, metric, alpha=alpha, **kw),
        "versus_base": st.versus_base(acc, items, metric, alpha, **kw),
        "all_pairs": st.all_pairs(acc, items, metric, alpha),
        "chance": st.chance_tests(acc, items, metric, alpha, **kw),
        "alignment": st.alignment_tests(acc, elig, items, metric, **kw),
        "control": (
            st.control_tests(control, control_items, st.clusters_of(items), **kw)
            if len(control)
            else pd.DataFrame()
        ),
    }
    out["improvements"] = st.improvements(out["versus_base"], alpha)
    out = {k: st.add_reading(v, alpha) if "test" in v.columns else v for k, v in out.items()}
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    for name in STATS_FILES:
        write_tsv(out[name[:-4]], Path(out_dir) / name)
    imp = out["improvements"]
    if len(imp):
        top = imp.iloc[0]
        log.info("configurations above their Base Judge: %d of %d", top["improve"], top["configurations"])
    vb = out["versus_base"]
    for test, g in vb.groupby("test", sort=False) if len(vb) else []:
        log.info("vs the Base Judge, %s: %s", test, "; ".join(sorted(set(g["reading"]))))
    return out


def figures_job(metrics_dir: str, out_dir: str, *, dataset: str, metric: str = "accuracy") -> None:
    """The figures of one evaluator set (:data:`REPORT_FIGURES`, .png + .pdf, in ``out_dir``):
    accuracy by shot count, the advantage over the cross-evaluator control, per-evaluator
    accuracy against the evaluator traits, the row-normalised confusion matrices, each
    evaluator's label distribution (Figure 9)."""
    from judgelab.studies.simulation import figures as fg
    from judgelab.studies.simulation import metrics as sm
    from judgelab.studies.simulation.report import NAMES

    m, fig_dir = Path(metrics_dir), Path(out_dir)
    acc = _read_numeric(m / "accuracy.tsv")
    fg.fig_shots(
        acc,
        f"{dataset}: accuracy by shot count",
        fig_dir / "accuracy_by_shots.png",
        fig_dir / "accuracy_by_shots.pdf",
        metric,
    )
    fg.fig_control(
        _read_numeric(m / "control.tsv"),
        f"{dataset}: personalization advantage over the cross-evaluator control",
        fig_dir / "control_advantage.png",
        fig_dir / "control_advantage.pdf",
    )
    traits = _read(m / "traits.tsv")
    per = acc[acc["method"] == sm.PJ].groupby("evaluator")[metric].mean().reindex(traits["evaluator"])
    fg.fig_evaluators(
        per,
        traits,
        f"{dataset}: per-evaluator accuracy",
        fig_dir / "evaluator_traits.png",
        fig_dir / "evaluator_traits.pdf",
    )
    conf = _read(m / "confusion.tsv")
    groups = [
        g for g in conf["group"].unique() if g.endswith("all cells") or g.startswith(NAMES[sm.BASE_JUDGE])
    ]
    fg.fig_confusion(
        conf,
        groups,
        f"{dataset}: row-normalised confusion (rows gold)",
        fig_dir / "confusion.png",
        fig_dir / "confusion.pdf",
    )
    fg.fig_label_distribution(
        traits,
        f"{dataset}: each evaluator's preference distribution",
        fig_dir / "label_distribution.png",
        fig_dir / "label_distribution.pdf",
    )
    log.info("%s: %d figures in %s", dataset, len(REPORT_FIGURES), fig_dir)


def annotators_job(records: str, splits: str, out: str) -> pd.DataFrame:
    """What the evaluator set can support (:mod:`.annotators`): agreement of its annotators,
    their neutral and deviation rates, the deviating validation pairs."""
    from judgelab.studies.simulation.annotators import annotator_table

    table = annotator_table(read_jsonl(records), read_splits(splits))
    write_tsv(table, out)
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
    metrics_dirs: Mapping[str, str] | str,
    tasks: Mapping[str, str] | str,
    out_png: str,
    out_pdf: str,
    *,
    metric: str = "accuracy",
) -> pd.DataFrame:
    """Figure 3: for the evaluators who judged two tasks, the neutral rate and the PersonaJudge
    accuracy in one task against the other."""
    from judgelab.studies.simulation import figures as fg
    from judgelab.studies.simulation import metrics as sm

    points, corr = sm.cross_task(_cross_task_inputs(as_value(metrics_dirs), as_value(tasks), metric))
    fg.fig_cross_task(points, corr, "Evaluators who judged two tasks (seed 001 Figure 3)", out_png, out_pdf)
    return points


def tables_job(
    metrics_dirs: Mapping[str, str] | str,
    stats_dirs: Mapping[str, str] | str,
    out_dir: str,
    *,
    metric: str = "accuracy",
    alpha: float = 0.05,
    data_dirs: Mapping[str, str] | str | None = None,
    tasks: Mapping[str, str] | str | None = None,
) -> None:
    """The tables (:data:`REPORT_TABLES`, .tsv + .md with the caption above, in ``out_dir``) over
    all evaluator sets, one block of rows per set (Table 1 ``factors``: one column per set).
    ``data_dirs``: set -> the folder of its ``annotators.tsv`` and ``split_report.tsv``;
    ``tasks``: set -> its task (the cross-task table)."""
    from judgelab.studies.simulation import metrics as sm
    from judgelab.studies.simulation import report as rp

    metrics_dirs, stats_dirs = as_value(metrics_dirs), as_value(stats_dirs)
    data_dirs = as_value(data_dirs) or {}
    tasks = as_value(tasks) or {}
    out = Path(out_dir)
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
        rp.write_table(df, out / name, rp.CAPTIONS[name])
    log.info("%d tables over %d evaluator sets in %s", len(REPORT_TABLES), len(metrics_dirs), out)


def prompt_texts(
    task: str, demo_type: str, ref: str = "simulation/personajudge", resources: str | Path | None = None
) -> str:
    """The prompt parameter of one cell's :func:`predict_job` (JSON: the texts it uses)."""
    return json.dumps(SimulationPrompt.load(ref, resources).texts_for(task, demo_type), sort_keys=True)
