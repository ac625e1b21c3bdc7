# Helpers of the ranking rules. Every answer comes from the study's plan
# (judgelab.studies.ranking.Plan): its datasets and runs, judges, qrels, measures and paths.
RANKING = PROJECT.plan("ranking")

RANKING_SYSTEMS_RE = names_re(RANKING.datasets_of("systems"))
RANKING_DOWNLOAD_RE = names_re(RANKING.datasets_of("download"))
RANKING_LIVE_RE = names_re(RANKING.judges)
RANKING_IMPORTED_RE = names_re(RANKING.imported)
RANKING_COMMITTEE_RE = names_re(RANKING.committees)
# the repeated live judges (peras.repeats above 1) by how they read the label: asked, or drawn
RANKING_PARSE_RE = names_re([m for m in RANKING.repeated if RANKING.answer(m) == "parse"])
RANKING_LOGITS_RE = names_re([m for m in RANKING.repeated if RANKING.answer(m) == "logits"])


def ranking_runs(wildcards):
    """The run files of the wildcards' dataset, in the order of their names."""
    return list(RANKING.run_files(wildcards.dataset).values())


def ranking_report(output, caption, category="Ranking agreement"):
    """A file of the report page, with its caption (workflow/report/ranking/<caption>.rst)."""
    return report(output, caption=f"../../report/ranking/{caption}.rst", category=category)


def ranking_figure(kind, caption):
    """The PNG of one figure in the report, labelled by dataset, judge and measure."""
    return report(
        path("ranking_figure", kind=kind, ext="png"),
        caption=f"../../report/ranking/{caption}.rst",
        category="Ranking agreement - figures",
        subcategory="{dataset} / {judge}",
        labels={"dataset": "{dataset}", "judge": "{judge}", "measure": "{measure}", "figure": kind},
    )
