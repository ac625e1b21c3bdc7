"""Job functions of the evaluator-simulation study (seed 001, PersonaJudge): one function per
workflow job, plain paths and values in, files out (no Snakemake import).

Per evaluator set (a dataset of evaluator judgments, ``{dataset}`` below):

1. :func:`download_job` - fetch the public file (PandaLM's ``testset-v1.json``).
2. :func:`prepare_job` - load and check the records, split every evaluator's items into a
   demonstration pool and a validation set: ``records.jsonl``, ``splits.tsv``, ``evaluators.tsv``.
3. :func:`predict_job` - one per cell (evaluator set x model x demonstration type x shot count;
   the Base Judge is type ``base`` with 0 shots): the two-round cascade on every validation
   item: ``predictions/{model}/{type}/{shots}.tsv`` and the demonstrations drawn.
4. :func:`baselines_job` - random, oracle consensus, global and per-evaluator majority.
5. :func:`metrics_job` - accuracy, deviation metrics, confusion matrices, per-class P/R/F1,
   label distributions, the cross-evaluator control, evaluator traits and correlations.
6. :func:`stats_job` - Friedman, RM-ANOVA, Wilcoxon with Holm, Benjamini-Hochberg, t tests.
7. :func:`report_job` - the seed-shaped tables (TSV + Markdown) and figures (PNG + PDF) of all
   evaluator sets.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from .backends.base import make_backend
from .errors import InputError
from .judging import open_client, write_tsv
from .simulation import baselines as bl
from .simulation import metrics as sm
from .simulation import report as rp
from .simulation import stats as st
from .simulation.cascade import BASE, CascadeSettings, read_predictions, simulate
from .simulation.data import download_records, load_records, plan_types, read_jsonl, unsupported_reason, write_jsonl
from .simulation.prompt import SimulationPrompt
from .simulation.splits import evaluator_summary, make_splits, read_splits, write_splits

log = logging.getLogger("judgelab")

#: files written by :func:`metrics_job` into its output folder
METRIC_FILES = ("predictions.tsv", "accuracy.tsv", "accuracy_eligible.tsv", "deviation.tsv",
                "deviation_pooled.tsv", "confusion.tsv", "prf.tsv", "distribution.tsv", "control.tsv",
                "traits.tsv", "correlations.tsv")
#: files written by :func:`stats_job`
STATS_FILES = ("factors.tsv", "pairwise.tsv", "versus_base.tsv", "all_pairs.tsv", "alignment.tsv",
               "control.tsv")
#: tables written by :func:`report_job` (each as .tsv and .md)
REPORT_TABLES = ("factors", "core", "evaluators", "baselines", "deviation", "confusion", "prf",
                 "distribution", "correlations", "stats_factors", "stats_pairwise", "stats_versus_base",
                 "stats_alignment", "stats_control")
#: figures written by :func:`report_job` per evaluator set (each as .png and .pdf)
REPORT_FIGURES = ("accuracy_by_shots", "control_advantage", "evaluator_traits", "confusion")


def _json(v):
    return json.loads(v) if isinstance(v, str) else v


# --------------------------------------------------------------------------------------------
# Data


def download_job(url: str, out: str, fmt: str = "pandalm") -> None:
    """Fetch ``url`` (PandaLM: :data:`~judgelab.simulation.data.PANDALM_URL`) to ``out`` and
    check that it loads in format ``fmt``."""
    download_records(out, url, fmt)


def prepare_job(source: str, fmt: str, out_records: str, out_splits: str, out_evaluators: str, *,
                pool: int, validation: int, seed: int, split: str = "coordinated",
                min_neutral: int = 2, evaluators: Sequence[str] | None = None) -> pd.DataFrame:
    """Load and check the records (only ``evaluators`` if given), split each evaluator's items,
    and write the normalised records, the split table and the per-evaluator summary."""
    records = load_records(source, fmt)
    if evaluators:
        known = {r.evaluator for r in records}
        unknown = sorted(set(evaluators) - known)
        if unknown:
            raise InputError(f"evaluators {unknown} are not in {source}", key="simulation.evaluators")
        keep = set(evaluators)
        records = [r for r in records if r.evaluator in keep]
    splits = make_splits(records, pool=int(pool), validation=int(validation), seed=int(seed), mode=split)
    summary = evaluator_summary(records, splits, int(min_neutral))
    write_jsonl(records, out_records)
    write_splits(splits, out_splits)
    write_tsv(summary, out_evaluators)
    log.info("%s: %d records, %d evaluators, %d items; pool %d / validation %d per evaluator; "
             "direction-only: %s", source, len(records), summary.shape[0], len({r.item for r in records}),
             pool, validation, list(summary.loc[summary["direction_only"], "evaluator"]))
    return summary


def plan_cells(records: str, fmt: str, demo_types: Sequence[str], shots: Sequence[int],
               models: Sequence[str]) -> tuple[list[dict], dict[str, str]]:
    """The cells of the factorial design the data supports (a Base Judge cell per model, then
    model x type x shots), and the skipped types with the reason (logged)."""
    types, skipped = plan_types(list(demo_types), load_records(records, fmt))
    cells = [{"model": m, "demo_type": BASE, "shots": 0} for m in models]
    cells += [{"model": m, "demo_type": t, "shots": int(k)} for m in models for t in types for k in shots]
    return cells, skipped


# --------------------------------------------------------------------------------------------
# Prediction


def predict_job(records: str, splits: str, out_predictions: str, out_demos: str, *, model: str | dict,
                demo_type: str, shots: int, settings: str | dict, prompt: str | dict, cache: str,
                threads: int | None = None, desc: str | None = None) -> pd.DataFrame:
    """One cell: the cascade on every evaluator's validation items. ``settings`` holds task,
    answer (auto, parse or logits), max_tokens, seed, min_neutral (:meth:`CascadeSettings.resolve`);
    ``prompt`` is the prompt YAML's texts (:meth:`SimulationPrompt.texts`, a tracked parameter) or
    a YAML reference."""
    recs = read_jsonl(records)
    if demo_type != BASE:
        reason = unsupported_reason(demo_type, recs)
        if reason:
            raise InputError(f"demonstration type {demo_type} is not supported by {records}: {reason}",
                             key="simulation.demo_types")
    spec = _json(model)
    spec = dict(spec)
    if threads:
        spec["threads"] = int(threads)
    cfg = CascadeSettings.resolve(_json(settings), spec)
    pr = SimulationPrompt.load(prompt) if isinstance(prompt, str) and not prompt.lstrip().startswith("{") \
        else SimulationPrompt.from_mapping(_json(prompt), "<prompt parameter>")
    backend = make_backend(spec, spec.get("name", "<name>"))
    client = open_client(backend, cache)
    desc = desc or f"{spec.get('name', 'model')} {demo_type} {shots}-shot"
    t0 = time.perf_counter()
    try:
        preds, demos = simulate(recs, read_splits(splits), client, demo_type=demo_type, shots=int(shots),
                                settings=cfg, prompt=pr, desc=desc)
    finally:
        backend.close()
    log.info("%s: %d new calls, %d cache hits, %d prompt tokens sent, %.1f s", desc, client.calls,
             client.hits, client.prompt_tokens, time.perf_counter() - t0)
    write_tsv(preds, out_predictions)
    write_tsv(demos, out_demos)
    return preds


def baselines_job(records: str, splits: str, out: str, *, seed: int = 0,
                  majority_source: str = "all") -> pd.DataFrame:
    df = bl.reference_predictions(read_jsonl(records), read_splits(splits), seed=int(seed),
                                  majority_source=majority_source)
    write_tsv(df, out)
    log.info("reference predictors: %s", df.assign(ok=df["pred"] == df["gold"])
             .groupby("method")["ok"].mean().round(3).to_dict())
    return df


# --------------------------------------------------------------------------------------------
# Metrics, statistics, report


NONE = "-"  #: model / demonstration type of the reference predictors


def _long(predictions: Sequence[str], cells: Sequence[Mapping], baselines: str) -> pd.DataFrame:
    if len(predictions) != len(cells):
        raise ValueError("one cell description per prediction table expected")
    parts = []
    for path, cell in zip(predictions, cells):
        p = read_predictions(path)[["evaluator", "item", "gold", "pred"]]
        parts.append(p.assign(method=sm.cell_method(cell["shots"]), model=cell["model"],
                              demo_type=cell["demo_type"], shots=int(cell["shots"])))
    b = pd.read_csv(baselines, sep="\t", dtype=str, keep_default_na=False, na_values=[""])
    parts.append(b[["method", "evaluator", "item", "gold", "pred"]].assign(model=NONE, demo_type=NONE, shots=0))
    return pd.concat(parts, ignore_index=True)[sm.CELL + ["evaluator", "item", "gold", "pred"]]


def _group_label(method: str, model: str, demo_type: str, shots: int) -> str:
    name = rp.NAMES.get(method, method)
    if method == sm.PJ:
        return f"{name} | {model} | {demo_type} | {int(shots)}-shot"
    return f"{name} | {model}" if model != NONE else name


def metrics_job(records: str, predictions: Sequence[str], cells: str | Sequence[Mapping], baselines: str,
                out_dir: str) -> dict[str, pd.DataFrame]:
    """All metric tables of one evaluator set (:data:`METRIC_FILES` in ``out_dir``).
    ``cells[i]`` (model, demo_type, shots) describes ``predictions[i]``."""
    recs = read_jsonl(records)
    long = sm.with_consensus(_long(predictions, _json(cells), baselines), recs)
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
    labelled = long.assign(group=[_group_label(*k) for k in zip(long["method"], long["model"],
                                                                  long["demo_type"], long["shots"])])
    pooled_pj = pj.assign(group=[f"{rp.NAMES[sm.PJ]} | {m} | all cells" for m in pj["model"]])
    both = pd.concat([labelled, pooled_pj], ignore_index=True)
    out["confusion"] = sm.confusion_table(both, ["group"])
    out["prf"] = sm.prf_table(both, ["group"])
    dist_src = pd.concat([long[long["method"] != sm.PJ], pj.assign(demo_type="all", shots=0)])
    out["distribution"] = sm.label_distribution(dist_src, ["method", "model"])
    control_rows = []
    for (model, dt, shots), g in pj.groupby(["model", "demo_type", "shots"], sort=True):
        c = bl.cross_evaluator_control(g)
        for ev, ge in c.groupby("evaluator", sort=True):
            control_rows.append({"model": model, "demo_type": dt, "shots": int(shots), "evaluator": ev,
                                 "n_matched": len(ge), "own_accuracy": ge["own_correct"].mean(),
                                 "control_accuracy": ge["control_accuracy"].mean()})
    out["control"] = pd.DataFrame(control_rows, columns=["model", "demo_type", "shots", "evaluator",
                                                         "n_matched", "own_accuracy", "control_accuracy"])
    out["traits"] = sm.evaluator_traits(recs)
    acc_pj = out["accuracy"][out["accuracy"]["method"] == sm.PJ].groupby("evaluator")["accuracy"].mean()
    acc_pj = acc_pj.reindex(out["traits"]["evaluator"])
    out["correlations"] = sm.correlation_table(acc_pj, out["traits"])
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    for name in METRIC_FILES:
        write_tsv(out[name[:-4]], Path(out_dir) / name)
    acc = out["accuracy"]
    log.info("mean accuracy by method: %s", acc.groupby("method")["accuracy"].mean().round(3).to_dict())
    return out


def _read(path: str | Path) -> pd.DataFrame:
    """A table written by these jobs; a table without columns (no rows to report) is empty."""
    try:
        return pd.read_csv(path, sep="\t", dtype={"evaluator": str, "model": str, "demo_type": str,
                                                  "method": str}, keep_default_na=False, na_values=[""])
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def stats_job(metrics_dir: str, out_dir: str, *, metric: str = "accuracy",
              alpha: float = 0.05) -> dict[str, pd.DataFrame]:
    """The section 14 tests of one evaluator set (:data:`STATS_FILES` in ``out_dir``)."""
    m = Path(metrics_dir)
    acc, elig, control = _read(m / "accuracy.tsv"), _read(m / "accuracy_eligible.tsv"), _read(m / "control.tsv")
    out = {"factors": st.factor_tests(acc, metric), "pairwise": st.pairwise_tests(acc, metric),
           "versus_base": st.versus_base(acc, metric, alpha), "all_pairs": st.all_pairs(acc, metric, alpha),
           "alignment": st.alignment_tests(acc, elig, metric),
           "control": st.control_tests(control) if len(control) else pd.DataFrame()}
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    for name in STATS_FILES:
        write_tsv(out[name[:-4]], Path(out_dir) / name)
    vb = out["versus_base"]
    if len(vb):
        log.info("cells above their Base Judge: %d of %d; BH-significant: %d", int((vb["delta"] > 0).sum()),
                 len(vb), int(vb["significant_bh"].sum()))
    return out


def report_job(metrics_dirs: Mapping[str, str] | str, stats_dirs: Mapping[str, str] | str, out_dir: str,
               *, metric: str = "accuracy") -> None:
    """Tables (:data:`REPORT_TABLES`, .tsv + .md, in ``out_dir/tables``) over all evaluator sets
    and figures (:data:`REPORT_FIGURES`, .png + .pdf, in ``out_dir/figures/{dataset}``)."""
    metrics_dirs, stats_dirs = _json(metrics_dirs), _json(stats_dirs)
    out = Path(out_dir)
    accs = {d: _read(Path(p) / "accuracy.tsv") for d, p in metrics_dirs.items()}
    tables: dict[str, list[pd.DataFrame]] = {t: [] for t in REPORT_TABLES}

    def add(name: str, dataset: str, df: pd.DataFrame) -> None:
        if len(df):
            tables[name].append(df.assign(dataset=dataset)[["dataset", *df.columns]])

    for d, mdir in metrics_dirs.items():
        m, s = Path(mdir), Path(stats_dirs[d])
        acc = accs[d]
        add("core", d, rp.core_table(acc, metric))
        add("evaluators", d, rp.evaluators_table(acc, metric))
        add("baselines", d, rp.baselines_table(_read(m / "accuracy_eligible.tsv"), _read(m / "control.tsv"), metric))
        add("deviation", d, rp.deviation_report(_read(m / "deviation.tsv")))
        conf = _read(m / "confusion.tsv")
        add("confusion", d, conf)
        add("prf", d, _read(m / "prf.tsv"))
        add("distribution", d, _read(m / "distribution.tsv"))
        add("correlations", d, _read(m / "correlations.tsv"))
        for name in ("factors", "pairwise", "versus_base", "alignment", "control"):
            add(f"stats_{name}", d, _read(s / f"{name}.tsv"))
        fig_dir = out / "figures" / d
        rp.fig_shots(acc, f"{d}: accuracy by shot count", fig_dir / "accuracy_by_shots.png",
                     fig_dir / "accuracy_by_shots.pdf", metric)
        rp.fig_control(_read(m / "control.tsv"), f"{d}: personalization advantage over the cross-evaluator "
                       "control", fig_dir / "control_advantage.png", fig_dir / "control_advantage.pdf")
        traits = _read(m / "traits.tsv")
        per = acc[acc["method"] == sm.PJ].groupby("evaluator")[metric].mean().reindex(traits["evaluator"])
        rp.fig_evaluators(per, traits, f"{d}: per-evaluator accuracy", fig_dir / "evaluator_traits.png",
                          fig_dir / "evaluator_traits.pdf")
        groups = [g for g in conf["group"].unique()
                  if g.endswith("all cells") or g.startswith(rp.NAMES[sm.BASE_JUDGE])]
        rp.fig_confusion(conf, groups, f"{d}: row-normalised confusion (rows gold)", fig_dir / "confusion.png",
                         fig_dir / "confusion.pdf")
    factors = rp.factors_table(accs, metric)
    tables["factors"] = [factors] if len(factors) else []
    for name in REPORT_TABLES:
        df = pd.concat(tables[name], ignore_index=True) if tables[name] else pd.DataFrame({"note": ["no rows"]})
        rp.write_table(df, out / "tables" / name, rp.CAPTIONS[name])
    log.info("report: %d tables, %d figures per evaluator set in %s", len(REPORT_TABLES),
             len(REPORT_FIGURES), out)


def default_prompt_texts(ref: str = "simulation/personajudge") -> dict:
    """The prompt texts to pass as ``predict_job(prompt=...)`` (a tracked params value)."""
    return SimulationPrompt.load(ref).texts()
