"""The prompt-sensitivity study's result paths under ``{results}``, each named once (the plan's
``paths``; every rule and job asks :meth:`judgelab.wiring.facade.Project.path` for them)."""

from __future__ import annotations

PATHS = {
    # a published file at its path in the source repository (prompts.json, data/pairwise/...,
    # Judgements/<model>/<type>/...)
    "sensitivity_published": "{results}/sensitivity/published/{file}",
    # the pairs a live judge compares on a dataset (the authors' pair list, or formed from its grades)
    "sensitivity_pairs": "{results}/sensitivity/pairs/{dataset}.tsv",
    # a live judge's answers with one prompt's template of one type (pairwise: both orders of each pair)
    "sensitivity_judgments": "{results}/sensitivity/judgments/{dataset}/{model}/{prompt}/{type}.tsv",
    "sensitivity_agreement": "{results}/sensitivity/tables/agreement.{ext}",
    "sensitivity_spread": "{results}/sensitivity/tables/spread.{ext}",
    "sensitivity_groups": "{results}/sensitivity/tables/groups.{ext}",
    # beyond the paper: each prompt's labels as qrels for the dataset's runs, tau against the
    # human order (sensitivity.rankings), and its range over prompts per judge
    "sensitivity_rankings": "{results}/sensitivity/tables/rankings.{ext}",
    "sensitivity_rankings_spread": "{results}/sensitivity/tables/rankings_spread.{ext}",
    "sensitivity_figure": "{results}/sensitivity/figures/agreement.{ext}",
}

#: the renderings of every table (:data:`judgelab.analysis.render.TABLE_FORMATS`)
TABLES = ("tsv", "md", "tex", "html")
FIGURES = ("png", "pdf")
