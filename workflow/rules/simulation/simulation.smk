# Study: evaluator simulation (PersonaJudge) - predict one evaluator's preference
# judgments (prefer A / neutral / prefer B) from that evaluator's own past judgments through a
# two-round cascade. Config section `simulation` (switch: simulation.enabled); target
# `snakemake simulation`; library judgelab.studies.simulation, jobs judgelab.studies.simulation.jobs, plan
# judgelab.studies.simulation; prompt resources/prompts/simulation/; captions
# workflow/report/simulation/.
# Stages per evaluator set: download -> prepare (records, splits in leakage groups, the split
# report) -> annotators (what the data can support) + predict (one job per cell: model x
# demonstration type x shot count, and the Base Judge) + baselines -> metrics -> stats, figures;
# then the tables over all evaluator sets (and the cross-task figure where sets of two tasks
# share evaluators).


# cheap steps run on the submitting host on a cluster (profiles/slurm); downloads need the network
localrules:
    simulation,
    simulation_download,
    simulation_annotators,
    simulation_baselines,
    simulation_metrics,
    simulation_tables,


include: "common.smk"
include: "data.smk"
include: "predict.smk"
include: "analysis.smk"
include: "report.smk"


rule simulation:
    input:
        PROJECT.targets("simulation"),
