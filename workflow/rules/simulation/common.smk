# Helpers of the simulation rules. Every answer (evaluator sets, cells, settings, prompt texts,
# paths) comes from the study's plan (judgelab.studies.simulation.Plan).
import os

from judgelab.studies.simulation.plan import (
    DATA_TABLES,
    METRIC_FILES,
    REPORT_FIGURES,
    REPORT_TABLES,
    STATS_FILES,
)

SIMULATION = PROJECT.plan("simulation")

SIM_SETS_RE = names_re(SIMULATION.datasets)
SIM_JUDGES_RE = names_re(SIMULATION.judges)
SIM_TYPES_RE = names_re(SIMULATION.all_demo_types())


def sim_files(which, names):
    """The files `which` (metrics or stats) of the wildcards' evaluator set, as named outputs."""
    return {n[:-4]: path(which, name=n[:-4]) for n in names}


def sim_await(dataset):
    """Wait for the download of an evaluator set whose file decides its demonstration types
    (SIMULATION.checkpoints: a jsonl file, a type needing telemetry or reasoning): Snakemake
    evaluates the caller again once the checkpoint has run, and the plan reads the file."""
    for rule, wildcards in SIMULATION.checkpoints(dataset):
        getattr(checkpoints, rule).get(**wildcards)


def sim_design(wildcards):
    """The metrics job's design param: the set's cells and skipped types, once they are known."""
    sim_await(wildcards.dataset)
    return SIMULATION.design(wildcards.dataset).param()


def sim_predictions(wildcards):
    """Every cell's prediction table of the wildcards' evaluator set, in the order of its cells
    (after the set's download where the file decides them)."""
    sim_await(wildcards.dataset)
    return [
        path(
            "simulation_predictions",
            dataset=wildcards.dataset,
            model=c["model"],
            demo_type=c["demo_type"],
            shots=str(c["shots"]),
        )
        for c in SIMULATION.cells(wildcards.dataset)
    ]


def sim_dirs(which):
    """Evaluator set -> the folder of its `which` (simulation_metrics / simulation_stats /
    simulation_annotators) files."""
    return {d: os.path.dirname(path(which, dataset=d, name="x")) for d in SIMULATION.datasets}


def sim_all_files(which, names):
    return [path(which, dataset=d, name=n[:-4]) for d in SIMULATION.datasets for n in names]
