# Helpers of the analysis stages (imported judges, significance, figures, classifiers): the judge
# groups they run on, their inputs and settings as tracked params, and their targets for `all`.
import re

CLF = config.get("classifier") or {}
SIG = config.get("significance") or {}
FIG = config.get("figures") or {}
CLF_DATASET = CLF.get("dataset")
REFERENCE = SIG.get("reference", "default")

if CLF_DATASET is not None and CLF_DATASET not in config["datasets"]:
    raise InputError(f"dataset {CLF_DATASET!r} is not in `datasets`", key="classifier.dataset")


def group_key(wildcards):
    return (wildcards.dataset, wildcards.model, wildcards.template)


def group_personas(wildcards):
    return GROUPS[group_key(wildcards)]


def group_files(stage):
    """Input function: the stage's file of every persona of the wildcards' group."""

    def files(wildcards):
        return [job_path(stage).format(dataset=wildcards.dataset, model=wildcards.model,
                                       template=wildcards.template, persona=p)
                for p in group_personas(wildcards)]

    return files


def group_path(stage, ext="tsv"):
    return f"{RESULTS}/{stage}/{{dataset}}/{{model}}/{{template}}.{ext}"


def significance_groups():
    """Groups with the reference persona and at least one other to compare with it."""
    return [g for g, ps in GROUPS.items() if REFERENCE in ps and len(ps) > 1]


def classifier_groups():
    return [g for g in GROUPS if CLF_DATASET is not None and g[0] == CLF_DATASET]


def expand_groups(pattern, groups):
    return [pattern.format(dataset=d, model=m, template=t) for d, m, t in groups]


FIGURE_KINDS = ["radar_agreement", "radar_calibration", "interpersona_kappa", "confidence_by_grade"]


def figure_path(kind, ext="png"):
    return f"{RESULTS}/figures/{kind}/{{dataset}}/{{model}}/{{template}}.{ext}"


def analysis_targets():
    targets = [f"{RESULTS}/metrics/significance.tsv", f"{RESULTS}/metrics/metrics_significance.tsv",
               f"{RESULTS}/metrics/metrics_significance.html"]
    for kind in FIGURE_KINDS:
        for ext in ("png", "pdf"):
            targets += expand_groups(figure_path(kind, ext), GROUPS)
    if classifier_groups():
        targets += [f"{RESULTS}/classifier/table5.{ext}" for ext in ("tsv", "md", "tex", "html")]
    return targets


IMPORTED_MODEL_RE = "|".join(re.escape(n) for n in IMPORTED) or "(?!x)x"  # (?!x)x: matches nothing


def imported_file(wildcards):
    return IMPORTED[wildcards.model].file(wildcards.dataset, wildcards.template, wildcards.persona)


def figure_significance(wildcards):
    if group_key(wildcards) in significance_groups():
        return group_path("significance").format(dataset=wildcards.dataset, model=wildcards.model,
                                                 template=wildcards.template)
    return []


def figure_report(kind, category, caption):
    return report(figure_path(kind), category=category, subcategory="{dataset} / {model}",
                  caption=f"../report/{caption}.rst",
                  labels={"dataset": "{dataset}", "model": "{model}", "template": "{template}"})


def classifier_settings():
    keys = ("trials", "train_fraction", "seed", "models")
    defaults = {"trials": 50, "train_fraction": 0.1, "seed": 42, "models": None}
    # not sort_keys: the order of `models` is the column order of the table
    return json.dumps({k: CLF.get(k, defaults[k]) for k in keys})
