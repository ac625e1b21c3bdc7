# Helpers of the PERAS rules: the persona groups of a dataset x model x template, their files,
# and the figure outputs. Every answer comes from the study's plan (judgelab.studies.peras.Plan).
PERAS = PROJECT.plan("peras")


def group_personas(wildcards):
    return PERAS.groups[(wildcards.dataset, wildcards.model, wildcards.template)]


def group_param(wildcards):
    """The group of the wildcards (dataset x model x template and its personas) as a param."""
    return PERAS.group(wildcards.dataset, wildcards.model, wildcards.template).param()


def group_files(stage):
    """Input function: the stage's file of every persona of the wildcards' group."""

    def files(wildcards):
        return [
            path(
                stage,
                dataset=wildcards.dataset,
                model=wildcards.model,
                template=wildcards.template,
                persona=p,
            )
            for p in group_personas(wildcards)
        ]

    return files


def metric_files(stage):
    """Input function: the stage's file of every persona of the wildcards' metric group (a
    majority judge's: its majority tables, no confidence)."""

    def files(wildcards):
        return PERAS.metric_inputs(stage, wildcards.dataset, wildcards.model, wildcards.template)

    return files


def expand_groups(name, groups, **fields):
    return [path(name, dataset=d, model=m, template=t, **fields) for d, m, t in groups]


def group_ids(wildcards):
    return {"dataset": wildcards.dataset, "model": wildcards.model, "template": wildcards.template}


LIVE_JUDGES_RE = names_re(PERAS.judges)
IMPORTED_JUDGES_RE = names_re(PROJECT.imported)
# the personas of the imported judges' files (a persona committee's table is not one)
IMPORTED_PERSONAS_RE = names_re(dict.fromkeys(p for j in PROJECT.imported.values() for p in j.personas))
JUDGE_COMMITTEES_RE = names_re(PERAS.judge_committees)
PERSONA_COMMITTEES_RE = names_re(PERAS.persona_committees)


def committee_inputs(wildcards):
    """The members' judgment tables of a committee's table (peras.committees)."""
    return PERAS.committee_inputs(wildcards.dataset, wildcards.model, wildcards.template, wildcards.persona)


def committee_param(wildcards):
    return PERAS.committee_of(wildcards.model, wildcards.persona).param()


def classifier_group_param(wildcards):
    """The classifier's group: the wildcards' personas without the persona committees."""
    return PERAS.classifier_group(wildcards.dataset, wildcards.model, wildcards.template).param()


def classifier_files(stage):
    """Input function: the stage's file of every persona of the classifier's group."""

    def files(wildcards):
        group = PERAS.classifier_group(wildcards.dataset, wildcards.model, wildcards.template)
        return [path(stage, **group.ids, persona=p) for p in group.personas]

    return files


def figure_significance(wildcards):
    key = (wildcards.dataset, wildcards.model, wildcards.template)
    return path("group_significance", **group_ids(wildcards)) if key in PERAS.significance_groups() else []


def figure(kind, ext="png"):
    return path("figure", kind=kind, ext=ext)


def figure_report(kind, category, caption):
    return report(
        figure(kind),
        category=category,
        subcategory="{dataset} / {model}",
        caption=f"../../report/peras/{caption}.rst",
        labels={"dataset": "{dataset}", "model": "{model}", "template": "{template}"},
    )


def peras_table(table, caption):
    """The tsv, md, tex and html files of one of the PERAS paper's tables (the html in the report)."""
    out = {ext: path("peras_table", table=table, ext=ext) for ext in ("tsv", "md", "tex", "html")}
    out["html"] = report(out["html"], caption=f"../../report/peras/{caption}.rst", category="Tables")
    return out
